"""The OpenAPI schema describes the API as it is: errors, token auth, examples that work."""

import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from tests.factories import make_run

TRACE = Path(__file__).resolve().parent.parent / "fixtures" / "traces" / "ftrace_burn.trace"

pytestmark = pytest.mark.django_db


@pytest.fixture
def schema(client):
    response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    return json.loads(response.content)


def operations(schema):
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            if method in ("get", "post", "put", "patch", "delete"):
                yield path, method, operation


def test_token_auth_is_declared_for_the_authorize_dialog(schema):
    scheme = schema["components"]["securitySchemes"]["tokenAuth"]
    assert scheme == {**scheme, "type": "apiKey", "in": "header", "name": "Authorization"}
    writes = [op for _, method, op in operations(schema) if method != "get"]
    assert writes and all({"tokenAuth": []} in op["security"] for op in writes)


def test_every_operation_documents_its_errors_in_the_one_shape(schema):
    error = schema["components"]["schemas"]["Error"]
    assert set(error["required"]) == {"error", "field", "line"}
    for path, method, operation in operations(schema):
        codes = set(operation["responses"])
        assert "503" in codes, (path, method)
        if method == "post":
            assert {"400", "413", "415"} <= codes, (path, method, codes)
        if "{" in path:
            assert "404" in codes, (path, method)
    responses = schema["paths"]["/api/v1/uploads/"]["post"]["responses"]
    assert {"200", "201", "400", "401", "403", "413"} <= set(responses)
    assert "429" in schema["paths"]["/api/v1/threads/"]["post"]["responses"]
    body = responses["400"]["content"]["application/json"]["schema"]
    assert body == {"$ref": "#/components/schemas/Error"}


def test_every_request_body_has_a_schema_not_a_bare_object(schema):
    for path, method, operation in operations(schema):
        for media, content in operation.get("requestBody", {}).get("content", {}).items():
            described = content["schema"]
            assert "$ref" in described or described.get("type") in ("array", "string"), (
                path, method, media, described)


def test_the_examples_in_the_schema_are_accepted(schema, api_client):
    for loops in (1_000_000, 10_000_000):
        make_run("2.6.22", [3300.0 * loops / 1e6 + i for i in range(3)],
                 params={"loops": loops, "iterations": 500})
        make_run("2.6.24", [8900.0 * loops / 1e6 + i for i in range(3)],
                 params={"loops": loops, "iterations": 500})
    # Examples on a path with an id are tried on a real object of that kind.
    object_ids = {"/api/v1/traces/{id}/": upload_trace(api_client)}
    tried = 0
    for path, method, operation in operations(schema):
        content = operation.get("requestBody", {}).get("content", {})
        for example in content.get("application/json", {}).get("examples", {}).values():
            url = path
            for prefix, pk in object_ids.items():
                if path.startswith(prefix):
                    url = path.replace("{id}", str(pk))
            assert "{" not in url, f"no object to try the example on {path} with"
            response = api_client.generic(method.upper(), url, json.dumps(example["value"]),
                                          content_type="application/json")
            assert response.status_code < 300, (path, example, response.content)
            tried += 1
    assert tried >= 8


def upload_trace(api_client) -> int:
    response = api_client.post("/api/v1/traces/", {
        "file": SimpleUploadedFile(TRACE.name, TRACE.read_bytes())})
    assert response.status_code == 201, response.content
    return response.json()["id"]
