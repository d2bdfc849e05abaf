"""How every app lists its API: an `api_urls.py` whose `urlpatterns` portal/urls.py mounts under
/api/v1/ (written once, there). Function views go in as `path()`; a ViewSet goes in through
`resource()`, which makes the same list, detail and action URLs (and names) a DRF router would,
so no app keeps a router of its own and no app registers another app's resources."""

from django.urls import URLPattern
from rest_framework.routers import SimpleRouter
from rest_framework.urlpatterns import format_suffix_patterns


def resource(prefix: str, viewset, *, basename: str) -> list[URLPattern]:
    """`prefix/`, `prefix/<pk>/` and the viewset's @action URLs, named `<basename>-list`,
    `<basename>-detail`, `<basename>-<action>`; `.json` suffixes answer as they always did."""
    router = SimpleRouter()
    router.register(prefix, viewset, basename=basename)
    return format_suffix_patterns(router.urls)
