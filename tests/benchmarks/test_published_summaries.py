"""Published summaries through uploads (dry run and commit), the run JSON, comparisons and
verdicts: mmtests columns and robot report columns, stored as summaries, never as samples."""

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from benchmarks.models import Artifact, PublishedSummary, Run, Sample

pytestmark = pytest.mark.django_db
WRITTEN = Path(__file__).resolve().parent.parent / "fixtures" / "written"


def upload(client, name: str, **fields):
    data = {"file": SimpleUploadedFile(Path(name).name, (WRITTEN / name).read_bytes()),
            **fields}
    return client.post("/api/v1/uploads/", data)


def by_setup(runs: list[dict]) -> dict:
    return {(r["kernel"], r["label"], tuple(sorted(r["params"].items()))): r for r in runs}


@pytest.mark.parametrize("name", ["mmtests/hackbench_two_configs.txt",
                                  "mmtests/hackbench_quoted.txt"])
def test_mmtests_upload_dry_run_then_commit(api_client, name):
    preview = upload(api_client, name, dry_run="true")
    assert preview.status_code == 200, preview.content
    assert Artifact.objects.count() == 0 and Run.objects.count() == 0
    runs = by_setup(preview.json()["runs"])
    fix4 = runs[("6.1.0", "fix-v2r1", (("groups", 4),))]
    assert fix4["metrics"]["time_s.amean"] == {
        "unit": "s", "n": 0, "values": [],
        "summary": {"statistic": "amean", "value": 0.625, "stddev_pct": 0.61, "n": None,
                    "significant": True}}
    committed = upload(api_client, name, machine="numa-box")
    assert committed.status_code == 201, committed.content
    body = by_setup(committed.json()["runs"])
    run_id = body[("6.1.0", "fix-v2r1", (("groups", 4),))]["id"]
    detail = api_client.get(f"/api/v1/runs/{run_id}/").json()
    assert detail["label"] == "fix-v2r1" and detail["kernel"] == "6.1.0"
    assert detail["metrics"]["time_s.amean"]["values"] == []
    assert detail["metrics"]["time_s.amean"]["summary"]["value"] == 0.625
    assert detail["metrics"]["time_s.min"]["summary"]["statistic"] == "min"
    # summaries only: no sample rows for them; the Duration block's measurements are samples
    assert not Sample.objects.filter(run_id=run_id).exists()
    assert Sample.objects.filter(metric__name="duration_user_s").count() == 2
    # the same kernel with two configs: two runs per parameter, never one
    assert len({r["id"] for r in body.values()}) == 10
    assert PublishedSummary.objects.filter(run__label="vanilla").count() == \
        PublishedSummary.objects.filter(run__label="fix-v2r1").count() > 0


def test_mmtests_upload_refused_with_the_line_and_nothing_stored(api_client):
    response = upload(api_client, "mmtests/bad_change.txt")
    assert response.status_code == 400
    assert response.json()["line"] == 5
    assert Artifact.objects.count() == 0 and Run.objects.count() == 0


@pytest.mark.parametrize("name", ["robot/hackbench_report.txt",
                                  "robot/hackbench_report_latin1.txt",
                                  "robot/hackbench_report_qp.txt",
                                  "robot/hackbench_report_quoted.txt"])
def test_robot_report_upload(api_client, name):
    preview = upload(api_client, name, dry_run="true")
    assert preview.status_code == 200, preview.content
    committed = upload(api_client, name)
    assert committed.status_code == 201, committed.content
    runs = {(r["benchmark"], r["kernel"]): r for r in committed.json()["runs"]}
    tested = runs[("hackbench", "9f8e7d6c5b")]
    assert tested["commit"] == {"id": "9f8e7d6c5b",
                                "subject": "sched/fair: Rework wakeup preemption"}
    detail = api_client.get(f"/api/v1/runs/{tested['id']}/").json()
    assert detail["commit"]["subject"] == "sched/fair: Rework wakeup preemption"
    assert detail["machine"]["name"] == "lkp-skl-fpga01" and detail["machine"]["sockets"] == 2
    assert detail["params"]["mode"] == "process"
    summary = detail["metrics"]["hackbench.throughput"]["summary"]
    assert summary == {"statistic": "mean", "value": 117154.0, "stddev_pct": None, "n": 6,
                       "significant": None}
    base = api_client.get(f"/api/v1/runs/{runs[('hackbench', '5a1b2c3d4e')]['id']}/").json()
    assert base["metrics"]["hackbench.throughput"]["summary"]["stddev_pct"] == 2.0
    assert any("0-day" in link or "0day" in link
               for link in base["environment"]["report"]["links"])
    assert not Sample.objects.exists()


