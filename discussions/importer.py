"""mbox import: messages become posts in threads, tables in their own text become runs.

Bad input never raises: what could not be read is in the report's `problems`, each with the
message it concerns and why. Messages already stored (same Message-ID) are skipped.
"""

import gc
import logging
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection, models, transaction
from django.db.models import Q
from django.utils import timezone

from benchmarks.models import RunSource
from benchmarks.services.ingest import TableInput, tables_ingest
from benchmarks.services.runs import runs_stored_together

from . import notifications
from .dbwriter import StatementWriter
from .extraction import find_tables
from .mail import MailMessage, parse_message
from .mbox import GZIP_MAGIC, chunk_problem, gunzip, split_mbox
from .models import Attachment, Post, PostRun, PostSource, Thread
from .render import attachment_kind, rendered_fields
from .services import (
    REPLY_PREFIXES,
    posts_parents_write,
    thread_places_before_insert,
    thread_relayout,
    thread_subject,
)
from .targets import Target

logger = logging.getLogger(__name__)
BATCH = 500
TABLES_PER_BATCH = 500
# Whether post batches go to the database from a writer thread (dbwriter.StatementWriter):
# None lets the writer decide (PostgreSQL: yes). Tests set it both ways and compare.
WRITER_THREADED: bool | None = None


@dataclass
class ImportReport:
    threads: list[Thread] = field(default_factory=list)
    posts_by_thread: dict[int, int] = field(default_factory=dict)
    imported: int = 0
    skipped: int = 0
    runs_extracted: int = 0
    # Result sets a message repeats (already stored): linked to the stored run, not counted
    # in runs_extracted. Each {"message", "run", "reported_in"}.
    repeated: list[dict] = field(default_factory=list)
    problems: list[dict] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)  # per phase, for bench scripts
    created_thread_ids: set[int] = field(default_factory=set)  # threads this import started

    def problem(self, message: MailMessage | None, reason: str, position: int | None = None):
        where = None
        if message is not None:
            where = f"#{message.position} <{message.message_id}>"
        elif position is not None:
            where = f"#{position}"
        self.problems.append({"message": where, "reason": reason})

    def as_dict(self) -> dict:
        return {
            "threads": [
                {"id": t.pk, "subject": t.subject, "posts": t.post_count,
                 "new_posts": self.posts_by_thread.get(t.pk, 0), "url": t.get_absolute_url()}
                for t in self.threads
            ],
            "imported": self.imported,
            "skipped": self.skipped,
            "runs_extracted": self.runs_extracted,
            "repeated": self.repeated,
            "problems": self.problems,
        }


def _read_messages(data: bytes, report: ImportReport) -> list[MailMessage]:
    if data[:2] == GZIP_MAGIC:
        limit = settings.MAX_UPLOAD_MB * 4 << 20
        data, problem = gunzip(data, limit)
        if problem:
            report.problem(None, problem)
    contents = split_mbox(data)
    report.problems.extend(contents.problems)
    messages = []
    for chunk in contents.chunks:
        message = _chunk_message(chunk, report)
        for warning in chunk.warnings:  # reported, not kept with the post
            report.problem(message, warning, chunk.position)
        if message is not None:
            messages.append(message)
    if messages and not data.endswith(b"\n"):
        messages[-1].notes.append("the file ends in the middle of this message (truncated?)")
    return messages


def _chunk_message(chunk, report: ImportReport) -> MailMessage | None:
    """The chunk as a message, or None with the reason in the report."""
    reason = chunk_problem(chunk)
    if reason:
        report.problem(None, reason, chunk.position)
        return None
    try:
        return parse_message(chunk.raw, envelope=chunk.envelope, position=chunk.position)
    except Exception as exc:  # noqa: BLE001 - one unreadable message must not stop the rest
        logger.warning("mbox message %s unreadable", chunk.position, exc_info=True)
        report.problem(None, f"could not be read ({type(exc).__name__})", chunk.position)
        return None


def _new_messages(messages: list[MailMessage], report: ImportReport) -> list[MailMessage]:
    seen, unique = set(), []
    for message in messages:
        if message.message_id in seen:
            report.skipped += 1
            report.problem(message, "duplicate Message-ID in this file: kept the first copy")
            continue
        seen.add(message.message_id)
        unique.append(message)
    stored = set()
    for start in range(0, len(unique), BATCH):
        ids = [m.message_id for m in unique[start:start + BATCH]]
        stored.update(Post.objects.filter(message_id__in=ids).values_list("message_id",
                                                                           flat=True))
    report.skipped += len(stored)
    return [m for m in unique if m.message_id not in stored]


