from django.urls import path

from . import api, views

urlpatterns = [
    path("traces/", views.trace_list, name="trace-list"),
    path("traces/upload/", views.trace_upload, name="trace-upload"),
    path("traces/<int:pk>/", views.trace_detail, name="trace-detail"),
    path("traces/<int:a>/vs/<int:b>/", views.trace_versus, name="trace-versus"),
    path("api/v1/traces/", api.traces, name="api-traces"),
    path("api/v1/traces/<int:pk>/", api.trace_detail, name="api-trace-detail"),
    path("api/v1/traces/<int:pk>/timeline/", api.trace_timeline, name="api-trace-timeline"),
]
