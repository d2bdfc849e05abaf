"""Small typed readers for the environment, used once by settings.

Each helper fails loudly with ImproperlyConfigured naming the variable, so a typo in a deployment
shows up at start-up instead of as odd behaviour later.
"""

import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str | None = None) -> str | None:
    return os.environ.get(name, default)


def env_required(name: str) -> str:
    value = os.environ.get(name, "").strip()
    if not value:
        raise ImproperlyConfigured(f"{name} must be set (it is required unless DEBUG is on)")
    return value


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    lowered = raw.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use 1/0, true/false, yes/no)")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={value} is below the minimum {minimum}")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return list(default)
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_path(name: str, default: Path) -> Path:
    raw = os.environ.get(name, "").strip()
    return Path(raw).expanduser().resolve() if raw else default


def database_from_url(name: str, url: str) -> dict:
    """Parse a DATABASE_URL; an unknown scheme or a malformed URL names the variable."""
    import dj_database_url

    try:
        config = dj_database_url.parse(url, conn_max_age=60, conn_health_checks=True)
    except Exception as exc:  # dj_database_url raises a bare ValueError/KeyError mix
        raise ImproperlyConfigured(f"{name}={url!r} is not a usable database URL: {exc}") from None
    if not config.get("ENGINE"):
        raise ImproperlyConfigured(f"{name}={url!r} names no known database engine")
    return config


def env_header(name: str) -> tuple[str, str] | None:
    """`HEADER=value` (e.g. `X-Forwarded-Proto=https`) as Django's (META key, value) pair."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    header, sep, value = raw.partition("=")
    if not sep or not header.strip() or not value.strip():
        raise ImproperlyConfigured(f"{name}={raw!r} is not HEADER=value "
                                   "(e.g. X-Forwarded-Proto=https)")
    key = header.strip().upper().replace("-", "_")
    return (key if key.startswith("HTTP_") else f"HTTP_{key}", value.strip())
