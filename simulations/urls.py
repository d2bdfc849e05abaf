from django.urls import path

from . import api, views

urlpatterns = [
    path("simulations/", views.job_list, name="simulation-list"),
    path("simulations/new/", views.job_new, name="simulation-new"),
    path("simulations/<int:pk>/", views.job_detail, name="simulation-detail"),
    path("simulations/<int:pk>/cancel/", views.job_cancel, name="simulation-cancel"),
    path("api/v1/simulations/", api.simulations, name="api-simulations"),
    path("api/v1/simulations/<int:pk>/", api.simulation_detail, name="api-simulation-detail"),
    path("traces/<int:pk>/replay/", views.trace_replay, name="trace-replay"),
    path("api/v1/traces/<int:pk>/replay/", api.trace_replay, name="api-trace-replay"),
    path("api/v1/simulations/<int:pk>/cancel/", api.simulation_cancel,
         name="api-simulation-cancel"),
]
