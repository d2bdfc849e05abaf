from django.urls import path

from . import views

urlpatterns = [
    path("threads/", views.thread_list, name="thread-list"),
    path("threads/new/", views.thread_new, name="thread-new"),
    path("threads/about/<str:target_type>/<str:target_id>/", views.threads_about,
         name="threads-about"),
    path("threads/import/", views.import_page, name="thread-import"),
    path("threads/import/<int:pk>/", views.import_detail, name="thread-import-detail"),
    path("threads/<int:pk>/", views.thread_detail, name="thread-detail"),
    path("threads/<int:pk>.mbox", views.thread_mbox, name="thread-mbox"),
    path("threads/<int:pk>/follow/", views.thread_follow, name="thread-follow"),
    path("m/<path:message_id>/reply/", views.message_reply, name="message-reply"),
    path("m/<path:message_id>/edit/", views.message_edit, name="message-edit"),
    path("m/<path:message_id>/delete/", views.message_delete, name="message-delete"),
    path("m/<path:message_id>/raw/", views.message_raw, name="message-raw"),
    path("m/<path:message_id>/attachments/<int:position>/", views.attachment_download,
         name="message-attachment"),
    path("m/<path:message_id>/", views.message_detail, name="message-detail"),
]
