from django.urls import path

from . import api, views

urlpatterns = [
    path("bisect/", views.bisection_list, name="bisect-list"),
    path("bisect/new/", views.bisection_new, name="bisect-new"),
    path("bisect/<int:pk>/", views.bisection_detail, name="bisect-detail"),
    path("bisect/<int:pk>/log", views.bisection_log, name="bisect-log"),
    path("bisect/<int:pk>/mark/", views.bisection_mark, name="bisect-mark"),
    path("api/v1/bisections/", api.bisections, name="api-bisections"),
    path("api/v1/bisections/<int:pk>/", api.bisection_detail, name="api-bisection-detail"),
    path("api/v1/bisections/<int:pk>/steps/", api.bisection_steps, name="api-bisection-steps"),
]
