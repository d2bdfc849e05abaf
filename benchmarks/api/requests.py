"""Request bodies: every one is a `RequestSerializer` whose fields are checked, not just listed.

One place refuses what no endpoint accepts: a body that is not a JSON object, and a key the
serializer does not declare (`unknown field(s) [...]`, 400 naming the first). The fields are
strict about JSON types (a string is not a number, 1 is not true) and their messages name the
field ("kernel must be a string"), which `benchmarks.api.errors` passes on as they are, in the
one error shape. What the values mean (is this kernel known, does the simulator accept these
params) stays with the services, which also serve callers that are not HTTP requests (bulk
NDJSON, mail import, the simulator). The OpenAPI schema is generated from these same classes.
"""

import math
from collections.abc import Mapping

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.settings import api_settings

from benchmarks.services.jsonvalues import text_problem


def _name(field) -> str:
    """The field's key, or `<list> item` for the child of a list field."""
    if field.field_name:
        return field.field_name
    parent = getattr(field, "parent", None)
    return f"{parent.field_name} item" if parent is not None and parent.field_name else "value"


class NamedErrors:
    """Messages may say `{name}`: the field's key (DRF's `fail` knows only the message)."""

    def fail(self, key, **kwargs):
        kwargs.setdefault("name", _name(self))
        super().fail(key, **kwargs)


def _messages(required: bool) -> dict:
    return {
        "required": "{name} is required",
        "null": "{name} is required" if required else "{name} may not be null",
    }


class Strict(NamedErrors):
    """A request field: an optional one may be null (services read null as absent), and the
    required/null messages name the field."""

    def __init__(self, *args, **kwargs):
        required = kwargs.get("required", True)
        kwargs.setdefault("allow_null", not required)
        kwargs.setdefault("error_messages", _messages(required))
        super().__init__(*args, **kwargs)


class Text(Strict, serializers.CharField):
    """A JSON string, as given (no trimming: services strip where it matters); optional ones
    may be null, which services read as absent."""

    default_error_messages = {
        "invalid": "{name} must be a string",
        "blank": "{name} is required",
        "too_long": "{name} is longer than {max_length} characters",
        "text": "{name} {problem}",
    }

    def __init__(self, *, max_length: int | None = None, **kwargs):
        kwargs.setdefault("allow_blank", not kwargs.get("required", True))
        kwargs.setdefault("trim_whitespace", False)
        super().__init__(**kwargs)
        # Checked in to_internal_value (so the message can name the field); the schema reads it.
        self.max_length = max_length

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        if self.max_length is not None and len(data) > self.max_length:
            self.fail("too_long", max_length=self.max_length)
        problem = text_problem(data)  # NUL, lone surrogates: what the database cannot store
        if problem:
            self.fail("text", problem=problem)
        return super().to_internal_value(data)


class Integer(Strict, serializers.IntegerField):
    """A JSON integer: not a string of digits, not 2.0, not true."""

    default_error_messages = {
        "invalid": "{name} = {value!r} is not an integer",
        "max_value": "{name} is above the maximum {max_value}",
        "min_value": "{name} is below the minimum {min_value}",
    }

    def __init__(self, **kwargs):
        kwargs.setdefault("max_value", 2**63 - 1)  # what the database holds
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid", value=data)
        for limit, key in ((self.min_value, "min_value"), (self.max_value, "max_value")):
            if limit is not None and (data < limit if key == "min_value" else data > limit):
                self.fail(key, **{key: limit})
        return data


class Number(Strict, serializers.FloatField):
    """A finite JSON number (integer or not): not a string, not a boolean."""

    default_error_messages = {
        "invalid": "{name} must be a JSON number",
        "max_value": "{name} is above the maximum {max_value}",
        "min_value": "{name} is below the minimum {min_value}",
    }

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, (int, float)):
            self.fail("invalid")
        if not math.isfinite(data):
            self.fail("invalid")
        for limit, key in ((self.min_value, "min_value"), (self.max_value, "max_value")):
            if limit is not None and (data < limit if key == "min_value" else data > limit):
                self.fail(key, **{key: limit})
        return float(data)


class Flag(Strict, serializers.BooleanField):
    """true or false, nothing else."""

    default_error_messages = {"invalid": "{name} must be true or false"}

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


