"""A whole-system tracefs recording of threadtest and threadtest_burn on the development VM that
lost switch-ins (CPU 1 recorded none of its 780 switch-ins from idle) through the real ingest
path: POST /api/v1/traces/, then GET. The figures it must agree with were counted by count.awk
beside the trace, without schedtrace (expected.json)."""

import json
from collections import defaultdict
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

pytestmark = [pytest.mark.django_db, pytest.mark.slow]
HERE = Path(__file__).resolve().parent.parent / "fixtures" / "traces" / "lost_switch_ins"
EXPECTED = json.loads((HERE / "expected.json").read_text())


def test_recorded_trace_with_lost_switch_ins_reads_right(api_client, client):
    """One upload (half a million events take seconds to ingest), three readings of it."""
    name = EXPECTED["file"]
    response = api_client.post("/api/v1/traces/", {
        "file": SimpleUploadedFile(name, (HERE / name).read_bytes())}, format="multipart")
    assert response.status_code == 201, response.content
    created = response.json()
    detail = client.get(f"/api/v1/traces/{created['id']}/").json()
    page = client.get(f"/traces/{created['id']}/").content.decode()
    warnings_say_how_many_switch_ins_were_inferred(created, detail, page)
    switches_are_recorded_plus_inferred_switch_ins_per_task(detail)
    runtimes_lie_between_the_independent_bounds(detail)


def per_pid(tasks):
    rows = defaultdict(lambda: [0, 0.0])
    for task in tasks:
        rows[task["pid"]][0] += task["switches"]
        rows[task["pid"]][1] += task["runtime_ms"]
    return rows


def warnings_say_how_many_switch_ins_were_inferred(created, detail, page):
    lost = EXPECTED["lost_switch_ins"]
    said = f"{lost} switch-ins were missing from the trace and were inferred"
    assert any(w.startswith(said) for w in created["warnings"])
    assert detail["warnings"] == created["warnings"]
    assert detail["inferred_switch_ins"] == lost
    assert created["events"] == EXPECTED["lines"]  # no line skipped, none lost
    assert said in page and f'id="inferred-switch-ins">{lost}<' in page


def switches_are_recorded_plus_inferred_switch_ins_per_task(detail):
    counted = EXPECTED["counted"]["tasks"]
    got = per_pid(detail["tasks"])
    for pid, (_, _, into, lost, _, _) in counted.items():
        assert got[int(pid)][0] == into + lost, pid
    for name in ("threadtest", "threadtest_burn"):  # born and gone inside the trace
        pids = [int(pid) for pid, row in counted.items() if row[0] == name]
        assert len(pids) == EXPECTED[name]["tasks"]
        assert sum(got[pid][0] for pid in pids) == EXPECTED[name]["switch_outs"]


def runtimes_lie_between_the_independent_bounds(detail):
    got = per_pid(detail["tasks"])
    for pid, (_, _, _, _, low_us, high_us) in EXPECTED["counted"]["tasks"].items():
        runtime_us = got[int(pid)][1] * 1000
        assert low_us - 1e-6 <= runtime_us <= high_us + 1e-6, pid
    busy = sum(cpu["busy_ms"] for cpu in detail["cpu_stats"])
    assert busy == pytest.approx(sum(row[1] for row in got.values()), abs=1e-6)
