"""Mailing-list-style discussions: threads on runs, comparisons and simulations, mbox import."""
