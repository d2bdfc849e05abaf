"""Owners fixing their own runs after upload: label, tags, withdrawal. Keyword args only.

A withdrawn run is hidden, not deleted: it leaves lists, search and new comparisons, while
frozen comparisons keep every number they froze (their pages name the withdrawn source) and the
run's own page still answers, saying it was withdrawn. Staff can restore it.

A re-upload of a withdrawn result is stored as a new run rather than linked to the withdrawn
one (services.runs.runs_already_stored looks at visible runs only): the uploader meant to
publish it, and a link to a hidden run would publish nothing.
"""

import re

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone

from benchmarks.errors import InputError
from benchmarks.models import Run, RunVisibilityChange
from benchmarks.signals import runs_visibility_changed

MAX_TAGS = 20
MAX_LABEL = 200
# ASCII only: a tag is matched inside the stored JSON text (selectors.run_filter `tag=`).
TAG = re.compile(r"[A-Za-z0-9_.+:@/-]{1,50}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069]")
_unset = object()


def may_edit(user, run: Run) -> bool:
    """The submitter of the run, or staff."""
    if not (user and user.is_authenticated):
        return False
    return user.is_staff or (run.submitter_id is not None and run.submitter_id == user.pk)


def _authorise(user, run: Run, doing: str) -> None:
    if not may_edit(user, run):
        raise PermissionDenied(f"only the submitter of run {run.pk} or staff can {doing} it")


def clean_label(label) -> str:
    if not isinstance(label, str):
        raise InputError("label must be a string", field="label")
    label = label.strip()
    if len(label) > MAX_LABEL:
        raise InputError(f"label is {len(label)} characters long; at most {MAX_LABEL}",
                         field="label")
    if _CONTROL.search(label):
        raise InputError("label may not contain control or direction-override characters",
                         field="label")
    return label


def clean_tags(tags) -> list[str]:
    """A list of tags, or a string of them separated by spaces or commas; order kept, repeats
    dropped. A tag is 1-50 letters, digits or `_ . + : @ / -`."""
    if isinstance(tags, str):
        tags = [part for part in re.split(r"[\s,]+", tags) if part]
    if not isinstance(tags, list):
        raise InputError("tags must be a list of strings", field="tags")
    cleaned: list[str] = []
    for position, tag in enumerate(tags):
        if not isinstance(tag, str) or not TAG.fullmatch(tag):
            raise InputError(f"tags[{position}] must be 1-50 letters, digits or _ . + : @ / - "
                             f"(got {tag!r:.60})", field="tags")
        if tag not in cleaned:
            cleaned.append(tag)
    if len(cleaned) > MAX_TAGS:
        raise InputError(f"at most {MAX_TAGS} tags per run", field="tags")
    return cleaned


def run_update(*, run: Run, user, label=_unset, tags=_unset) -> Run:
    """Set the label and/or the tags of a run (omitted ones stay as they are)."""
    _authorise(user, run, "edit")
    changed = []
    if label is not _unset:
        run.label = clean_label(label)
        changed.append("label")
    if tags is not _unset:
        run.tags = clean_tags(tags)
        changed.append("tags")
    if changed:
        run.save(update_fields=changed)
    return run


def _forget_cached_pages() -> None:
    from benchmarks.comparisons.pagecache import frozen_pages

    frozen_pages.forget_version()


def run_withdraw(*, run: Run, user) -> Run:
    """Hide a run from lists, search and new comparisons. Withdrawing twice changes nothing."""
    _authorise(user, run, "withdraw")
    if run.withdrawn is not None:
        return run
    with transaction.atomic():
        run.withdrawn, run.withdrawn_by = timezone.now(), user
        run.save(update_fields=["withdrawn", "withdrawn_by"])
        RunVisibilityChange.objects.create(run_id=run.pk, user=user,
                                           action=RunVisibilityChange.Action.WITHDRAW)
        runs_visibility_changed.send(sender=Run, run_ids=[run.pk])
    _forget_cached_pages()
    return run


def run_restore(*, run: Run, user) -> Run:
    """Bring a withdrawn run back (staff only: a withdrawal may answer a complaint)."""
    if not (user and user.is_authenticated and user.is_staff):
        raise PermissionDenied("only staff can restore a withdrawn run")
    if run.withdrawn is None:
        return run
    with transaction.atomic():
        run.withdrawn, run.withdrawn_by = None, None
        run.save(update_fields=["withdrawn", "withdrawn_by"])
        RunVisibilityChange.objects.create(run_id=run.pk, user=user,
                                           action=RunVisibilityChange.Action.RESTORE)
        runs_visibility_changed.send(sender=Run, run_ids=[run.pk])
    _forget_cached_pages()
    return run
