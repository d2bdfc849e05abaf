"""Trace uploads go through jobs (traces.jobs): small ones are ingested in the request, big
ones by a worker. Tests that queue one turn eager tasks on or start a real worker."""

import pytest


@pytest.fixture(autouse=True)
def _ingest_in_the_request(settings):
    """The fixtures here (up to a few MB) are ingested in the request, as small uploads are;
    test_background_ingest.py lowers the limit to send them to a real worker."""
    settings.TRACE_INLINE_KB = 64 * 1024