class _Groups:
    """Union-find over message ids: a message, its parents and its references share a thread."""

    def __init__(self):
        self.parent: dict[str, str] = {}

    def find(self, key: str) -> str:
        self.parent.setdefault(key, key)
        while self.parent[key] != key:
            self.parent[key] = self.parent[self.parent[key]]
            key = self.parent[key]
        return key

    def union(self, a: str, b: str) -> None:
        self.parent[self.find(a)] = self.find(b)


def _join_replies_without_headers(messages: list[MailMessage], groups: _Groups) -> None:
    """Old mailers sent "Re: subject" without In-Reply-To or References: such a reply joins
    the message in the same file that started that subject."""
    starters: dict[str, str] = {}
    for message in sorted(messages, key=lambda m: (m.date or timezone.now(), m.position)):
        if not message.subject.lower().startswith(REPLY_PREFIXES):
            starters.setdefault(thread_subject(message.subject).lower(), message.message_id)
    for message in messages:
        orphan = not message.in_reply_to and not message.references
        if orphan and message.subject.lower().startswith(REPLY_PREFIXES):
            starter = starters.get(thread_subject(message.subject).lower())
            if starter:
                groups.union(message.message_id, starter)
                message.in_reply_to = starter  # so the layout hangs it under the starter
                message.notes.append("no In-Reply-To or References: threaded by subject")


def _group(messages: list[MailMessage]) -> dict[str, list[MailMessage]]:
    groups = _Groups()
    for message in messages:
        groups.find(message.message_id)
        for related in [message.in_reply_to, *message.references]:
            if related:
                groups.union(message.message_id, related)
    _join_replies_without_headers(messages, groups)
    grouped: dict[str, list[MailMessage]] = {}
    for message in messages:
        grouped.setdefault(groups.find(message.message_id), []).append(message)
    return grouped


def _related_ids(group: list[MailMessage]) -> tuple[list[str], list[str]]:
    own = [m.message_id for m in group]
    related = list({mid for m in group for mid in [m.in_reply_to, *m.references] if mid})
    return own, related


def _stored_thread_ids(groups: list[list[MailMessage]]) -> list[int | None]:
    """For each conversation, a stored thread it belongs to: one of its posts is a parent, a
    child or shares a root reference with a message of the group (the smallest such thread's
    id, looking at the group's ids BATCH at a time as the rule has always read them).

    The stored posts that touch any id of any group are read in a few queries for the whole
    import; each group's answer is then found in memory (a query per group was most of the
    time of a large import). Groups of one file never touch each other's posts (they would be
    one group), so reading before storing any of them answers as storing one by one did."""
    by_column: dict[str, dict[str, set[int]]] = {"message_id": {}, "root_id": {},
                                                 "in_reply_to": {}}
    every = sorted({mid for group in groups for part in _related_ids(group) for mid in part})
    for start in range(0, len(every), BATCH):
        part = every[start:start + BATCH]
        rows = Post.objects.filter(Q(message_id__in=part) | Q(root_id__in=part)
                                   | Q(in_reply_to__in=part)).values_list(
            "thread_id", "message_id", "root_id", "in_reply_to")
        for thread_id, *values in rows:
            for column, value in zip(("message_id", "root_id", "in_reply_to"), values,
                                     strict=True):
                by_column[column].setdefault(value, set()).add(thread_id)
    return [_stored_thread_id(group, by_column) for group in groups]


def _stored_thread_id(group: list[MailMessage], by_column) -> int | None:
    own, related = _related_ids(group)
    for start in range(0, max(len(own), len(related)), BATCH):
        matches: set[int] = set()
        for column, ids in (("message_id", related[start:start + BATCH]),
                            ("root_id", related[start:start + BATCH]),
                            ("in_reply_to", own[start:start + BATCH]),
                            ("root_id", own[start:start + BATCH])):
            for mid in ids:
                matches.update(by_column[column].get(mid, ()))
        if matches:
            return min(matches)
    return None


def _new_thread(group: list[MailMessage], user, target: Target | None) -> Thread:
    first = min(group, key=lambda m: (m.date or timezone.now(), m.position))
    return Thread(
        subject=thread_subject(first.subject), started_by=user,
        target_type=target.type if target else "", target_id=target.id if target else "",
        created=first.date or timezone.now(),
    )