class Choice(Strict, serializers.ChoiceField):
    default_error_messages = {"invalid_choice": "{name} must be one of {choices}, not {input!r}"}

    def to_internal_value(self, data):
        if not isinstance(data, str) or data not in self.choice_strings_to_values:
            self.fail("invalid_choice", input=data,
                      choices=", ".join(str(c) for c in self.choices) or "(none)")
        return self.choice_strings_to_values[data]


class RunId(Integer):
    """A run id: a JSON integer, or its digits as a string (what a form field gives); whether
    such a run exists (or could) is the service's to say."""

    def __init__(self, **kwargs):
        super().__init__(max_value=None, **kwargs)

    def to_internal_value(self, data):
        if isinstance(data, str) and data.strip().isascii() and data.strip().isdigit():
            return int(data.strip())
        return super().to_internal_value(data)


class List(Strict, serializers.ListField):
    default_error_messages = {
        "not_a_list": "{name} must be a list",
        "max_length": "{name} has more than {max_length} items",
        "min_length": "{name} needs at least {min_length} item(s)",
    }

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.validators = []  # DRF's length validators cannot name the field: checked below

    def to_internal_value(self, data):
        if isinstance(data, (str, Mapping)) or not hasattr(data, "__len__"):
            self.fail("not_a_list")
        if self.max_length is not None and len(data) > self.max_length:
            self.fail("max_length", max_length=self.max_length)
        if self.min_length is not None and len(data) < self.min_length:
            self.fail("min_length", min_length=self.min_length)
        return super().to_internal_value(data)


@extend_schema_field({"type": "object", "additionalProperties": True})
class JSONObjectField(serializers.JSONField):
    """A JSON object in an answer; what may be inside is the service's business."""


@extend_schema_field({"type": "object", "additionalProperties": True})
class Object(Strict, serializers.JSONField):
    """A JSON object in a request (null: absent); what is inside is the service's business."""

    default_error_messages = {"not_an_object": "{name} must be an object"}

    def to_internal_value(self, data):
        if not isinstance(data, Mapping):
            self.fail("not_an_object")
        return data  # what is inside (numbers, text) the service checks, naming the place


class NameOrObject(Strict, serializers.JSONField):
    """A name (string) or a JSON object: `machine` of a run, `attach_to` of a thread."""

    default_error_messages = {"invalid_kind": "{name} must be a name or an object"}

    def to_internal_value(self, data):
        if not isinstance(data, (str, Mapping)):
            self.fail("invalid_kind")
        return data


MACHINE_SPEC_SCHEMA = {"oneOf": [
    {"type": "string", "description": "machine name"},
    {"type": "object", "additionalProperties": True, "description": "name, cpu_model, arch, "
     "sockets, cores_per_socket, threads_per_core, caches, memory_mb, virtualization"}]}


@extend_schema_field(MACHINE_SPEC_SCHEMA)
class MachineSpecField(NameOrObject):
    """A machine name, or a full description (de-duplicated by fingerprint)."""


class RequestSerializer(serializers.Serializer):
    """A request body: a JSON object holding only the declared keys, each checked by its field.
    `validated()` hands the service the keys given (no defaults are invented)."""

    tolerated: frozenset[str] = frozenset()  # keys read by no field, yet not a mistake

    def unknown_message(self, unknown: list[str]) -> str:
        return f"unknown field(s) {unknown}; known: {sorted(self._declared())}"

    def _declared(self) -> set[str]:
        return {name for name, field in self.fields.items() if not field.read_only}

    def to_internal_value(self, data):
        if not isinstance(data, Mapping):
            message = ("the request body must be a JSON object" if self.parent is None
                       else f"{_name(self)} must be an object")
            raise serializers.ValidationError({api_settings.NON_FIELD_ERRORS_KEY: [message]})
        unknown = sorted(str(key) for key in set(data) - self._declared() - self.tolerated)
        if unknown:
            raise serializers.ValidationError({unknown[0]: [self.unknown_message(unknown)]})
        return super().to_internal_value(data)

    def run_validation(self, data=serializers.empty):
        if data is None and self.parent is None:  # a body of `null`
            raise serializers.ValidationError(
                {api_settings.NON_FIELD_ERRORS_KEY: ["the request body must be a JSON object"]})
        return super().run_validation(data)

    def validated(self) -> dict:
        self.is_valid(raise_exception=True)
        return dict(self.validated_data)
