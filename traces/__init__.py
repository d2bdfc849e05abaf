"""Scheduler traces beside benchmark results: ingest (schedtrace parses, stats and a timeline
mipmap are computed in one streaming pass), the trace API and the trace pages."""
