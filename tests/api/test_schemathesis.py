"""schemathesis against the live test server, on every operation of /api/schema/: no server
error, every response matches its documented schema, every status code is documented.

Runs the schemathesis CLI (a subprocess) against pytest-django's live server, with a fixed
seed and at least 50 generated cases per operation. It takes a few minutes on two cores, so it
is marked `schemathesis` (skip with `-m "not schemathesis"`) and kept on one xdist worker.
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.comparisons.spec import parse_spec
from benchmarks.services.comparisons import comparison_create
from benchmarks.services.tokens import token_create
from discussions import services as discussions
from tests.factories import make_run
from traces.services import trace_ingest

pytestmark = [
    pytest.mark.schemathesis,
    pytest.mark.slow,
    pytest.mark.xdist_group("schemathesis"),
    pytest.mark.django_db(transaction=True),
]
SEED = 20261130
EXAMPLES_PER_OPERATION = 50
CHECKS = "not_a_server_error,status_code_conformance,response_schema_conformance"


def schemathesis_command(url: str, token: str) -> list[str]:
    return [
        sys.executable, "-m", "schemathesis.cli", "run", f"{url}/api/schema/",
        "--header", f"Authorization: Token {token}",
        "--checks", CHECKS,
        "--max-examples", str(EXAMPLES_PER_OPERATION),
        "--seed", str(SEED),
        "--phases", "examples,coverage,fuzzing",
        # One worker: hypothesis describes strategies with ast.parse, which CPython 3.11 can
        # fail on when two threads do it at once ("AST constructor recursion depth mismatch").
        "--workers", "1",
        "--no-shrink",
        "--request-timeout", "60",
    ]


@pytest.fixture
def some_data(django_user_model):
    """Something for the read operations to find: runs, a frozen comparison, a thread."""
    user = django_user_model.objects.create_user("schemathesis")
    for kernel, base in (("2.6.22", 3300.0), ("2.6.24", 8900.0)):
        for loops in (1_000_000, 10_000_000):
            make_run(kernel, [base * loops / 1e6 + i for i in range(3)],
                     params={"loops": loops, "iterations": 500},
                     tunables={"sched_compat_yield": 0})
    comparison_create(spec=parse_spec({"filters": {"benchmark": "threadtest"},
                                       "x": "param.loops", "series": "kernel"}), author=user)
    discussions.thread_create(user=user, subject="threadtest on 2.6.24", body="numbers",
                              source="api")
    trace = Path(__file__).resolve().parent.parent / "fixtures" / "traces" / "edge_cases.trace"
    with trace.open("rb") as stream:  # so the trace read operations find one
        trace_ingest(stream=stream, filename=trace.name, owner=user)
    return user


def test_schemathesis_finds_nothing(live_server, some_data, settings, tmp_path):
    settings.DISCUSSIONS_POSTS_PER_HOUR = 1_000_000  # the fuzzer posts far faster than people
    settings.IMPORT_WAIT_SECONDS = 0  # no worker here: an import answers 202 at once
    _, token = token_create(user=some_data, name="schemathesis")
    # In a fresh directory: schemathesis keeps a cache of past failures (.schemathesis/) in its
    # working directory and would replay them, so the run would depend on earlier runs.
    result = subprocess.run(schemathesis_command(live_server.url, token), capture_output=True,
                            text=True, timeout=900, cwd=tmp_path)
    report = result.stdout + result.stderr
    assert result.returncode == 0, report[-12000:]
    selected = re.search(r"Operations:\s+(\d+) selected / (\d+) total", report)
    tested = re.search(r"Tested:\s+(\d+)", report)
    cases = re.search(r"(\d+) generated, (\d+) passed", report)
    assert selected and tested and cases, report[-4000:]
    operations = int(selected.group(2))
    assert operations >= 25 and int(selected.group(1)) == operations == int(tested.group(1))
    generated, passed = int(cases.group(1)), int(cases.group(2))
    assert generated == passed >= EXAMPLES_PER_OPERATION * operations, report[-4000:]
    print(f"schemathesis: {operations} operations, {generated} cases, {passed} passed")