def _post_row(message: MailMessage, thread: Thread) -> Post:
    """The message as a new post. The post takes over the raw message (the message keeps no
    copy), so the bytes are freed once the post is written (_release_written)."""
    post = Post(
        thread=thread, message_id=message.message_id, in_reply_to=message.in_reply_to,
        references=" ".join(message.references[-50:]), author=message.author[:300],
        root_id=(message.references or [message.in_reply_to or message.message_id])[0],
        author_email=message.author_email[:254], date=message.date or timezone.now(),
        subject=message.subject[:300] or "(no subject)", body=message.body, raw=message.raw,
        envelope=message.envelope[:300], source=PostSource.MAIL, notes=message.notes[:20],
    )
    message.raw = b""
    return post


# What a written post no longer needs in memory: the raw message and its rendering, the largest
# of its values (a third of an import's memory). Dropped from the instance they become deferred
# fields, so a later read of one loads it from the database, and a save() leaves it alone.
_HEAVY_FIELDS = ("raw", "body_html")


def _release_written(posts: list[Post]) -> None:
    """Forget the heavy values of posts whose INSERT has its parameters (or ran)."""
    for post in posts:
        for name in _HEAVY_FIELDS:
            post.__dict__.pop(name, None)


def _render_rows(posts: list[Post]) -> None:
    """Each post's stored rendering (render.rendered_fields of its body). Done per batch just
    before the batch is written, so it runs while the writer sends the previous batch."""
    for post in posts:
        for name, value in rendered_fields(post.body).items():
            setattr(post, name, value)


def _reserved_post_ids(count: int) -> list[int] | None:
    """Ids for `count` new posts, increasing, drawn from the table's own sequence (PostgreSQL),
    so their parents go in with them; None where ids are only known after the insert (SQLite).
    Setting parents afterwards rewrote every row, and with it every index entry of the post."""
    if connection.vendor != "postgresql" or not count:
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT nextval(pg_get_serial_sequence(%s, 'id')) "
                       "FROM generate_series(1, %s)", [Post._meta.db_table, count])
        return sorted(row[0] for row in cursor.fetchall())


def _parents_with_ids(rows, places, ids: list[int]) -> None:
    """Give the posts (in `rows` order) the reserved ids, and each its parent's."""
    posts = [post for thread_posts in rows for post in thread_posts]
    for post, pk in zip(posts, ids, strict=True):
        post.pk = pk
    for thread_posts, parent_of in zip(rows, places, strict=True):
        for post, parent in zip(thread_posts, parent_of, strict=True):
            if parent is not None:
                post.parent_id = thread_posts[parent].pk


def _parents_after_insert(threads, rows, places) -> None:
    """Parents set by one UPDATE per batch once the inserted posts have their ids."""
    parents = []
    for thread, posts, parent_of in zip(threads, rows, places, strict=True):
        if any(a.pk >= b.pk for a, b in zip(posts, posts[1:], strict=False)):
            # The layout broke ties between posts of one date by insertion order, which the
            # keys follow everywhere we know of; were they ever not to, lay it out from them.
            thread_relayout(thread=thread)
            continue
        parents += [(post.pk, posts[parent].pk) for post, parent in zip(posts, parent_of,
                                                                        strict=True)
                    if parent is not None]
    posts_parents_write(pairs=parents)


def _nothing() -> None:
    pass


