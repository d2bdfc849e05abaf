"""Bisection sessions: drive `git bisect` between a good and a bad kernel with benchmark runs."""
