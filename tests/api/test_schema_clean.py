"""The OpenAPI schema generates without a warning or an error: a duplicated operation id or an
endpoint drf-spectacular cannot describe would otherwise reach clients as a silently wrong
schema. Fast, so it runs on every `make test` even where schemathesis is skipped."""

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError


@pytest.mark.django_db
def test_schema_has_no_warnings_or_errors():
    out = io.StringIO()
    try:
        call_command("spectacular", "--validate", "--fail-on-warn", stdout=out, stderr=out)
    except (CommandError, SystemExit) as exc:  # the command exits non-zero on a warning
        pytest.fail(f"schema generation warned: {exc}\n{out.getvalue()[-2000:]}")


@pytest.mark.django_db
def test_operation_ids_are_unique():
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    seen: dict[str, str] = {}
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            op_id = operation["operationId"]
            assert op_id not in seen, f"{op_id} names both {seen[op_id]} and {method} {path}"
            seen[op_id] = f"{method} {path}"
