"""The site: every app's pages at the root and its API under /api/v1/, written once here.

Each app lists its pages in `urls.py` and its API resources in `api_urls.py`
(benchmarks/api/routing.py says how); adding an app here is all it takes to mount it."""

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

APPS = ["benchmarks", "discussions", "simulations", "traces", "regressions", "bisection"]

urlpatterns = [
    path("admin/", admin.site.urls),
    *(path("api/v1/", include(f"{app}.api_urls")) for app in APPS),
    *(path("", include(f"{app}.urls")) for app in APPS),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # The split view serves its start-up script as a file, so the docs page keeps the CSP.
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"),
         name="api-docs"),
]

handler500 = "portal.middleware.server_error"
