"""What names a run: kernel versions in natural order and the comparison vocabulary."""
