"""The README's curl examples, run as written (real curl, a shell, the README's own variables)
against the live test server: each answers success and stores what it says it does."""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from benchmarks.models import Run
from simulations.models import SimulationJob
from traces.models import Trace

pytestmark = pytest.mark.django_db(transaction=True)

README = Path(__file__).resolve().parent.parent / "README.md"
# The file the README's trace example sends: a trace recorded on a real machine.
RECORDED_TRACE = Path(__file__).resolve().parent / "fixtures/traces/ftrace_threadtest.trace.gz"
# A ```sh block, possibly indented (inside a list item).
BLOCK_RE = re.compile(r"^( *)```sh\n(.*?)^\1```", re.S | re.M)


def readme_curl_examples() -> list[str]:
    """Every shell block of the README that calls curl, with its indentation removed."""
    blocks = []
    for indent, body in BLOCK_RE.findall(README.read_text()):
        text = "\n".join(line[len(indent):] for line in body.splitlines())
        if "curl " in text:
            blocks.append(text)
    return blocks


def run_example(script: str, *, url: str, token: str, cwd: Path) -> str:
    env = {**os.environ, "SCHEDBENCH_URL": url, "SCHEDBENCH_TOKEN": token}
    # -f: an HTTP error fails the command; -sS: quiet, but say why it failed.
    script = script.replace("curl ", "curl -fsS ")
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"{script}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_the_readme_names_the_demo_machine_and_gives_every_example():
    examples = readme_curl_examples()
    text = "\n".join(examples)
    assert "/api/v1/uploads/" in text and "-F kernel=" in text
    assert "/api/v1/runs/" in text and "/api/v1/simulations/" in text
    assert "/api/v1/traces/" in text
    assert "core2-laptop" not in README.read_text()  # the demo's machine is core2-duo-laptop


def test_the_readme_curl_examples_work(live_server, api_user, tmp_path, celery_queue):
    from benchmarks.services.tokens import token_create

    _, token = token_create(user=api_user, name="readme")
    shutil.copy(RECORDED_TRACE, tmp_path / "trace.txt.gz")
    outputs = [run_example(script, url=live_server.url, token=token, cwd=tmp_path)
               for script in readme_curl_examples()]
    assert len(outputs) == 4
    assert Trace.objects.get().events > 0

    uploaded = Run.objects.get(kernel__version="2.6.24", params={})
    assert uploaded.machine.name == "core2-duo-laptop"
    assert sorted(uploaded.samples.values_list("value", flat=True)) == [5187, 5210, 5302]
    posted = Run.objects.get(params={"loops": 1000000, "iterations": 500})
    assert posted.machine.name == "core2-duo-laptop"
    assert f'"id":{posted.pk}' in outputs[1].replace(" ", "")
    # The same idempotency key again: the same run, not a second one.
    run_example(readme_curl_examples()[1], url=live_server.url, token=token, cwd=tmp_path)
    assert Run.objects.filter(params={"loops": 1000000, "iterations": 500}).count() == 1
    job = SimulationJob.objects.get()
    assert job.spec["sweep"] == {"loops": [1000000, 10000000, 40000000]}
    assert job.total == 6
