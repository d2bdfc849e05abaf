"""This app's API resources, mounted under /api/v1/ by portal/urls.py."""

from django.urls import path

from . import api

urlpatterns = [
    path("threads/", api.threads, name="api-threads"),
    path("threads/import/", api.thread_import, name="api-thread-import"),
    path("threads/import/<int:pk>/", api.thread_import_detail,
         name="api-thread-import-detail"),
    path("threads/<int:pk>/", api.thread_detail, name="api-thread-detail"),
    path("threads/<int:pk>/posts/", api.thread_reply, name="api-thread-reply"),
]
