import pytest
from django.core.management import call_command

from benchmarks.models import Artifact, Comparison, Run, Sample
from traces.models import Trace

pytestmark = pytest.mark.django_db


def test_load_demo_loads_the_published_figures_once(capsys):
    call_command("load_demo")
    counts = (Run.objects.count(), Sample.objects.count(), Artifact.objects.count(),
              Comparison.objects.count(), Trace.objects.count())
    # 2 message tables (4 + 12 runs); artifacts: 2 CSVs, 2 messages and the trace
    assert counts == (35 + 6 + 16, 35 + 18 + 16, 2 + 2 + 1, 2, 1)
    call_command("load_demo")
    assert "already loaded" in capsys.readouterr().out
    assert (Run.objects.count(), Sample.objects.count(), Artifact.objects.count(),
            Comparison.objects.count(), Trace.objects.count()) == counts


def test_demo_trace_is_the_recorded_threadtest(client):
    call_command("load_demo")
    trace = Trace.objects.get()
    assert (trace.format, trace.cpus, trace.owner) == ("ftrace", 2, None)
    assert trace.events > 4000
    assert trace.tasks.filter(comm="threadtest").count() > 100
    page = client.get(f"/traces/{trace.pk}/")
    assert page.status_code == 200 and b"Linux 6.18" in page.content


def test_demo_runs_carry_their_machines_and_params():
    call_command("load_demo")
    p4 = Run.objects.filter(machine__name="p4-ht", kernel__version="2.6.25-smp").get()
    assert p4.machine.topology == "1x1x2"
    assert p4.params == {"loops": 10000, "iterations": 500, "cpus": 2}
    assert sorted(p4.samples.values_list("value", flat=True)) == [29, 61, 72]
    core2 = Run.objects.get(machine__name="core2-duo-laptop", kernel__version="2.6.24",
                            params__loops=1000000)
    assert list(core2.samples.values_list("value", flat=True)) == [10765]
    ordered = list(Run.objects.filter(machine__name="p4-ht").in_natural_order()
                   .values_list("kernel__version", flat=True))
    assert ordered == ["2.6.22.17-cfs-v24.1-smp", "2.6.22.17-smp", "2.6.23.15-cfs-v24-smp",
                       "2.6.23.15-smp", "2.6.24.1-smp", "2.6.25-smp"]


def test_demo_thread_extracts_each_table_once():
    from discussions.models import Post

    call_command("load_demo")
    posts = list(Post.objects.order_by("thread_order"))
    assert [p.depth for p in posts] == [0, 1, 2]
    extracted = {p.message_id: len(p.run_ids) for p in posts}
    # The second message only quotes the first one's table: nothing is extracted from it.
    assert list(extracted.values()) == [4, 0, 12]
