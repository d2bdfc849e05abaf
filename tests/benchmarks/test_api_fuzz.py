"""No input makes the write API answer with a server error."""

import json

from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.django import TestCase

from benchmarks.services.tokens import token_create

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=12,
)
run_like = st.fixed_dictionaries(
    {},
    optional={
        "benchmark": json_values, "kernel": json_values, "machine": json_values,
        "metrics": json_values | st.dictionaries(st.text(max_size=8), st.lists(
            st.floats(allow_nan=True) | st.integers() | st.text(max_size=3), max_size=4)),
        "params": json_values, "tunables": json_values, "series": json_values,
        "idempotency_key": json_values, "policy": json_values,
    },
)
FUZZ = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


class WriteApiFuzzTests(TestCase):
    def setUp(self):
        from django.contrib.auth import get_user_model

        user, _ = get_user_model().objects.get_or_create(username="fuzzer")
        self.client = Client(HTTP_AUTHORIZATION=f"Token {token_create(user=user)[1]}")

    @FUZZ
    @given(st.binary(max_size=400), st.sampled_from(["x.txt", "x.gz", "x.csv", "x.json"]))
    def test_uploads_of_any_bytes(self, content, name):
        response = self.client.post("/api/v1/uploads/", {
            "file": SimpleUploadedFile(name, content), "benchmark": "b", "kernel": "1.0"})
        assert response.status_code < 500 and "error" in response.json() or \
            response.status_code in (200, 201)

    @FUZZ
    @given(run_like)
    def test_runs_of_any_shape(self, payload):
        body = json.dumps(payload, allow_nan=True)
        response = self.client.post("/api/v1/runs/", body, content_type="application/json")
        assert response.status_code < 500, response.content

    @FUZZ
    @given(st.lists(run_like, max_size=3))
    def test_bulk_of_any_shape(self, payloads):
        body = "\n".join(json.dumps(p, allow_nan=True) for p in payloads)
        response = self.client.post("/api/v1/runs/bulk/", body,
                                    content_type="application/x-ndjson")
        assert response.status_code < 500, response.content

    @FUZZ
    @given(json_values)
    def test_comparison_specs_of_any_shape(self, spec):
        body = json.dumps(spec, allow_nan=True)
        response = self.client.post("/api/v1/comparisons/preview/", body,
                                    content_type="application/json")
        assert response.status_code < 500, response.content
