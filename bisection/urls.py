from django.urls import path

from . import views

urlpatterns = [
    path("bisect/", views.bisection_list, name="bisect-list"),
    path("bisect/new/", views.bisection_new, name="bisect-new"),
    path("bisect/<int:pk>/", views.bisection_detail, name="bisect-detail"),
    path("bisect/<int:pk>/log", views.bisection_log, name="bisect-log"),
    path("bisect/<int:pk>/mark/", views.bisection_mark, name="bisect-mark"),
]
