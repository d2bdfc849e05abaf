"""This app's API resources, mounted under /api/v1/ by portal/urls.py."""

from django.urls import path

from . import api

urlpatterns = [
    path("traces/", api.traces, name="api-traces"),
    path("traces/jobs/<int:pk>/", api.trace_job_detail, name="api-trace-job-detail"),
    path("traces/<int:pk>/", api.trace_detail, name="api-trace-detail"),
    path("traces/<int:pk>/timeline/", api.trace_timeline, name="api-trace-timeline"),
]
