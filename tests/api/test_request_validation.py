"""Request bodies are checked by their serializers: unknown keys refused in one place, JSON
types enforced with messages naming the field, and the schema generated from the same classes."""

import json

import pytest

from benchmarks.models import Run
from discussions.models import Thread
from simulations.models import SimulationJob
from tests.factories import make_run

pytestmark = pytest.mark.django_db

RUN = {"benchmark": "threadtest", "kernel": "2.6.24", "metrics": {"time_ms": [1.0, 2.0]}}
SIMULATION = {"workload": "threadtest", "kernels": ["2.6.24"], "repeat": 1}
JSON_BODIES = [
    ("post", "/api/v1/runs/", RUN),
    ("post", "/api/v1/comparisons/", {"filters": {}}),
    ("post", "/api/v1/comparisons/preview/", {"filters": {}}),
    ("post", "/api/v1/comparisons/options/", {"filters": {}}),
    ("post", "/api/v1/simulations/", SIMULATION),
    ("post", "/api/v1/threads/", {"subject": "s", "body": "b"}),
    ("post", "/api/v1/bisections/", {"good": "6.7.0", "bad": "6.8.0"}),
    ("post", "/api/v1/uploads/", {"text": "2.6.24\ntime 5 ms\n", "dry_run": True}),
]


def send(client, method, path, body):
    return getattr(client, method)(path, json.dumps(body), content_type="application/json")


@pytest.mark.parametrize("method,path,body", JSON_BODIES, ids=[p for _, p, _ in JSON_BODIES])
def test_an_unknown_key_is_refused_naming_it(api_client, method, path, body):
    response = send(api_client, method, path, {**body, "colour": "red"})
    assert response.status_code == 400, response.content
    answer = response.json()
    assert answer["field"] == "colour" and "unknown field(s) ['colour']" in answer["error"]
    assert not Run.objects.exists() and not SimulationJob.objects.exists()
    assert not Thread.objects.exists()


@pytest.mark.parametrize("method,path,body", JSON_BODIES, ids=[p for _, p, _ in JSON_BODIES])
def test_a_list_for_a_body_is_refused(api_client, method, path, body):
    response = send(api_client, method, path, [body])
    assert response.status_code == 400, response.content
    assert response.json()["field"] is None and "object" in response.json()["error"]


@pytest.mark.parametrize("path,body,field,words", [
    ("/api/v1/runs/", {**RUN, "label": 5}, "label", "label must be a string"),
    ("/api/v1/runs/", {**RUN, "policy": "x" * 101}, "policy", "longer than 100"),
    ("/api/v1/runs/", {**RUN, "bisect": "7"}, "bisect", "not an integer"),
    ("/api/v1/runs/", {**RUN, "machine": 12}, "machine", "a name or an object"),
    ("/api/v1/simulations/", {**SIMULATION, "repeat": "3"}, "repeat", "not an integer"),
    ("/api/v1/simulations/", {**SIMULATION, "trace": "yes"}, "trace", "true or false"),
    ("/api/v1/simulations/", {**SIMULATION, "kernels": "2.6.24"}, "kernels", "a list"),
    ("/api/v1/simulations/", {**SIMULATION, "kernels": [24]}, "kernels[0]", "a string"),
    ("/api/v1/simulations/", {**SIMULATION, "machine": "laptop"}, "machine", "integer"),
    ("/api/v1/comparisons/preview/", {"filters": {}, "chart": "pie"}, "chart", "one of"),
    ("/api/v1/comparisons/preview/", {"filters": []}, "filters", "an object"),
    ("/api/v1/threads/", {"subject": "s", "body": "\x00"}, "body", "NUL"),
    ("/api/v1/bisections/", {"good": "6.7.0", "bad": 68}, "bad", "bad must be a string"),
])
def test_types_are_checked_and_the_message_names_the_field(api_client, path, body, field,
                                                           words):
    response = send(api_client, "post", path, body)
    assert response.status_code == 400, response.content
    answer = response.json()
    assert answer["field"] == field and words in answer["error"], answer
    assert answer["error"].startswith(field)  # said once, not "label: label must..."


def test_the_run_patch_names_what_may_change(api_client, api_user):
    api_user.is_staff = True
    api_user.save()
    run = make_run("2.6.24")
    response = send(api_client, "patch", f"/api/v1/runs/{run.pk}/", {"benchmark": "x"})
    assert response.status_code == 400
    assert response.json()["error"] == "benchmark: only label and tags can be changed, not " \
        "benchmark"
    response = send(api_client, "patch", f"/api/v1/runs/{run.pk}/", {"tags": ["ok", 5]})
    assert response.status_code == 400 and response.json()["field"] == "tags[1]"
    response = send(api_client, "patch", f"/api/v1/runs/{run.pk}/", {"tags": ["cfs"]})
    assert response.status_code == 200 and response.json()["tags"] == ["cfs"]


def test_the_page_forms_csrf_field_is_not_an_unknown_field(api_client):
    response = api_client.post("/api/v1/uploads/", {
        "text": "2.6.24\ntime 5 ms\n", "benchmark": "x", "dry_run": "1",
        "csrfmiddlewaretoken": "abc"})
    assert response.status_code == 200, response.content
    refused = api_client.post("/api/v1/uploads/", {"text": "2.6.24\ntime 5 ms\n", "nope": "1"})
    assert refused.status_code == 400 and refused.json()["field"] == "nope"


def test_the_json_upload_reads_objects_and_the_form_reads_json_text(api_client):
    fields = {"text": "time 5 ms\n", "benchmark": "x", "kernel": "1.0", "dry_run": True}
    as_json = send(api_client, "post", "/api/v1/uploads/", {**fields, "params": {"loops": 5},
                                                              "machine": {"name": "m1"}})
    as_form = api_client.post("/api/v1/uploads/", {**fields, "params": '{"loops": 5}',
                                                   "machine": '{"name": "m1"}'})
    for response in (as_json, as_form):
        assert response.status_code == 200, response.content
        [run] = response.json()["runs"]
        assert run["params"] == {"loops": 5} and run["machine"]["name"] == "m1"


@pytest.fixture
def schema(client):
    return client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()


def test_the_schema_lists_what_is_accepted(schema):
    components = schema["components"]["schemas"]
    assert "machine" in components["JobSpecRequest"]["properties"]
    assert "kernel" in components["JobSpecRequest"]["properties"]
    upload = schema["paths"]["/api/v1/uploads/"]["post"]["requestBody"]["content"]
    refs = {media: body["schema"]["$ref"].rsplit("/", 1)[1] for media, body in upload.items()}
    assert refs == {"application/json": "UploadJSONRequest",
                    "multipart/form-data": "UploadMultipartRequest",
                    "application/x-www-form-urlencoded": "UploadFormRequest"}
    assert components["UploadJSONRequest"]["properties"]["params"]["type"] == "object"
    assert components["UploadFormRequest"]["properties"]["params"]["type"] == "string"
    assert "file" in components["UploadMultipartRequest"]["properties"]
    assert "file" not in components["UploadJSONRequest"]["properties"]


def test_json_endpoints_document_json_only(schema):
    several = {f"{method} {path}" for path, operations in schema["paths"].items()
               for method, operation in operations.items()
               if len(operation.get("requestBody", {}).get("content", {})) > 1}
    assert several == {"post /api/v1/uploads/", "post /api/v1/runs/bulk/"}