def _posts_insert(posts: list[Post], meanwhile=_nothing) -> None:
    """Post.objects.bulk_create(posts) with the same values (each field's pre_save and
    get_db_prep_save, as bulk_create takes them) in one plain INSERT per batch: Django's
    compiler builds a placeholder object per value, which cost more than preparing the values
    (a fifth of an import's time). Each batch is rendered (_render_rows) just before it is
    prepared. Posts without ids get theirs back in order, as bulk_create does; where the
    database cannot return them, bulk_create itself runs.

    Posts with ids (reserved on PostgreSQL) are sent by a StatementWriter: the database
    writes one batch while this thread renders and prepares the next, then runs `meanwhile`
    (more of the import's Python work) while the last batches are written."""
    with_ids = bool(posts) and posts[0].pk is not None
    if not posts or not (with_ids or connection.features.can_return_rows_from_bulk_insert):
        _render_rows(posts)
        Post.objects.bulk_create(posts, batch_size=BATCH)
        _release_written(posts)
        meanwhile()
        return
    fields = [f for f in Post._meta.concrete_fields if with_ids or not f.primary_key]
    quote = connection.ops.quote_name
    columns = ", ".join(quote(f.column) for f in fields)
    into = f"INSERT INTO {quote(Post._meta.db_table)} ({columns})"
    returning = "" if with_ids else f" RETURNING {quote(Post._meta.pk.column)}"
    row = "(" + ", ".join(["%s"] * len(fields)) + ")"
    size = max(1, min(BATCH, connection.ops.bulk_batch_size(fields, posts)))
    batches = (posts[start:start + size] for start in range(0, len(posts), size))
    if with_ids:
        with StatementWriter(threaded=WRITER_THREADED) as writer:
            for part in batches:
                writer.send(f"{into} VALUES {', '.join([row] * len(part))}",
                            _insert_params(part, fields))
                _release_written(part)  # the parameters hold them until the batch is written
            meanwhile()
    else:
        with connection.cursor() as cursor:
            for part in batches:
                cursor.execute(f"{into} VALUES {', '.join([row] * len(part))}{returning}",
                               _insert_params(part, fields))
                for post, (pk,) in zip(part, cursor.fetchall(), strict=True):
                    post.pk = pk
                _release_written(part)
        meanwhile()
    for post in posts:
        post._state.adding, post._state.db = False, connection.alias


def _insert_params(posts: list[Post], fields) -> list:
    """The batch's INSERT parameters, rendered first, each value as bulk_create prepares it."""
    _render_rows(posts)
    plain = _plain_fields(fields)
    params = []
    for post in posts:
        post._prepare_related_fields_for_save(operation_name="bulk_create")
        params += _prepared_values(post, fields, plain)
    return params


# Django's own field classes whose get_db_prep_save hands back a value of this exact type
# unchanged (to_python of a str is the str, int() of an int the int, a bool stays a bool) and
# whose pre_save reads the attribute: most of a post's columns. Exact classes only: a subclass
# may convert.
_UNCHANGED_TYPES = {models.CharField: str, models.TextField: str,
                    models.PositiveIntegerField: int, models.PositiveSmallIntegerField: int,
                    models.BooleanField: bool}


def _plain_fields(fields) -> list:
    """For each field, the value type its preparation leaves unchanged, or None."""
    return [_UNCHANGED_TYPES.get(type(f)) for f in fields]


def _prepared_values(post: Post, fields, plain: list) -> list:
    """[f.get_db_prep_save(f.pre_save(post, True), connection) for f in fields], without the
    three calls per column where the value is of the type its field leaves unchanged (about a
    fifth of preparing a post; tests compare both over imported mail)."""
    values = []
    for column, kept_type in zip(fields, plain, strict=True):
        value = getattr(post, column.attname) if kept_type is not None else None
        if kept_type is None or type(value) is not kept_type:
            value = column.get_db_prep_save(column.pre_save(post, True), connection)
        values.append(value)
    return values


def _store_new_threads(groups, user, target,
                       meanwhile=_nothing) -> tuple[list[Thread], list[list[Post]]]:
    """Conversations that start new threads: each thread's layout is worked out before its
    posts are written (services.thread_places_before_insert), so the threads and their posts
    go in with one insert per batch; parents too where ids can be reserved first, else one
    more statement per batch sets them. `meanwhile` runs while the posts are written."""
    threads, rows, places = [], [], []
    for group in groups:
        thread = _new_thread(group, user, target)
        posts = [_post_row(m, thread) for m in group]
        places.append(thread_places_before_insert(posts=posts))
        thread.post_count = len(posts)
        thread.last_activity = max(post.date for post in posts)
        threads.append(thread)
        rows.append(posts)
    Thread.objects.bulk_create(threads, batch_size=BATCH)
    for thread, posts in zip(threads, rows, strict=True):
        for post in posts:
            post.thread = thread
    ids = _reserved_post_ids(sum(len(posts) for posts in rows))
    if ids is not None:
        _parents_with_ids(rows, places, ids)
    _posts_insert([post for posts in rows for post in posts], meanwhile)
    if ids is None:
        _parents_after_insert(threads, rows, places)
    return threads, rows


