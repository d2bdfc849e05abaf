"""The OpenAPI schema tells the truth about errors: every operation lists the statuses it can
answer besides success, each with the one error body of `benchmarks.api.errors`."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema
from rest_framework.permissions import SAFE_METHODS, AllowAny

from benchmarks.api.serializers import ErrorSerializer

ERROR_DESCRIPTIONS = {
    "400": "invalid input: `field` names the key, `line` the line of an uploaded file",
    "401": "no or invalid `Authorization: Token <key>`",
    "403": "signed in, but not allowed (or a session write without its CSRF token)",
    "404": "no such object (or no such page of a list)",
    "413": "the request or the file is over the size limit",
    "415": "unsupported Content-Type",
    "429": "too many posts in a short time",
}


class ErrorDocumentingSchema(AutoSchema):
    def _error_statuses(self) -> list[str]:
        statuses = ["400"] if self.method not in SAFE_METHODS or self._get_parameters() else []
        open_to_all = any(isinstance(p, AllowAny) for p in self.view.get_permissions())
        if self.method not in SAFE_METHODS and not open_to_all or self._needs_login():
            statuses += ["401", "403"]
        if "{" in self.path or self._is_list_view() or self.method in SAFE_METHODS:
            statuses.append("404")
        if self.method not in SAFE_METHODS:
            statuses += ["413", "415"]
        if self.method == "POST" and self.path.startswith("/api/v1/threads/"):
            statuses.append("429")
        return statuses

    def _needs_login(self) -> bool:
        return any(type(p).__name__ == "IsAuthenticated" for p in self.view.get_permissions())

    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        for status in self._error_statuses():
            if status not in responses:
                body = self._get_response_for_code(ErrorSerializer, status, direction=direction)
                body["description"] = ERROR_DESCRIPTIONS[status]
                responses[status] = body
        return responses


class TokenAuthenticationScheme(OpenApiAuthenticationExtension):
    """Declares `Authorization: Token <key>` so the docs' Authorize dialog offers it."""

    target_class = "benchmarks.api.auth.ApiTokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema):
        return {"type": "apiKey", "in": "header", "name": "Authorization",
                "description": "`Token <key>`: create a key on the settings page or with "
                "`manage.py create_api_token USERNAME`"}
