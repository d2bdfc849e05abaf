"""Issue 15, "looks broken or confuses": charts that do not lie or clip, environments as tables,
a folded "what else differs", a builder default that follows what the runs vary in, and
"every filter on any" meaning every run."""

import pytest

from benchmarks.comparisons.compute import compute
from benchmarks.comparisons.dimensions import UNSET, suggest_layout
from benchmarks.comparisons.spec import SpecError, parse_spec
from benchmarks.templatetags.schedbench import diff_groups, flat_pairs, plain
from tests.factories import make_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def noisy():
    """Small times with a spread wider than the median: a symmetric stdev bar would go < 0."""
    for kernel in ("2.6.22", "2.6.24"):
        for loops in (1000, 10000):
            make_run(kernel, [0.1, 0.1, 5.0, 0.2], params={"loops": loops})


def figure(**overrides):
    data = {"filters": {"benchmark": "threadtest"}, "x": "param.loops", "series": "kernel",
            **overrides}
    return compute(parse_spec(data))["figure"]


def test_no_error_bar_reaches_below_zero_and_the_hover_says_so(noisy):
    for error in ("stdev", "ci95", "minmax"):
        for trace in figure(error=error)["data"]:
            bars = trace["error_y"]
            lows = [y - low for y, low in zip(trace["y"], bars["arrayminus"], strict=True)]
            assert min(lows) >= 0, (error, lows)
    trace = figure(error="stdev")["data"][0]
    assert any("cut at 0" in row[4] for row in trace["customdata"])
    assert "%{customdata[4]}" in trace["hovertemplate"]


def test_bars_keep_their_length_when_they_fit(noisy):
    trace = figure(error="minmax")["data"][0]
    assert trace["error_y"]["array"] == pytest.approx([4.85, 4.85])  # max - median untouched
    # no bar was cut: the figure carries no "cut at 0" column, and the hover asks for none
    assert all(len(row) == 4 for row in trace["customdata"])
    assert "customdata[4]" not in trace["hovertemplate"]


def test_heatmap_without_series_names_its_row_and_table_has_no_null(noisy):
    heat = figure(chart="heatmap", series=None)["data"][0]
    assert heat["y"] == ["time_ms"]
    table = figure(chart="table", series=None)
    trace = table["data"][0]
    assert trace["header"]["values"][0] == "param.loops"
    assert "series" not in trace["header"]["values"] and "facet" not in trace["header"]["values"]
    assert all(value is not None for column in trace["cells"]["values"] for value in column)
    assert trace["columnwidth"][0] > trace["columnwidth"][-1]  # room for long kernel names


def test_axes_grow_their_margin_for_long_tick_labels(noisy):
    layout = figure()["layout"]
    assert layout["yaxis"]["automargin"] is True and layout["xaxis"]["automargin"] is True


def test_empty_filters_mean_every_run_and_no_selection_is_still_an_error(noisy):
    assert parse_spec({"filters": {}}).filters == {}
    assert len(compute(parse_spec({"filters": {}, "x": "kernel"}))["runs"]) == 4
    with pytest.raises(SpecError, match="give run ids or filters"):
        parse_spec({})


def test_the_builder_suggests_the_numeric_sweep_on_x_and_kernels_as_series():
    values = {"kernel": ["2.6.22", "2.6.24"], "param.loops": [1000, 10000, 100000],
              "param.cpus": [2, UNSET], "machine": ["a", "b"]}
    varying = ["kernel", "machine", "param.cpus", "param.loops"]
    assert suggest_layout(varying, values) == {"x": "param.loops", "series": "kernel"}
    # No numeric sweep: kernels on x, and never a dimension that is unset on some runs.
    assert suggest_layout(["kernel", "param.cpus"], values) == {"x": "kernel", "series": None}
    assert suggest_layout(["kernel", "machine"], values) == {"x": "kernel", "series": "machine"}


def test_environments_flatten_to_dotted_keys_and_never_print_a_repr():
    env = {"simulator": {"seed": 7, "topology": {"cpus": 2}, "pin": False, "kernels": ["a", "b"],
                         "groups": [{"x": None}]}, "source": "LKML"}
    rows = dict(flat_pairs(env))
    assert rows["simulator.topology.cpus"] == 2 and rows["source"] == "LKML"
    assert plain(rows["simulator.pin"]) == "false"
    assert plain(rows["simulator.kernels"]) == "a, b"
    assert plain(rows["simulator.groups"]) == '[{"x": null}]'
    assert plain(None) == "–"


def test_what_else_differs_is_grouped_and_large_groups_fold():
    rows = [{"section": "environment", "key": f"simulator.counters.c{i}", "values": {}}
            for i in range(30)] + [{"section": "tunables", "key": "HZ", "values": {}}]
    groups = diff_groups(rows)
    assert [(title, len(members), start_open) for title, members, start_open in groups] == [
        ("environment: simulator.counters", 30, False), ("tunables", 1, True)]


def test_the_run_page_shows_a_simulator_environment_as_a_table(client):
    from benchmarks.models import Run

    run = make_run("2.6.24")
    Run.objects.filter(pk=run.pk).update(environment={"simulator": {"topology": {"cpus": 2},
                                                                    "pin": True}})
    page = client.get(f"/runs/{run.pk}/").content.decode().replace("<wbr>", "")  # break hints
    assert "<th>simulator.topology.cpus</th>" in page
    assert "{&#x27;" not in page and "True" not in page


def test_what_else_differs_shows_values_as_json_not_python():
    from benchmarks.models import Run

    runs = [make_run(kernel, params={"loops": 1000}) for kernel in ("2.6.22", "2.6.24")]
    for run, env in zip(runs, ({"pin": True, "cpus": [0, 1]}, {"pin": False, "cpus": [2]}),
                        strict=True):
        Run.objects.filter(pk=run.pk).update(environment={"simulator": env})
    rows = compute(parse_spec({"runs": [r.pk for r in runs], "x": "kernel"}))
    values = {row["key"]: set(row["values"]) for row in rows["environment_diff"]}
    assert values["simulator.pin"] == {"true", "false"}
    assert values["simulator.cpus"] == {"0, 1", "2"}
