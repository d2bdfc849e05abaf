"""Values a kernel never writes and storage cannot hold are refused with their line, not a 500."""

import re
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from benchmarks.models import Artifact
from traces.models import Trace

pytestmark = pytest.mark.django_db
BURN = (Path(__file__).resolve().parent.parent / "fixtures/traces/ftrace_burn.trace").read_bytes()
LINES = BURN.split(b"\n")
FIRST_SWITCH = next(i for i, line in enumerate(LINES) if b": sched_switch:" in line)


def with_line(number: int, line: bytes) -> bytes:
    return b"\n".join([*LINES[:number], line, *LINES[number + 1:]])


def refused(api_client, content: bytes, line: int) -> str:
    response = api_client.post("/api/v1/traces/",
                               {"file": SimpleUploadedFile("t.trace", content)})
    assert response.status_code == 400, response.content
    body = response.json()
    assert (body["field"], body["line"]) == ("file", line)
    assert not Trace.objects.exists() and not Artifact.objects.exists()
    return body["error"]


@pytest.mark.parametrize("field", [b"next_comm=", b"prev_comm="])
def test_a_nul_in_a_switched_task_name(api_client, field):
    line = LINES[FIRST_SWITCH].replace(field, field + b"a\x00b", 1)
    assert "NUL" in refused(api_client, with_line(FIRST_SWITCH, line), FIRST_SWITCH + 1)


def test_a_nul_in_the_line_prefix_task_name(api_client):
    line = LINES[FIRST_SWITCH].replace(b"rec.sh-", b"rec\x00sh-", 1)
    assert "NUL" in refused(api_client, with_line(FIRST_SWITCH, line), FIRST_SWITCH + 1)


@pytest.mark.parametrize("digits", [20, 400])
def test_a_timestamp_beyond_64_bit_nanoseconds(api_client, digits):
    line = re.sub(rb" \d+\.(\d+): ", b" " + b"9" * digits + rb".\1: ", LINES[FIRST_SWITCH])
    assert "out of range" in refused(api_client, with_line(FIRST_SWITCH, line), FIRST_SWITCH + 1)


def test_a_number_too_long_for_python_to_read(api_client):
    line = re.sub(rb" \d+\.(\d+): ", b" " + b"9" * 5000 + rb".\1: ", LINES[FIRST_SWITCH])
    assert "too long" in refused(api_client, with_line(FIRST_SWITCH, line), FIRST_SWITCH + 1)
    pid = LINES[FIRST_SWITCH].replace(b"prev_pid=13480", b"prev_pid=" + b"1" * 5000)
    assert "too long" in refused(api_client, with_line(FIRST_SWITCH, pid), FIRST_SWITCH + 1)
