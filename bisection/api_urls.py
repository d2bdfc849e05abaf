"""This app's API resources, mounted under /api/v1/ by portal/urls.py."""

from django.urls import path

from . import api

urlpatterns = [
    path("bisections/", api.bisections, name="api-bisections"),
    path("bisections/<int:pk>/", api.bisection_detail, name="api-bisection-detail"),
    path("bisections/<int:pk>/steps/", api.bisection_steps, name="api-bisection-steps"),
]
