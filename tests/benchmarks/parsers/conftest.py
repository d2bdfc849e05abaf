"""The parsers are pure Python: these tests must run without Django (`-p no:django`)."""

import pytest


@pytest.fixture(autouse=True)
def _media_in_tmp():
    """Overrides the project-wide autouse fixture, which needs Django's `settings` fixture;
    nothing here touches media."""
    yield