def _store(messages: list[MailMessage], user, target, report,
           meanwhile=_nothing) -> list[tuple[Post, MailMessage]]:
    """The messages as posts, in new threads or in the stored threads they continue.
    `meanwhile` (Python work needing no database) runs while new threads' posts are written."""
    groups = list(_group(messages).values())
    found = _stored_thread_ids(groups)
    fresh = [group for group, thread_id in zip(groups, found, strict=True) if thread_id is None]
    new_threads, new_rows = _store_new_threads(fresh, user, target, meanwhile)
    rows_of = {id(group): rows for group, rows in zip(fresh, new_rows, strict=True)}
    threads: dict[int, Thread] = {thread.pk: thread for thread in new_threads}
    report.created_thread_ids = set(threads)
    joined: dict[int, Thread] = {}
    stored = []
    for group, thread_id in zip(groups, found, strict=True):
        if thread_id is None:
            rows = rows_of[id(group)]
            thread = rows[0].thread
        else:  # posts joining a stored thread: the whole thread is laid out again below
            thread = joined.get(thread_id) or Thread.objects.select_for_update().get(
                pk=thread_id)
            joined[thread_id] = threads[thread_id] = thread
            rows = [_post_row(m, thread) for m in group]
            _render_rows(rows)
            Post.objects.bulk_create(rows, batch_size=BATCH)
            _release_written(rows)
        stored.extend(zip(rows, group, strict=True))
        report.posts_by_thread[thread.pk] = report.posts_by_thread.get(thread.pk, 0) + len(rows)
    Attachment.objects.bulk_create(
        (Attachment(post=post, position=number, filename=a.filename[:255],
                    content_type=a.content_type[:100], size=a.size, text=a.text,
                    content=a.content)
         for post, message in stored for number, a in enumerate(message.attachments, 1)),
        batch_size=BATCH,
    )
    for thread in joined.values():
        thread_relayout(thread=thread)
    report.threads = sorted(threads.values(), key=lambda t: t.pk)
    return stored


def _own_texts(message: MailMessage) -> str:
    """The body plus plain-text attachments (results files), never patches or code."""
    extra = [a.text for a in message.attachments
             if a.text and attachment_kind(a.filename, a.content_type, a.text) == "text"
             and a.content_type in ("text/plain", "")]
    return "\n\n".join([message.body, *extra])


def _message_tables(messages: list[MailMessage]) -> dict[int, list]:
    """Each message's tables (extraction.find_tables of its own texts), by id() of the
    message: found while the posts are written, used once they are (`_tables`)."""
    return {id(message): find_tables(_own_texts(message), message.subject)
            for message in messages}


def _tables(stored, known: dict[int, list] | None = None) -> list[tuple[Post, MailMessage,
                                                                            object]]:
    """Tables in each new message's own text, earliest message first, so the first poster of
    a result set owns its run and later re-pastes link to it (see `_links`). `known` holds
    what _message_tables found already; other messages are read here."""
    known = known or {}
    found = []
    for post, message in sorted(stored, key=lambda pair: (pair[0].date, pair[1].position)):
        tables = known.get(id(message))
        if tables is None:
            tables = find_tables(_own_texts(message), message.subject)
        for table in tables:
            found.append((post, message, table))
    return found


class _FirstReports:
    """Which message first reported a run: this import's own links, else the stored ones."""

    def __init__(self):
        self.known: dict[int, str] = {}

    def of(self, run_id: int) -> str:
        if run_id not in self.known:
            first = (PostRun.objects.filter(run_id=run_id, reported_in="")
                     .order_by("post__date", "post_id").values_list("post__message_id", flat=True)
                     .first())
            self.known[run_id] = first or "upload"
        return self.known[run_id]


def _links(post, message, runs, first: _FirstReports, linked: set,
           report: ImportReport) -> list[PostRun]:
    """A post's links to its runs; a run it repeats names the message that reported it."""
    links = []
    for run in runs:
        if (post.pk, run.pk) in linked:
            continue  # the same table twice in one message
        linked.add((post.pk, run.pk))
        # Stored before this import, or by an earlier message of it (a batch stores a result
        # set once and hands every table that holds it the same run).
        earlier = getattr(run, "already_stored", False) or run.pk in first.known
        reported_in = first.of(run.pk) if earlier else ""
        if reported_in == message.message_id:
            continue  # the message repeats its own table
        if not reported_in:
            first.known[run.pk] = message.message_id
        else:
            report.repeated.append({"message": f"<{message.message_id}>", "run": run.pk,
                                    "reported_in": reported_in})
        links.append(PostRun(post=post, run=run, reported_in=reported_in))
    return links


