from django.urls import path

from . import feeds, views

urlpatterns = [
    path("regressions/", views.regression_list, name="regression-list"),
    path("regressions/follow/", views.follow_toggle, name="regression-follow"),
    path("regressions/<int:pk>/", views.regression_detail, name="regression-detail"),
    path("regressions/<int:pk>/status/", views.regression_status, name="regression-status"),
    path("regressions/<int:pk>/compare/", views.regression_compare,
         name="regression-compare"),
    path("regressions/runs/<int:pk>/compare/", views.run_verdict_compare,
         name="run-verdict-compare"),
    path("feeds/regressions.atom", feeds.RegressionsFeed(), name="feed-regressions"),
    path("feeds/runs.atom", feeds.RunsFeed(), name="feed-runs"),
]
