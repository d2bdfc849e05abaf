"""REST API v1 for threads (docs/discussions.md). Errors are JSON {"error": ...}."""

import json

from django.conf import settings
from django.http import Http404
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    extend_schema,
    extend_schema_field,
)
from rest_framework import serializers, status
from rest_framework.decorators import api_view, parser_classes
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response

from benchmarks.api.jsonbody import DepthLimitedJSONParser
from benchmarks.api.requests import NameOrObject, RequestSerializer, Text
from benchmarks.api.serializers import ResponseSerializer
from benchmarks.errors import InputError

from . import importjobs, selectors, services
from .models import ImportJob, Post, Thread
from .targets import TargetError, target_resolve


class AttachToField(NameOrObject):
    """An object {"type", "id"}, or a string: "run:12" or the object as JSON."""


extend_schema_field({"oneOf": [
    {"type": "object", "properties": {
        "type": {"type": "string", "enum": ["run", "comparison", "simulation", "regression"]},
        "id": {"type": "string"}}, "required": ["type", "id"]},
    {"type": "string", "description": '"run:12", or the object as JSON'}]})(AttachToField)


class ThreadStartSerializer(RequestSerializer):
    subject = Text(help_text=f"cut to {services.MAX_SUBJECT} characters")
    body = Text(max_length=services.MAX_BODY)
    attach_to = AttachToField(required=False)


class ReplySerializer(RequestSerializer):
    body = Text(max_length=services.MAX_BODY)
    subject = Text(required=False, help_text=f"cut to {services.MAX_SUBJECT} characters")
    in_reply_to = Text(required=False, max_length=998, help_text="a Message-ID in the thread")


class ImportSerializer(RequestSerializer):
    tolerated = frozenset({"csrfmiddlewaretoken"})  # a page's form sends it with the fields
    file = serializers.FileField(help_text="mbox or mbox.gz", allow_empty_file=True)
    attach_to = Text(required=False, help_text='JSON {"type": "run", "id": "12"}, or "run:12"')


class AttachmentSerializer(ResponseSerializer):
    filename = serializers.CharField()
    content_type = serializers.CharField()
    size = serializers.IntegerField()


class PostSerializer(ResponseSerializer):
    id = serializers.IntegerField()
    message_id = serializers.CharField()
    in_reply_to = serializers.CharField(allow_null=True)
    author = serializers.CharField()
    date = serializers.CharField()
    subject = serializers.CharField(allow_blank=True)
    depth = serializers.IntegerField()
    body = serializers.CharField(allow_blank=True)
    deleted = serializers.BooleanField()
    runs = serializers.ListField(child=serializers.IntegerField())
    attachments = AttachmentSerializer(many=True)
    url = serializers.CharField()


class TargetSerializer(ResponseSerializer):
    type = serializers.CharField()
    id = serializers.CharField()


class ThreadSerializer(ResponseSerializer):
    id = serializers.IntegerField()
    subject = serializers.CharField(allow_blank=True)
    posts_count = serializers.IntegerField()
    attach_to = TargetSerializer(allow_null=True)
    last_activity = serializers.CharField()
    url = serializers.CharField()
    mbox = serializers.CharField()
    posts = PostSerializer(many=True, required=False, help_text="in thread order")


class ThreadListSerializer(ResponseSerializer):
    count = serializers.IntegerField()
    results = ThreadSerializer(many=True)


class ImportedThreadSerializer(ResponseSerializer):
    id = serializers.IntegerField()
    subject = serializers.CharField(allow_blank=True)
    posts = serializers.IntegerField()
    new_posts = serializers.IntegerField()
    url = serializers.CharField()


class ImportJobRefSerializer(ResponseSerializer):
    id = serializers.IntegerField()
    url = serializers.URLField()
    status = serializers.CharField()


