from django.urls import path

from . import views

urlpatterns = [
    path("simulations/", views.job_list, name="simulation-list"),
    path("simulations/new/", views.job_new, name="simulation-new"),
    path("simulations/<int:pk>/", views.job_detail, name="simulation-detail"),
    path("simulations/<int:pk>/cancel/", views.job_cancel, name="simulation-cancel"),
    path("traces/<int:pk>/replay/", views.trace_replay, name="trace-replay"),
    path("runs/<int:pk>/predict/", views.run_predict, name="run-predict"),
]
