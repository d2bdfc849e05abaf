"""The package's one exception type (plain Python: no Django, no DRF)."""


class TraceError(ValueError):
    """A trace that cannot be read. `line` is the 1-based line of the input that is to blame
    (None when the problem is not tied to one line, e.g. an unknown compression)."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(f"line {line}: {message}" if line else message)
        self.message = message
        self.line = line


class RefusedValue(TraceError):
    """A value the kernel never writes or storage cannot hold (open_events' max_ts and
    refuse_nul): the line reads, but the trace is refused."""