def _no_progress(stage: str, done: int, total: int) -> None:
    pass


def _extract(stored, user, report: ImportReport, progress=_no_progress,
             known_tables: dict[int, list] | None = None) -> None:
    """The tables of the new messages, a batch at a time through one bulk service call
    (`tables_ingest`: an artifact per table as an upload would keep it, one transaction,
    catalog lookups shared, one write of the runs), linked to their posts in that transaction.

    A batch is a few hundred tables: one commit per table made large imports wait on the disk,
    one transaction for all of them would hold catalog rows locked for the whole import.
    """
    tables = _tables(stored, known_tables)
    first, linked = _FirstReports(), set()
    for start in range(0, len(tables), TABLES_PER_BATCH):
        progress("extracting runs", start, len(tables))
        batch = tables[start:start + TABLES_PER_BATCH]

        def link(outcomes, batch=batch) -> None:
            links = []
            for (post, message, table), outcome in zip(batch, outcomes, strict=True):
                if outcome.error is not None:
                    report.problem(message, f"table at line {table.first_line} not stored: "
                                            f"{outcome.error.message}")
                    continue
                links.extend(_links(post, message, outcome.runs, first, linked, report))
            PostRun.objects.bulk_create(links, batch_size=BATCH)
            report.runs_extracted += sum(1 for link in links if not link.reported_in)

        tables_ingest(tables=[TableInput(text=table.text, format=table.format,
                                         filename=f"{message.message_id}.txt"[:255],
                                         kernel=table.kernel_hint)
                              for _, message, table in batch],
                      source=RunSource.MAIL, submitter=user, after_store=link)


_collector = {"imports": 0, "was_enabled": False}
_collector_lock = threading.Lock()


@contextmanager
def _collector_paused():
    """Python's cyclic garbage collector off while an import runs. An import holds every
    message, post and table it reads until it ends (millions of objects for a large archive),
    and each full collection walks all of them to free nothing: a tenth of the CPU time of a
    100,000-message import (measured with gc.callbacks). The few cycles an import leaves (some
    35,000 objects for 20,000 messages) wait for the first collection after it. Imports side
    by side in one process: the last to end turns the collector back on, if it was on."""
    with _collector_lock:
        if not _collector["imports"]:
            _collector["was_enabled"] = gc.isenabled()
            gc.disable()
        _collector["imports"] += 1
    try:
        yield
    finally:
        with _collector_lock:
            _collector["imports"] -= 1
            if not _collector["imports"] and _collector["was_enabled"]:
                gc.enable()


def mbox_import(*, data: bytes, user, target: Target | None = None,
                site_url: str = "", progress=_no_progress) -> ImportReport:
    """Import an mbox (or .mbox.gz). Returns the report; never raises on bad input.
    `progress(stage, done, total)` is called between the steps (an import job shows it)."""
    with _collector_paused():
        return _mbox_import(data=data, user=user, target=target, site_url=site_url,
                            progress=progress)


def _mbox_import(*, data: bytes, user, target: Target | None, site_url: str,
                 progress) -> ImportReport:
    report = ImportReport()
    started = time.perf_counter()
    progress("reading", 0, 0)
    messages = _new_messages(_read_messages(data, report), report)
    for message in messages:
        for note in message.notes:
            report.problem(message, note)
    if not messages:
        return report
    progress("storing messages", 0, len(messages))
    known_tables: dict[int, list] = {}

    def find_tables_meanwhile() -> None:
        known_tables.update(_message_tables(messages))

    with transaction.atomic():
        stored = _store(messages, user, target, report, find_tables_meanwhile)
        for thread in report.threads:
            if thread.pk in report.created_thread_ids:
                continue  # nobody can follow a thread this transaction has not committed yet
            notifications.notify_import_on_commit(
                thread=thread, new_posts=report.posts_by_thread[thread.pk], site_url=site_url)
    report.imported = len(stored)
    report.seconds["read_and_store"] = time.perf_counter() - started
    with runs_stored_together():  # one detection pass per series, not one per message's run
        _extract(stored, user, report, progress, known_tables)
    report.seconds["extract_runs"] = time.perf_counter() - started - report.seconds[
        "read_and_store"]
    return report
