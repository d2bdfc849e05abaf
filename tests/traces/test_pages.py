"""Trace pages and reads: query counts pinned, user text escaped, run page links its traces."""

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from tests.factories import make_run
from traces import selectors
from traces.services import trace_ingest

pytestmark = pytest.mark.django_db
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "traces"
EVIL = "<script>alert(1)</script>"


def ingest(user, name="edge_cases.trace", run=None, content=None, title=""):
    content = content if content is not None else (FIXTURES / name).read_bytes()
    upload = SimpleUploadedFile(name, content)
    with upload.open("rb") as stream:
        return trace_ingest(stream=stream, filename=name, owner=user, title=title,
                            run_id=run.pk if run else None)


@pytest.fixture
def user(django_user_model):
    return django_user_model.objects.create_user("tracer", password="a-long-test-password")


def evil_trace():
    text = (FIXTURES / "edge_cases.trace").read_text().replace("Web Content", EVIL)
    return text.encode()


def test_selectors_query_counts(user, django_assert_num_queries):
    trace = ingest(user, run=make_run(submitter=user))
    with django_assert_num_queries(1):
        loaded = selectors.trace_get(trace.pk)
        assert loaded.run.kernel.version == "2.6.24" and loaded.owner.username == "tracer"
    with django_assert_num_queries(1):
        assert len(selectors.trace_tasks(loaded)) == 4
    with django_assert_num_queries(0):
        body = selectors.timeline_window(loaded, None, None, wakeups=True)
        # 7: 501's inferred run on CPU 1 (10-11 ms) is a segment of its own
        assert len(body["segments"]) == 7 and len(body["wakeups"]) == 4
    with django_assert_num_queries(1):
        assert [t.pk for t in selectors.traces_listed()[:10]] == [trace.pk]


def test_detail_page_query_count_does_not_grow_with_tasks(client, user,
                                                          django_assert_num_queries):
    small = ingest(user, run=make_run(submitter=user))
    big = ingest(user, "ftrace_threadtest.trace.gz", run=make_run(values=(1.0,), submitter=user))
    for trace in (small, big):
        # trace with run, tasks, the run's numbers, other traces to compare with (+ session)
        with django_assert_num_queries(4):
            assert client.get(f"/traces/{trace.pk}/").status_code == 200


def test_detail_page_escapes_comm_and_title(client, user):
    trace = ingest(user, content=evil_trace(), title=EVIL)
    html = client.get(f"/traces/{trace.pk}/").content.decode()
    assert EVIL not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert 'id="task-table"' in html and 'class="trace-timeline"' in html


def test_run_page_lists_its_traces_and_trace_links_back(client, user):
    run = make_run(submitter=user)
    trace = ingest(user, run=run, title="burn trace")
    run_html = client.get(run.get_absolute_url()).content.decode()
    assert f'href="/traces/{trace.pk}/"' in run_html and "burn trace" in run_html
    trace_html = client.get(f"/traces/{trace.pk}/").content.decode()
    assert f'href="/runs/{run.pk}/"' in trace_html and "time_ms" in trace_html


def test_versus_and_list_pages(client, user):
    a, b = ingest(user), ingest(user, "ftrace_burn.trace")
    html = client.get(f"/traces/{a.pk}/vs/{b.pk}/").content.decode()
    assert html.count('class="trace-timeline"') == 2
    assert client.get(f"/traces/{a.pk}/vs/999999/").status_code == 404
    listing = client.get("/traces/").content.decode()
    assert f"/traces/{a.pk}/" in listing and f"/traces/{b.pk}/" in listing


def test_upload_form_needs_login_and_reports_the_bad_line(client, user):
    assert client.get("/traces/upload/").status_code == 302
    client.force_login(user)
    bad = b"  x-1 [000] d..2. 1.000000: sched_switch: prev_comm=x prev_pid=nope\n" * 2
    response = client.post("/traces/upload/", {"file": SimpleUploadedFile("t.txt", bad)})
    assert response.status_code == 200
    assert "(line 1)" in response.content.decode()
    good = (FIXTURES / "truncated.trace").read_bytes()
    response = client.post("/traces/upload/", {"file": SimpleUploadedFile("t.txt", good)},
                           follow=True)
    assert response.redirect_chain[-1][0].startswith("/traces/")
    assert "ends in the middle of line 21" in response.content.decode()


def test_deleting_a_trace_removes_its_timeline_files(
        user, settings, django_capture_on_commit_callbacks):
    trace = ingest(user)
    folder = Path(settings.MEDIA_ROOT) / "traces" / trace.data_dir
    assert (folder / "index.json").exists()
    with django_capture_on_commit_callbacks(execute=True):
        trace.artifact.delete()  # the raw file goes, and the trace with it
    assert not folder.exists()


def test_latency_histogram_puts_everything_under_a_microsecond_in_one_bucket():
    counts = [5, 0, 0, 0, 0, 0, 0, 0, 0, 1, 3, 2, 0, 7] + [0] * 26
    assert selectors.latency_histogram(counts) == {
        "bounds_us": [[0.0, 1.024], [1.024, 2.048], [2.048, 4.096], [4.096, 8.192],
                      [8.192, 16.384]],
        "counts": [6, 3, 2, 0, 7]}
    assert selectors.latency_histogram([0] * 40) == {"bounds_us": [], "counts": []}


def test_admin_lists_and_opens_traces(admin_client, user):
    trace = ingest(user)
    assert admin_client.get("/admin/traces/trace/").status_code == 200
    assert admin_client.get(f"/admin/traces/trace/{trace.pk}/change/").status_code == 200
