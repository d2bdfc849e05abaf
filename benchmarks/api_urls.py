"""The core's API resources, mounted under /api/v1/ by portal/urls.py (see api/routing.py)."""

from django.urls import path

from benchmarks.api import calibration, comparison_views, ingest_views, search, views
from benchmarks.api.routing import resource

urlpatterns = [
    path("", views.api_root, name="api-root"),
    path("me/", views.me, name="api-me"),
    path("uploads/", ingest_views.upload_create, name="api-upload"),
    path("search/", search.search, name="api-search"),
    # Before machines/<pk>/, which would take "calibration" for an id.
    path("machines/calibration/", calibration.calibration_by_description,
         name="api-machine-calibration-new"),
    path("machines/<int:pk>/calibration/", calibration.machine_calibration,
         name="api-machine-calibration"),
    *resource("runs", views.RunViewSet, basename="api-run"),
    *resource("benchmarks", views.BenchmarkViewSet, basename="api-benchmark"),
    *resource("machines", views.MachineViewSet, basename="api-machine"),
    *resource("kernels", views.KernelViewSet, basename="api-kernel"),
    *resource("comparisons", comparison_views.ComparisonViewSet, basename="api-comparison"),
]