class ImportReportSerializer(ResponseSerializer):
    threads = ImportedThreadSerializer(many=True)
    imported = serializers.IntegerField()
    skipped = serializers.IntegerField()
    runs_extracted = serializers.IntegerField()
    problems = serializers.ListField(child=serializers.JSONField())
    job = ImportJobRefSerializer(required=False)


class ImportProgressSerializer(ResponseSerializer):
    stage = serializers.CharField(allow_blank=True)
    done = serializers.IntegerField()
    total = serializers.IntegerField(allow_null=True)


class ImportQueuedSerializer(ResponseSerializer):
    """202: the worker is still importing; poll `url`."""

    id = serializers.IntegerField()
    url = serializers.URLField()
    page = serializers.URLField()
    status = serializers.CharField()
    progress = ImportProgressSerializer()


class ImportJobSerializer(ResponseSerializer):
    id = serializers.IntegerField()
    url = serializers.URLField()
    page = serializers.CharField()
    status = serializers.CharField()
    progress = ImportProgressSerializer()
    filename = serializers.CharField(allow_blank=True)
    error = serializers.CharField(allow_null=True)
    result = serializers.JSONField(allow_null=True, help_text="the import report once finished")


def _site_url(request) -> str:
    return request.build_absolute_uri("/").rstrip("/")


def post_json(post: Post) -> dict:
    return {
        "id": post.pk, "message_id": post.message_id, "in_reply_to": post.in_reply_to or None,
        "author": post.author, "date": post.date.isoformat(), "subject": post.subject,
        "depth": post.depth, "body": "" if post.deleted else post.body,
        "deleted": post.deleted, "runs": selectors.run_ids_of(post),
        "attachments": [{"filename": a.filename, "content_type": a.content_type,
                         "size": a.size} for a in post.attachment_list],
        "url": post.get_absolute_url(),
    }


def thread_json(thread: Thread, *, posts=None) -> dict:
    data = {
        "id": thread.pk, "subject": thread.subject, "posts_count": thread.post_count,
        "attach_to": ({"type": thread.target_type, "id": thread.target_id}
                      if thread.target_type else None),
        "last_activity": thread.last_activity.isoformat(), "url": thread.get_absolute_url(),
        "mbox": reverse("thread-mbox", args=[thread.pk]),
    }
    if posts is not None:
        data["posts"] = [post_json(post) for post in posts]
    return data


def _target(raw):
    """attach_to as an object, a JSON string, or "type:id"; None when absent."""
    if raw in (None, "", {}):
        return None
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            kind, _, ident = raw.partition(":")
            raw = {"type": kind, "id": ident}
    if not isinstance(raw, dict):
        raise TargetError('attach_to must be {"type": ..., "id": ...}')
    return target_resolve(raw.get("type"), raw.get("id"))


@extend_schema(methods=["GET"], operation_id="threads_list", responses={200: ThreadListSerializer},
               parameters=[OpenApiParameter("page", int), OpenApiParameter("target_type", str),
                           OpenApiParameter("target_id", str)])
@extend_schema(methods=["POST"], operation_id="threads_start", request=ThreadStartSerializer,
               responses={201: ThreadSerializer}, examples=[OpenApiExample(
                   "a new thread", request_only=True, value={
                       "subject": "threadtest regression on 2.6.24",
                       "body": "2.6.24 takes 2.7 times as long as 2.6.22 at 10M loops."})])
@api_view(["GET", "POST"])
@parser_classes([DepthLimitedJSONParser])
def threads(request):
    """GET: threads, latest activity first (filter with target_type, target_id). POST: start one."""
    if request.method == "GET":
        page = selectors.thread_list_page(
            request.query_params.get("page"),
            target_type=request.query_params.get("target_type", ""),
            target_id=request.query_params.get("target_id", ""))
        return Response(ThreadListSerializer({
            "count": page.paginator.count,
            "results": [thread_json(t) for t in page.object_list]}).data)
    data = ThreadStartSerializer(data=request.data).validated()
    thread = services.thread_create(
        user=request.user, subject=data.get("subject"), body=data.get("body"),
        target=_target(data.get("attach_to")), source="api", site_url=_site_url(request))
    body = thread_json(thread, posts=selectors.thread_posts(thread))
    return Response(ThreadSerializer(body).data, status=201)


