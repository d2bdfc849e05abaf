"""Kernel names over the 200-character limit are refused at preview, naming the line or field
(issue 15: a 3,007-character heading passed the preview and failed at commit blaming the
values' line; a 5,007-character kernel typed into the form was silently cut to 200)."""

import re

import pytest

from benchmarks.models import Run

pytestmark = pytest.mark.django_db

LONG = "2.6.24-" + "x" * 3000  # 3,007 characters


def upload(client, **fields):
    return client.post("/api/v1/uploads/", {"benchmark": "threadtest", **fields})


@pytest.mark.parametrize("dry_run", ["1", ""])
def test_a_too_long_kernel_heading_is_refused_at_its_own_line(api_client, dry_run):
    text = f"2.6.22\ntime 100 ms\ntime 110 ms\n\n{LONG}\ntime 120 ms\ntime 130 ms\n"
    response = upload(api_client, text=text, **({"dry_run": dry_run} if dry_run else {}))
    assert response.status_code == 400
    body = response.json()
    assert body["line"] == 5
    assert "3,007 characters" in body["error"] and "at most 200" in body["error"]
    assert not Run.objects.exists()


def test_a_too_long_kernel_field_is_refused_at_preview_naming_the_field(api_client):
    response = upload(api_client, text="time 5210 ms\ntime 5300 ms\n", kernel="k" * 5007,
                      dry_run="1")
    assert response.status_code == 400
    assert response.json()["field"] == "kernel"
    assert "200" in response.json()["error"]


def test_a_200_character_heading_is_still_a_kernel(api_client):
    kernel = "2.6.24-" + "y" * 193
    response = upload(api_client, text=f"{kernel}\ntime 120 ms\ntime 130 ms\n", dry_run="1")
    assert response.status_code == 200
    assert response.json()["runs"][0]["kernel"] == kernel


def test_the_upload_form_does_not_cut_what_is_typed(client, django_user_model):
    client.force_login(django_user_model.objects.create_user("u", password="a-long-password-1"))
    page = client.get("/upload/").content.decode()
    assert 'id="kernel-input"' in page
    # the server refuses a too long value, naming the field; the form must not cut it first
    form = page.split('id="upload-form"')[-1].split("</form>")[0]
    form_inputs = re.findall(r"<input[^>]*>", form)
    assert form_inputs and not [tag for tag in form_inputs if "maxlength" in tag]
