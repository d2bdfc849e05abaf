"""This app's API resources, mounted under /api/v1/ by portal/urls.py."""

from benchmarks.api.routing import resource

from .api import RegressionViewSet

urlpatterns = [
    *resource("regressions", RegressionViewSet, basename="api-regression"),
]
