"""Site search: the core's own groups plus those features register (see sources.py)."""
