from django.urls import path

from . import views

urlpatterns = [
    path("traces/", views.trace_list, name="trace-list"),
    path("traces/upload/", views.trace_upload, name="trace-upload"),
    path("traces/uploads/<int:pk>/", views.trace_job_detail, name="trace-job-detail"),
    path("traces/<int:pk>/", views.trace_detail, name="trace-detail"),
    path("traces/<int:a>/vs/<int:b>/", views.trace_versus, name="trace-versus"),
]
