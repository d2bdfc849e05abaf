"""The core's pages (the site's features list theirs in their own urls.py)."""

from django.contrib.auth import views as auth_views
from django.urls import path

from benchmarks.comparisons import views as comparison_views
from benchmarks.pages import artifacts as artifact_views
from benchmarks.pages import site as site_views
from benchmarks.pages import views

urlpatterns = [
    path("", views.home, name="home"),
    path("runs/", views.run_list, name="run-list"),
    path("runs/<int:pk>/", views.run_detail, name="run-detail"),
    path("runs/<int:pk>/edit/", site_views.run_edit, name="run-edit"),
    path("runs/<int:pk>/withdraw/", site_views.run_withdraw_view, name="run-withdraw"),
    path("runs/<int:pk>/restore/", site_views.run_restore_view, name="run-restore"),
    path("runs/<int:pk>/diff/", views.run_diff_pick, name="run-diff-pick"),
    path("runs/<int:pk>/diff/<int:other>/", views.run_diff, name="run-diff"),
    path("artifacts/<int:pk>/raw/", artifact_views.artifact_raw, name="artifact-raw"),
    path("artifacts/<int:pk>/download/", artifact_views.artifact_download,
         name="artifact-download"),
    path("machines/", views.machine_list, name="machine-list"),
    path("machines/<int:pk>/", views.machine_detail, name="machine-detail"),
    path("machines/<int:pk>/diff/", site_views.machine_diff_pick, name="machine-diff-pick"),
    path("machines/<int:pk>/diff/<int:other>/", site_views.machine_diff_page,
         name="machine-diff"),
    path("search/", site_views.search_page, name="search"),
    path("upload/", views.upload_page, name="upload"),
    path("formats/", views.format_help, name="formats"),
    path("compare/", comparison_views.builder, name="comparison-builder"),
    path("c/<slug:slug>/", comparison_views.detail, name="comparison-detail"),
    path("c/<slug:slug>/embed", comparison_views.embed, name="comparison-embed"),
    path("c/<slug:slug>/cells", comparison_views.cells, name="comparison-cells"),
    path("c/<slug:slug>.json", comparison_views.export_json, name="comparison-json"),
    path("c/<slug:slug>.csv", comparison_views.export_csv, name="comparison-csv"),
    path("c/<slug:slug>.txt", comparison_views.export_text, name="comparison-txt"),
    path("harness/", site_views.harness_page, name="harness"),
    path("harness/schedbench.py", views.harness_download, name="harness-download"),
    path("harness/src/", site_views.harness_source_index, name="harness-sources"),
    path("harness/src/<str:name>", site_views.harness_source, name="harness-source"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/signup/", views.signup, name="signup"),
    path("settings/", views.account_settings, name="account-settings"),
    path("settings/tokens/new/", views.token_new, name="token-new"),
    path("settings/tokens/<int:pk>/revoke/", views.token_delete, name="token-revoke"),
]
