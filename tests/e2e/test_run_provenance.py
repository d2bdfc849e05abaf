"""In the browser: a run page's raw input opens as plain text (markup shown, never run), and a
run that never exercised the scheduler carries the flag."""

import io

import pytest

from benchmarks.services.ingest import UploadMetadata, upload_ingest
from tests.factories import CORE2, make_run

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

RAW = "2.6.24: 5210 ms\n2.6.24: 5230 ms\n<b id='injected'>bold?</b>\n"


def test_raw_input_link_and_not_exercised_flag(page, django_user_model):
    user = django_user_model.objects.create_user("uploader")
    outcome = upload_ingest(stream=io.BytesIO(RAW.encode()), filename="paste.txt",
                            metadata=UploadMetadata(benchmark="threadtest", machine="box"),
                            source="upload", submitter=user, format="kernel-time")
    page.goto(f"/runs/{outcome.runs[0].pk}/")
    assert page.is_hidden("#not-exercised")
    page.click("#raw-input-view")
    page.wait_for_load_state()
    assert page.evaluate("document.body.innerText").rstrip("\n") == RAW.rstrip("\n")
    assert page.locator("#injected").count() == 0  # shown as text, not parsed as HTML

    idle = make_run("2.6.24", [1200.0, 1210.0], benchmark="yield-loop", metric="yields_per_s",
                    unit="1/s", params={"tasks": 1}, machine=CORE2)
    page.goto(f"/runs/{idle.pk}/")
    assert "1 yielding task on 2 CPUs" in page.text_content("#not-exercised")
    assert page.js_errors == []
