from django.urls import path
from rest_framework.routers import DefaultRouter

from benchmarks.api import calibration, comparison_views, ingest_views, search, views
from regressions.api import RegressionViewSet

router = DefaultRouter()
router.register("runs", views.RunViewSet, basename="api-run")
router.register("benchmarks", views.BenchmarkViewSet, basename="api-benchmark")
router.register("machines", views.MachineViewSet, basename="api-machine")
router.register("kernels", views.KernelViewSet, basename="api-kernel")
router.register("comparisons", comparison_views.ComparisonViewSet, basename="api-comparison")
router.register("regressions", RegressionViewSet, basename="api-regression")

urlpatterns = [
    path("me/", views.me, name="api-me"),
    path("uploads/", ingest_views.upload_create, name="api-upload"),
    path("search/", search.search, name="api-search"),
    # Before the router, whose machines/<pk>/ would take "calibration" for an id.
    path("machines/calibration/", calibration.calibration_by_description,
         name="api-machine-calibration-new"),
    path("machines/<int:pk>/calibration/", calibration.machine_calibration,
         name="api-machine-calibration"),
    *router.urls,
]
