"""Threads and posts as a mailing list has them, plus what the portal adds: targets, runs, follows.

A post's place in its thread (`thread_order`, `depth`) is stored, so a thread page is one query
ordered by `thread_order`; `ordering.thread_layout` recomputes it whenever the tree changes.
"""

from urllib.parse import quote

from django.conf import settings
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.urls import get_script_prefix, reverse
from django.utils import timezone
from django.utils.functional import cached_property

# What Django's reverse() leaves unquoted in a path argument (RFC 3986 sub-delims and /~:@).
URL_SAFE = "!$&'()*+,;=/~:@"


class ThreadQuerySet(models.QuerySet):
    def attached_to(self, target_type: str, target_id):
        return self.filter(target_type=target_type, target_id=str(target_id))

    def latest_first(self):
        return self.order_by("-last_activity", "-id")


class Thread(models.Model):
    subject = models.CharField(max_length=300)
    # A generic target (see targets.py): "run" + run pk, "comparison" + slug, "simulation" + pk.
    target_type = models.CharField(max_length=32, blank=True)
    target_id = models.CharField(max_length=100, blank=True)
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+",
    )
    created = models.DateTimeField(default=timezone.now)
    last_activity = models.DateTimeField(default=timezone.now, db_index=True)
    post_count = models.PositiveIntegerField(default=0)

    objects = ThreadQuerySet.as_manager()

    class Meta:
        ordering = ["-last_activity", "-id"]
        indexes = [models.Index(fields=["target_type", "target_id"], name="thread_target")]

    def __str__(self):
        return self.subject

    def get_absolute_url(self):
        return reverse("thread-detail", args=[self.pk])


class PostSource(models.TextChoices):
    WEB = "web", "posted on the site"
    API = "api", "posted through the API"
    MAIL = "mail", "imported from an mbox"


class PostQuerySet(models.QuerySet):
    def in_thread_order(self):
        return self.order_by("thread_order", "id")

    def by_date(self):
        return self.order_by("date", "id")

    def for_display(self):
        """Everything a post's box shows; the post rows themselves come in one query.

        Prefetched into plain lists: `.all()` on a prefetched manager clones a QuerySet, which
        costs more than the query itself on a 1,000-post page."""
        return self.select_related("user").prefetch_related(
            models.Prefetch("attachments", to_attr="attachment_list"),
            models.Prefetch("run_links", to_attr="run_link_list"),
        )


class Post(models.Model):
    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="posts")
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="replies"
    )
    # Without the angle brackets. Unique: importing the same message twice adds nothing.
    message_id = models.CharField(max_length=255, unique=True)
    in_reply_to = models.CharField(max_length=255, blank=True, db_index=True)
    references = models.TextField(blank=True)  # message ids, oldest first, space-separated
    # The oldest message this one refers to (itself when none): a later import finds the stored
    # thread through it even when the messages in between never arrive.
    root_id = models.CharField(max_length=255, blank=True, db_index=True)
    author = models.CharField(max_length=300)
    author_email = models.CharField(max_length=254, blank=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="discussion_posts",
    )
    date = models.DateTimeField(db_index=True)
    subject = models.CharField(max_length=300)
    body = models.TextField(blank=True)  # decoded plain text, as written
    # The renderer's output for `body`, kept so a 1,000-post page does not re-render every post;
    # used only while `render_version` matches render.RENDER_VERSION (see post_body_html).
    body_html = models.TextField(blank=True, editable=False)
    render_version = models.PositiveSmallIntegerField(default=0, editable=False)
    raw = models.BinaryField(blank=True, default=b"")  # imported source, verbatim (no From_ line)
    envelope = models.CharField(max_length=300, blank=True)  # the mbox From_ line it came with
    thread_order = models.PositiveIntegerField(default=0)
    depth = models.PositiveIntegerField(default=0)
    source = models.CharField(max_length=8, choices=PostSource, default=PostSource.WEB)
    notes = models.JSONField(default=list, blank=True)  # what the import could not decode
    created = models.DateTimeField(auto_now_add=True, db_index=True)
    edited = models.DateTimeField(null=True, blank=True)
    deleted = models.BooleanField(default=False)
    # PostgreSQL only: subject, author, address and body as a tsvector, kept by a trigger and
    # GIN-indexed (migration 0005), so search neither re-parses every body nor ranks by doing
    # so. Always NULL on SQLite, which searches with LIKE.
    search_vector = SearchVectorField(null=True, editable=False)

    objects = PostQuerySet.as_manager()

    class Meta:
        ordering = ["thread_id", "thread_order", "id"]
        indexes = [
            models.Index(fields=["thread", "thread_order"], name="post_thread_order"),
            models.Index(fields=["user", "created"], name="post_user_created"),
        ]

    def __str__(self):
        return f"<{self.message_id}> {self.subject}"

    def get_absolute_url(self):
        return self.url

    @cached_property
    def url(self) -> str:
        """/m/<message-id>/ as reverse() would build it, without its cost on 1,000-post pages."""
        return f"{get_script_prefix()}m/{quote(self.message_id, safe=URL_SAFE)}/"

    @cached_property
    def attachment_list(self) -> list:
        return list(self.attachments.all())  # replaced by the prefetched list in for_display()

    @cached_property
    def run_link_list(self) -> list:
        return list(self.run_links.all())

    @cached_property
    def run_ids(self) -> list[int]:
        """Runs extracted from this post."""
        return [link.run_id for link in self.run_link_list]

    @property
    def reference_ids(self) -> list[str]:
        return self.references.split()


