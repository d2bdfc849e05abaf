"""Comparisons: put runs side by side along chosen dimensions, with statistics, frozen by slug."""
