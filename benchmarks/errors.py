"""The one input-error type. Services raise it (or a subclass); the API's exception handler
turns it into `{"error", "field", "line"}` with its status (400, 413 or 429).

Plain Python on purpose: parsers and services import it without pulling in DRF.
"""


class InputError(ValueError):
    """Input that cannot be accepted. `field` names the request key to blame, `line` the
    1-based line of an uploaded file or NDJSON body; `extra` adds keys to the JSON answer."""

    status = 400

    def __init__(self, message: str, *, field: str | None = None, line: int | None = None,
                 status: int | None = None, **extra):
        super().__init__(message)
        self.message = message
        self.field = field
        self.line = line
        self.extra = extra
        if status is not None:
            self.status = status

    def as_body(self) -> dict:
        body = {"error": self.message, "field": self.field, "line": self.line}
        body.update({key: value for key, value in self.extra.items() if key not in body})
        return body


class TooLarge(InputError):
    """The request or file is over the configured size limit."""

    status = 413


class RateLimited(InputError):
    """Too many writes in a short time; the message says when to try again."""

    status = 429