class Attachment(models.Model):
    post = models.ForeignKey(Post, on_delete=models.CASCADE, related_name="attachments")
    position = models.PositiveSmallIntegerField(default=0)
    filename = models.CharField(max_length=255, blank=True)
    content_type = models.CharField(max_length=100, blank=True)
    size = models.PositiveIntegerField(default=0)
    text = models.TextField(blank=True)  # decoded, for text and code attachments
    content = models.BinaryField(blank=True, default=b"")  # bytes of anything else

    class Meta:
        ordering = ["post_id", "position", "id"]

    def __str__(self):
        return self.filename or f"attachment {self.position}"


class PostRun(models.Model):
    """A run extracted from a post's own text. The first post to report a result set owns the
    link; a later post repeating the same numbers links to the same run, naming the first."""

    post = models.ForeignKey(Post, on_delete=models.CASCADE, related_name="run_links")
    run = models.ForeignKey("benchmarks.Run", on_delete=models.CASCADE, related_name="+")
    # Message-ID of the post that first reported this run, when this post repeats it; "" when
    # this post is the first, "upload" when the run came from elsewhere first.
    reported_in = models.CharField(max_length=255, blank=True)

    class Meta:
        ordering = ["post_id", "run_id"]
        constraints = [
            models.UniqueConstraint(fields=["post", "run"], name="postrun_unique_per_post")
        ]

    def __str__(self):
        return f"run {self.run_id} from post {self.post_id}"


class ThreadFollow(models.Model):
    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="follows")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="thread_follows"
    )
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["thread", "user"], name="thread_follow_unique")
        ]

    def __str__(self):
        return f"{self.user} follows {self.thread_id}"


class ImportStatus(models.TextChoices):
    QUEUED = "queued", "queued"
    RUNNING = "running", "running"
    SUCCEEDED = "succeeded", "succeeded"
    FAILED = "failed", "failed"


class ImportJob(models.Model):
    """An mbox import, run by a worker: the request stores the file and returns at once."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                              related_name="+")
    file = models.FileField(upload_to="imports/%Y/%m/")
    filename = models.CharField(max_length=255, blank=True)
    size = models.PositiveBigIntegerField(default=0)
    target_type = models.CharField(max_length=32, blank=True)
    target_id = models.CharField(max_length=100, blank=True)
    site_url = models.CharField(max_length=300, blank=True)  # for the links in follower mail
    status = models.CharField(max_length=16, choices=ImportStatus, default=ImportStatus.QUEUED)
    stage = models.CharField(max_length=40, blank=True)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    report = models.JSONField(null=True, blank=True)  # ImportReport.as_dict() once finished
    error = models.TextField(blank=True)
    created = models.DateTimeField(auto_now_add=True)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created", "-id"]

    def __str__(self):
        return f"import #{self.pk} {self.filename} ({self.status})"

    def get_absolute_url(self):
        return reverse("thread-import-detail", args=[self.pk])

    @property
    def is_active(self) -> bool:
        return self.status in (ImportStatus.QUEUED, ImportStatus.RUNNING)
