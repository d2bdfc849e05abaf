"""vmstat parsing, the /proc fallback sampler, and the real vmstat sampler."""

import copy
import shutil
import time

import pytest

VMSTAT = """\
procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu-----
 r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st
 1  0      0 23748032  10988 660900    0    0  1753  2708  467 1148 12  5 82  1  0
 2  0      0 23748000  10988 660900    0    0     4     0  147  247  0  1 99  0  0
procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu-----
 r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st
287  0      0 23747000  10988 660900    0    0     0   256 1150 998238 61 39  0  0  0
 1  0      0
"""


def test_parse_vmstat_skips_banners_and_repeated_headers(sb):
    series = sb.parse_vmstat(VMSTAT)
    assert series["columns"] == sb.VMSTAT_COLUMNS
    assert len(series["rows"]) == 3  # the truncated last line is dropped
    assert series["rows"][2][:2] == [287, 0]
    assert series["rows"][2][11] == 998238
    assert all(isinstance(v, int) for row in series["rows"] for v in row)


def test_parse_vmstat_skip_first_drops_since_boot_row(sb):
    series = sb.parse_vmstat(VMSTAT, skip_first=True)
    assert series["rows"][0][0] == 2


def test_parse_vmstat_without_header_has_no_rows(sb):
    # Rows with no header cannot be named; better nothing than wrong columns.
    assert sb.parse_vmstat(" 1 0 0 5\n") == {"columns": [], "rows": []}


def test_vmstat_row_from_proc_snapshots(sb, oldbox):
    before = sb.read_proc_snapshot(oldbox)
    after = copy.deepcopy(before)
    after["time"] = before["time"] + 2.0
    after["ctxt"] += 2000
    after["intr"] += 400
    after["pgpgout"] += 100
    after["pswpin"] += 2
    after["cpu"] = [c + d for c, d in zip(before["cpu"], [60, 0, 20, 20, 0, 0, 0, 0], strict=True)]
    row = dict(zip(sb.VMSTAT_COLUMNS, sb.vmstat_row(before, after, page_kb=4), strict=True))
    assert row["r"] == 3 and row["b"] == 1
    assert row["cs"] == 1000 and row["in"] == 200 and row["bo"] == 50
    assert row["si"] == 4  # 2 pages of 4 kB over 2 s
    assert (row["us"], row["sy"], row["id"], row["wa"], row["st"]) == (60, 20, 20, 0, 0)
    assert row["swpd"] == 1024 and row["free"] == 1024000 and row["cache"] == 522240


def test_proc_sampler_on_fake_tree(sb, oldbox):
    sampler = sb.ProcStatSampler(0.02, root=oldbox).start()
    time.sleep(0.15)
    series = sampler.stop()
    assert series["columns"] == sb.VMSTAT_COLUMNS
    assert len(series["rows"]) >= 2
    assert all(len(row) == len(sb.VMSTAT_COLUMNS) for row in series["rows"])


def test_start_sampler_falls_back_when_vmstat_missing(sb, oldbox):
    sampler = sb.start_sampler(0.02, root="/", vmstat="no-such-vmstat-binary")
    time.sleep(0.1)
    assert isinstance(sampler, sb.ProcStatSampler)
    assert sampler.stop()["rows"]


@pytest.mark.skipif(shutil.which("vmstat") is None, reason="vmstat not installed")
def test_real_vmstat_sampler(sb):
    sampler = sb.start_sampler(1)
    assert isinstance(sampler, sb.VmstatSampler)
    time.sleep(1.3)
    series = sampler.stop()
    assert series["columns"][:2] == ["r", "b"]
    assert len(series["rows"]) == 1  # since-boot row dropped, one real sample
    assert sampler.proc.poll() is not None


def test_series_from(sb):
    assert sb.series_from({"columns": ["r"], "rows": []}) == {}
    assert sb.series_from({"columns": ["r"], "rows": [[1]]}) == {
        "vmstat": {"columns": ["r"], "rows": [[1]]}}
