"""Bytes that are not UTF-8 in a kernel (or machine) name are refused with their line, never
stored as U+FFFD replacement characters under a name nobody sent."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from benchmarks.models import Kernel, Machine, Run

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("content,fmt,line", [
    (b'{"benchmark": "threadtest", "kernel": "2.6.\xff24", "machine": "box",'
     b' "metrics": {"time_ms": [1, 2]}}', "schedbench-json", 1),
    (b"kernel,time_ms\n2.6.24,5\n2.6.\xff24,6\n", "schedbench-csv", 3),
])
def test_a_kernel_name_that_is_not_utf8_is_refused_with_its_line(api_client, content, fmt, line):
    response = api_client.post("/api/v1/uploads/", {
        "file": SimpleUploadedFile("k.txt", content), "benchmark": "threadtest",
        "machine": "box", "format": fmt})
    assert response.status_code == 400, response.content
    body = response.json()
    assert (body["field"], body["line"]) == ("kernel", line)
    assert "not valid UTF-8" in body["error"]
    assert not Run.objects.exists() and not Kernel.objects.exists()


def test_a_machine_name_that_is_not_utf8_is_refused(api_client):
    content = (b'{"benchmark": "threadtest", "kernel": "2.6.24", "machine": "b\xc3ox",'
               b' "metrics": {"time_ms": [1, 2]}}')
    response = api_client.post("/api/v1/uploads/", {
        "file": SimpleUploadedFile("m.json", content), "format": "schedbench-json"})
    assert response.status_code == 400, response.content
    assert "not valid UTF-8" in response.json()["error"]
    assert not Machine.objects.filter(name__contains="\ufffd").exists()
