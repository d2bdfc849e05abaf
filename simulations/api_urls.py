"""This app's API resources, mounted under /api/v1/ by portal/urls.py."""

from django.urls import path

from . import api

urlpatterns = [
    path("simulations/", api.simulations, name="api-simulations"),
    path("simulations/<int:pk>/", api.simulation_detail, name="api-simulation-detail"),
    path("traces/<int:pk>/replay/", api.trace_replay, name="api-trace-replay"),
    path("simulations/<int:pk>/cancel/", api.simulation_cancel,
         name="api-simulation-cancel"),
]
