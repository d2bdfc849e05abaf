"""Pages. Each view parses, authorises, makes one call, and renders."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.text import get_valid_filename
from django.views.decorators.http import require_POST

from . import importjobs, selectors, services
from .drafts import draft_text
from .forms import ImportForm, ReplyForm, ThreadStartForm
from .mbox import export_mbox
from .models import Attachment, ImportJob, Thread, ThreadFollow
from .quoting import quote_for_reply
from .targets import TargetError, target_resolve


def _site_url(request) -> str:
    return request.build_absolute_uri("/").rstrip("/")


def _post_or_404(message_id: str):
    post = selectors.post_by_message_id(message_id)
    if post is None:
        raise Http404("no message with that Message-ID")
    return post


def _target_or_none(target_type: str, target_id: str):
    return target_resolve(target_type, target_id) if target_type else None


def thread_list(request):
    filters = {"target_type": request.GET.get("target_type", ""),
               "target_id": request.GET.get("target_id", "")}
    page = selectors.thread_list_page(request.GET.get("page"), **filters)
    return render(request, "discussions/thread_list.html", {"page": page, **filters})


def threads_about(request, target_type: str, target_id: str):
    """The "threads about this" panel alone, for pages cached whole (frozen comparisons)
    that fetch it after loading."""
    try:
        target_resolve(target_type, target_id)
    except TargetError as exc:
        raise Http404(str(exc)) from None
    return render(request, "discussions/_attached.html",
                  {"target_type": target_type, "target_id": target_id})


@login_required
def thread_new(request):
    form = ThreadStartForm(request.POST or None, initial=request.GET.dict())
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            thread = services.thread_create(
                user=request.user, subject=data["subject"], body=data["body"],
                target=_target_or_none(data["target_type"], data["target_id"]),
                site_url=_site_url(request))
        except (services.DiscussionError, TargetError) as exc:
            form.add_error(None, str(exc))
        else:
            return redirect(thread)
    target = None
    if form["target_type"].value():
        try:
            target = _target_or_none(form["target_type"].value(), form["target_id"].value())
        except TargetError as exc:
            form.add_error(None, str(exc))
    return render(request, "discussions/thread_new.html", {"form": form, "target": target})


def thread_detail(request, pk: int):
    thread = get_object_or_404(Thread, pk=pk)
    flat = request.GET.get("view") == "flat"
    context = {
        "view": selectors.thread_page(thread, page_number=request.GET.get("page"), flat=flat,
                                      whole=request.GET.get("all") == "1"),
        "target": _safe_target(thread),
        "following": request.user.is_authenticated
        and ThreadFollow.objects.filter(thread=thread, user=request.user).exists(),
    }
    return render(request, "discussions/thread_detail.html", context)


def _safe_target(thread: Thread):
    try:
        return _target_or_none(thread.target_type, thread.target_id)
    except TargetError:
        return None  # the run or comparison was deleted; the thread stays


def thread_mbox(request, pk: int):
    thread = get_object_or_404(Thread, pk=pk)
    posts = selectors.thread_posts(thread).filter(deleted=False).prefetch_related(None)
    response = HttpResponse(export_mbox(posts), content_type="application/mbox")
    response["Content-Disposition"] = f'attachment; filename="thread-{thread.pk}.mbox"'
    return response


@login_required
@require_POST
def thread_follow(request, pk: int):
    thread = get_object_or_404(Thread, pk=pk)
    follow = request.POST.get("follow") == "1"
    services.thread_follow(user=request.user, thread=thread, follow=follow)
    messages.info(request, "You will get an email for every new post." if follow
                  else "You no longer follow this thread.")
    return redirect(thread)


def message_detail(request, message_id: str):
    post = _post_or_404(message_id)
    context = {"post": post, "thread": post.thread,
               "can_edit": services.can_edit(request.user, post)}
    return render(request, "discussions/message.html", context)


def message_raw(request, message_id: str):
    post = _post_or_404(message_id)
    source = bytes(post.raw) if post.raw else post.body.encode("utf-8")
    # text/plain + nosniff: a hostile message can never be interpreted as a page.
    return HttpResponse(source, content_type="text/plain; charset=utf-8")


def attachment_download(request, message_id: str, position: int):
    attachment = get_object_or_404(Attachment, post__message_id=message_id, position=position)
    data = bytes(attachment.content) if attachment.content else attachment.text.encode("utf-8")
    response = HttpResponse(data, content_type="application/octet-stream")
    filename = get_valid_filename(attachment.filename or f"attachment-{position}") or "attachment"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@login_required
def message_reply(request, message_id: str):
    parent = _post_or_404(message_id)
    initial = {"subject": services.reply_subject(parent.subject), "body": ""}
    if request.GET.get("quote") == "1":
        initial["body"] = quote_for_reply(author=parent.author, date=parent.date,
                                          body=parent.body)
    initial["body"] += draft_text(request.GET.get("draft", ""), site_url=_site_url(request))
    form = ReplyForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            post = services.post_reply(
                user=request.user, thread=parent.thread, parent=parent,
                body=form.cleaned_data["body"], subject=form.cleaned_data["subject"] or None,
                site_url=_site_url(request))
        except services.DiscussionError as exc:
            form.add_error(None, str(exc))
        else:
            return redirect(f"{parent.thread.get_absolute_url()}#m-{post.pk}")
    return render(request, "discussions/post_form.html",
                  {"form": form, "parent": parent, "thread": parent.thread, "mode": "reply"})


@login_required
def message_edit(request, message_id: str):
    post = _post_or_404(message_id)
    if not services.can_edit(request.user, post):
        raise PermissionDenied("only the author or staff can edit this message")
    form = ReplyForm(request.POST or None, initial={"subject": post.subject, "body": post.body})
    if request.method == "POST" and form.is_valid():
        try:
            services.post_edit(user=request.user, post=post, body=form.cleaned_data["body"],
                               subject=form.cleaned_data["subject"] or None)
        except services.DiscussionError as exc:
            form.add_error(None, str(exc))
        else:
            return redirect(post)
    return render(request, "discussions/post_form.html",
                  {"form": form, "parent": post, "thread": post.thread, "mode": "edit"})


@login_required
@require_POST
def message_delete(request, message_id: str):
    post = _post_or_404(message_id)
    services.post_delete(user=request.user, post=post)  # PermissionDenied -> 403
    messages.info(request, "The message was deleted; its replies keep their place.")
    return redirect(post.thread)


@login_required
def import_page(request):
    """The upload form; a valid file becomes an import job and the browser goes to its page."""
    form = ImportForm(request.POST or None, request.FILES or None)
    status = 400
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            job = importjobs.import_job_create(
                upload=data["file"], user=request.user,
                target=_target_or_none(data["target_type"], data["target_id"]),
                site_url=_site_url(request))
        except (TargetError, importjobs.ImportTooLarge, importjobs.ImportRateLimited) as exc:
            form.add_error(None, str(exc))
            status = getattr(exc, "status", 400)
        else:
            return redirect(job)
    return render(request, "discussions/import.html", {"form": form},
                  status=(status if form.errors else 200))


@login_required
def import_detail(request, pk: int):
    """An import's progress while a worker runs it, then its report."""
    job = get_object_or_404(ImportJob, pk=pk)
    if not (request.user.is_staff or request.user.pk == job.owner_id):
        raise Http404("no such import of yours")
    return render(request, "discussions/import_job.html", {"job": job, "report": job.report})