@extend_schema(responses={200: ThreadSerializer}, operation_id="threads_retrieve")
@api_view(["GET"])
def thread_detail(request, pk: int):
    """The thread with every post in thread order."""
    thread = get_object_or_404(Thread, pk=pk)
    body = thread_json(thread, posts=selectors.thread_posts(thread))
    return Response(ThreadSerializer(body).data)


@extend_schema(request=ReplySerializer, responses={201: PostSerializer})
@api_view(["POST"])
@parser_classes([DepthLimitedJSONParser])
def thread_reply(request, pk: int):
    """Reply to the message `in_reply_to` (a Message-ID in this thread), else to the first post."""
    thread = get_object_or_404(Thread, pk=pk)
    data = ReplySerializer(data=request.data).validated()
    parent = None
    if data.get("in_reply_to"):
        parent = selectors.post_by_message_id(str(data["in_reply_to"]))
        if parent is None:
            raise InputError("in_reply_to: no message with that Message-ID",
                             field="in_reply_to")
    post = services.post_reply(user=request.user, thread=thread, parent=parent,
                               body=data.get("body"), subject=data.get("subject"),
                               source="api", site_url=_site_url(request))
    post.refresh_from_db()
    return Response(PostSerializer(post_json(post)).data, status=201)


def _import_answer(request, job: ImportJob) -> Response:
    """Finished: the contract's body (201, or 200 when every message was already there, or 400)
    plus the job; still running: 202 with the URL to poll."""
    url = request.build_absolute_uri(reverse("api-thread-import-detail", args=[job.pk]))
    if job.is_active:
        body = {"id": job.pk, "url": url, "status": job.status,
                "page": request.build_absolute_uri(job.get_absolute_url()),
                "progress": {"stage": job.stage, "done": job.done, "total": job.total}}
        return Response(ImportQueuedSerializer(body).data, status=status.HTTP_202_ACCEPTED)
    body = {**(job.report or {}), "job": {"id": job.pk, "url": url, "status": job.status}}
    if job.error:
        raise InputError(job.error, field="file", **body)
    return Response(ImportReportSerializer(body).data,
                    status=201 if body.get("imported") else 200)


@extend_schema(request={"multipart/form-data": ImportSerializer},
               responses={200: ImportReportSerializer, 201: ImportReportSerializer,
                          202: ImportQueuedSerializer})
@api_view(["POST"])
@parser_classes([MultiPartParser, FormParser])
def thread_import(request):
    """Import an mbox or mbox.gz: threads, posts, and runs from the tables in the messages.
    A worker imports it; the answer waits a few seconds for the result, else is a 202."""
    data = ImportSerializer(data=request.data).validated()
    upload, target = data["file"], _target(data.get("attach_to"))
    job = importjobs.import_job_create(upload=upload, user=request.user, target=target,
                                       site_url=_site_url(request))
    job = importjobs.import_job_wait(job=job, seconds=settings.IMPORT_WAIT_SECONDS)
    return _import_answer(request, job)


@extend_schema(responses={200: ImportJobSerializer}, operation_id="threads_import_retrieve")
@api_view(["GET"])
def thread_import_detail(request, pk: int):
    """An import's progress, and its result once finished (its owner and staff only)."""
    job = ImportJob.objects.filter(pk=pk).first()
    if job is None or not (request.user.is_staff or request.user.pk == job.owner_id):
        raise Http404("no such import of yours")
    url = request.build_absolute_uri(reverse("api-thread-import-detail", args=[job.pk]))
    return Response(ImportJobSerializer(importjobs.import_job_json(job, url=url)).data)