def test_the_same_report_twice_is_stored_once(api_client):
    first = upload(api_client, "robot/hackbench_report.txt").json()
    again = upload(api_client, "robot/hackbench_report_latin1.txt").json()
    assert [r["id"] for r in first["runs"]] == [r["id"] for r in again["runs"]]
    assert Run.objects.count() == 4


def _compare(client, runs: list[int], metric: str, **spec) -> dict:
    created = client.post("/api/v1/comparisons/", {"title": "published", "runs": runs,
                                                   "metric": metric, **spec},
                          content_type="application/json")
    assert created.status_code == 201, created.content
    slug = created.json()["slug"]
    return {"json": client.get(f"/c/{slug}.json").json(),
            "text": client.get(f"/c/{slug}.txt").content.decode(),
            "page": client.get(f"/c/{slug}/").content.decode()}


def test_two_mmtests_columns_compare_as_summary_cells(api_client):
    body = upload(api_client, "mmtests/hackbench_two_configs.txt").json()
    ids = [r["id"] for r in body["runs"] if r["params"] == {"groups": 4}]
    result = _compare(api_client, ids, "time_s.amean", x="label",
                      baseline={"dim": "label", "value": "vanilla"})
    cells = {c["x"]: c for c in result["json"]["cells"]}
    assert set(cells) == {"vanilla", "fix-v2r1"}
    fix = cells["fix-v2r1"]
    assert fix["summary"] is True and fix["value"] == 0.625 and fix["n"] is None
    assert fix["published"]["significant"] is True
    assert fix["p_value"] is None and fix["test"] is None  # no n: no test, never a rank test
    assert round(fix["normalized"], 4) == round(0.625 / 0.6403, 4)
    assert any("summary only" in reason for reason in result["json"]["summary"]["tests"])
    assert "[amean, summary]" in result["text"]
    assert "summary only: a published amean, no samples" in result["page"]


def test_mmtests_configs_of_one_kernel_never_pool(api_client):
    body = upload(api_client, "mmtests/hackbench_two_configs.txt").json()
    ids = [r["id"] for r in body["runs"] if r["params"] == {"groups": 4}]
    response = api_client.post("/api/v1/comparisons/", {"runs": ids, "metric": "time_s.amean",
                                                        "x": "kernel"},
                               content_type="application/json")
    assert response.status_code == 400
    assert "cannot be pooled" in response.json()["error"]


def test_robot_means_with_spread_and_n_get_welch(api_client):
    body = upload(api_client, "robot/hackbench_report.txt").json()
    ids = [r["id"] for r in body["runs"] if r["benchmark"] == "hackbench"]
    result = _compare(api_client, ids, "hackbench.time.voluntary_context_switches",
                      x="kernel", baseline={"dim": "kernel", "value": "5a1b2c3d4e"})
    tested = next(c for c in result["json"]["cells"] if c["x"] == "9f8e7d6c5b")
    assert tested["summary"] is True and tested["n"] == 6
    assert tested["test"] == "welch-t (from summaries)"
    from scipy import stats
    expected = stats.ttest_ind_from_stats(1.109e8, 1.109e8 * 0.04, 6,
                                          98765432, 98765432 * 0.03, 6, equal_var=False)
    assert tested["p_value"] == pytest.approx(expected.pvalue)
    # the throughput's tested side has no published spread: no test
    result = _compare(api_client, ids, "hackbench.throughput", x="kernel",
                      baseline={"dim": "kernel", "value": "5a1b2c3d4e"})
    tested = next(c for c in result["json"]["cells"] if c["x"] == "9f8e7d6c5b")
    assert tested["p_value"] is None and tested["test"] is None


def test_upload_verdicts_say_summary_only_where_no_test_is_possible(api_client):
    body = upload(api_client, "mmtests/hackbench_two_configs.txt").json()
    fix4 = next(r["id"] for r in body["runs"]
                if r["label"] == "fix-v2r1" and r["params"] == {"groups": 4})
    verdict = next(v for v in body["verdicts"]
                   if v["run"] == fix4 and v["metric"] == "time_s.amean")
    assert verdict["summary"] is True and verdict["regression"] is None
    assert verdict["test"].startswith("summary only, no test")
    assert verdict["against"] == "6.1.0" and verdict["against_label"] == "vanilla"
    assert verdict["change"] == pytest.approx(0.625 / 0.6403)


def test_upload_verdicts_test_robot_means_with_spread(api_client):
    body = upload(api_client, "robot/hackbench_report.txt").json()
    by_metric = {v["metric"]: v for v in body["verdicts"] if v.get("summary")}
    switches = by_metric["hackbench.time.voluntary_context_switches"]
    assert switches["test"] == "welch-t (from summaries)" and switches["p_value"] is not None
    assert switches["against"] == "5a1b2c3d4e"
    throughput = by_metric["hackbench.throughput"]
    assert throughput["regression"] is None and throughput["p_value"] is None
    assert throughput["change"] == pytest.approx(117154 / 123456)
