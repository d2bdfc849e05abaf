"""mbox import: messages become posts in threads, tables in their own text become runs.

Bad input never raises: what could not be read is in the report's `problems`, each with the
message it concerns and why. Messages already stored (same Message-ID) are skipped.

The archive is read a message at a time (importread.py): what threading needs stays in
memory as a compact record per message, the rest waits in a temporary spool file and is read
back a batch of posts at a time, so a large archive does not need a large worker.
"""

import gc
import io
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import chain, islice
from typing import BinaryIO, NamedTuple, Protocol

from django.db import connection, models, transaction
from django.db.models import Q
from django.utils import timezone

from benchmarks.models import RunSource
from benchmarks.services.ingest import TableInput, tables_ingest
from benchmarks.services.runs import runs_stored_together

from . import notifications
from .dbwriter import StatementWriter
from .extraction import find_tables
from .importread import (
    MessageRecord,
    MessageSpool,
    full_message,
    message_records,
    parsed_messages,
)
from .mail import MailMessage
from .models import Attachment, Post, PostRun, PostSource, Thread
from .ordering import Node, Place, thread_layout
from .render import attachment_kind, rendered_fields
from .services import (
    REPLY_PREFIXES,
    posts_parents_write,
    thread_relayout,
    thread_subject,
)
from .targets import Target

BATCH = 500
TABLES_PER_BATCH = 500
# Whether post batches go to the database from a writer thread (dbwriter.StatementWriter):
# None lets the writer decide (PostgreSQL: yes). Tests set it both ways and compare.
WRITER_THREADED: bool | None = None


class _Identified(Protocol):
    """A message as a problem names it (a MailMessage, a MessageRecord, a written post's
    source in the extraction)."""

    message_id: str
    position: int


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

    def problem(self, message: _Identified | None, reason: str, position: int | None = None):
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
    """Every message of an mbox held in memory, parsed whole (for tests and tools; the import
    itself keeps only records, importread.message_records)."""
    return list(parsed_messages(io.BytesIO(data), report))


def _new_messages(messages: list[MessageRecord], report: ImportReport) -> list[MessageRecord]:
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


def _join_replies_without_headers(messages: list[MessageRecord], groups: _Groups) -> None:
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
                message.add_note("no In-Reply-To or References: threaded by subject")


def _group(messages: list[MessageRecord]) -> dict[str, list[MessageRecord]]:
    groups = _Groups()
    for message in messages:
        groups.find(message.message_id)
        for related in [message.in_reply_to, *message.references]:
            if related:
                groups.union(message.message_id, related)
    _join_replies_without_headers(messages, groups)
    grouped: dict[str, list[MessageRecord]] = {}
    for message in messages:
        grouped.setdefault(groups.find(message.message_id), []).append(message)
    return grouped


def _related_ids(group: list[MessageRecord]) -> tuple[list[str], list[str]]:
    own = [m.message_id for m in group]
    related = list({mid for m in group for mid in [m.in_reply_to, *m.references] if mid})
    return own, related


def _stored_thread_ids(groups: list[list[MessageRecord]]) -> list[int | None]:
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


def _stored_thread_id(group: list[MessageRecord], by_column) -> int | None:
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


def _new_thread(group: list[MessageRecord], user, target: Target | None) -> Thread:
    first = min(group, key=lambda m: (m.date or timezone.now(), m.position))
    return Thread(
        subject=thread_subject(first.subject), started_by=user,
        target_type=target.type if target else "", target_id=target.id if target else "",
        created=first.date or timezone.now(),
    )


def _post_row(message: MailMessage, thread: Thread) -> Post:
    """The message as a new post."""
    post = Post(
        thread=thread, message_id=message.message_id, in_reply_to=message.in_reply_to,
        references=" ".join(message.references[-50:]), author=message.author[:300],
        root_id=(message.references or [message.in_reply_to or message.message_id])[0],
        author_email=message.author_email[:254], date=message.date or timezone.now(),
        subject=message.subject[:300] or "(no subject)", body=message.body, raw=message.raw,
        envelope=message.envelope[:300], source=PostSource.MAIL, notes=message.notes[:20],
    )
    return post


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


class _ParentsAfterInsert:
    """Parents set once a thread's posts have their ids (where ids are only known after the
    insert): one UPDATE per batch for the threads whose last part it holds."""

    def __init__(self):
        self.ids: list[int] = []  # of the current thread's posts inserted so far

    def __call__(self, batch: "_PostBatch") -> None:
        pairs = []
        for part in batch.parts:
            if part.start == 0:
                self.ids = []
            self.ids += [post.pk for post in part.posts]
            if not part.last:
                continue
            ids = self.ids
            if any(a >= b for a, b in zip(ids, ids[1:], strict=False)):
                # The layout broke ties between posts of one date by insertion order, which
                # the keys follow everywhere we know of; were they ever not to, lay it out
                # from them.
                thread_relayout(thread=part.thread)
                continue
            pairs += [(pk, ids[parent]) for pk, parent in zip(ids, part.parents, strict=True)
                      if parent is not None]
        posts_parents_write(pairs=pairs)


@dataclass
class _ThreadPart:
    """Posts of one new thread written together: the whole thread, or BATCH of its posts
    from `start` (a long thread's parts come one after the other)."""

    index: int  # of the thread's conversation in the import
    thread: Thread
    start: int
    posts: list[Post]
    messages: list[MailMessage]
    parents: list[int | None]  # the whole thread's: each post's parent, as an index
    last: bool  # the thread's last part


@dataclass
class _PostBatch:
    """About BATCH new posts written together, as parts of threads."""

    parts: list[_ThreadPart] = field(default_factory=list)
    size: int = 0  # posts

    @property
    def posts(self) -> list[Post]:
        return [post for part in self.parts for post in part.posts]


def _after_nothing(batch: _PostBatch) -> None:
    pass


def _insert_parts(posts: list[Post], fields) -> Iterator[list[Post]]:
    size = max(1, min(BATCH, connection.ops.bulk_batch_size(fields, posts)))
    return (posts[start:start + size] for start in range(0, len(posts), size))


def _posts_insert(batches: Iterable[_PostBatch], after_each=_after_nothing) -> None:
    """Post.objects.bulk_create(batch.posts) for each batch with the same values (each field's
    pre_save and get_db_prep_save, as bulk_create takes them) in plain INSERTs of up to BATCH
    posts: Django's compiler builds a placeholder object per value, which cost more than
    preparing the values (a fifth of an import's time). Each part is rendered (_render_rows)
    just before it is prepared. Posts without ids get theirs back in order, as bulk_create
    does; where the database cannot return them, bulk_create itself runs. `after_each(batch)`
    runs once a batch is sent (and has its ids).

    Posts with ids (reserved on PostgreSQL) are sent by a StatementWriter: the database
    writes one batch while this thread reads, renders and prepares the next and runs
    `after_each`, so `batches` and `after_each` must send no statement of their own."""
    batches = iter(batches)
    first = next(batches, None)
    if first is None:
        return
    batches = chain([first], batches)
    with_ids = first.posts[0].pk is not None
    if not (with_ids or connection.features.can_return_rows_from_bulk_insert):
        for batch in batches:
            _render_rows(batch.posts)
            Post.objects.bulk_create(batch.posts, batch_size=BATCH)
            after_each(batch)
        return
    fields = [f for f in Post._meta.concrete_fields if with_ids or not f.primary_key]
    quote = connection.ops.quote_name
    columns = ", ".join(quote(f.column) for f in fields)
    into = f"INSERT INTO {quote(Post._meta.db_table)} ({columns})"
    returning = "" if with_ids else f" RETURNING {quote(Post._meta.pk.column)}"
    row = "(" + ", ".join(["%s"] * len(fields)) + ")"
    if with_ids:
        with StatementWriter(threaded=WRITER_THREADED) as writer:
            for batch in batches:
                for part in _insert_parts(batch.posts, fields):
                    writer.send(f"{into} VALUES {', '.join([row] * len(part))}",
                                _insert_params(part, fields))
                after_each(batch)
        return
    with connection.cursor() as cursor:
        for batch in batches:
            for part in _insert_parts(batch.posts, fields):
                cursor.execute(f"{into} VALUES {', '.join([row] * len(part))}{returning}",
                               _insert_params(part, fields))
                for post, (pk,) in zip(part, cursor.fetchall(), strict=True):
                    post.pk = pk
            after_each(batch)


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


class _Source(NamedTuple):
    """A written post as its tables' extraction needs it."""

    pk: int
    message_id: str
    position: int


@dataclass
class _Written:
    """What the storing leaves for after it: the count, each written message's tables (found
    as its post is written, kept in the spool with the post's date and position, the order
    they are extracted in), and its attachments (in the spool too, inserted once every post
    is in)."""

    spool: MessageSpool
    count: int = 0
    # (post date, position, post id, message id, number of tables, spool offset)
    tables: list[tuple] = field(default_factory=list)
    attachments: list[tuple[int, int]] = field(default_factory=list)  # (group, spool offset)

    def add(self, group: int, posts: list[Post], messages: list[MailMessage]) -> None:
        self.count += len(posts)
        for post, message in zip(posts, messages, strict=True):
            if message.attachments:
                self.attachments.append((group, self.spool.put((post.pk, message.attachments))))
            tables = find_tables(_own_texts(message), message.subject)
            if tables:
                self.tables.append((post.date, message.position, post.pk, message.message_id,
                                    len(tables), self.spool.put(tables)))


def _thread_places(group: list[MessageRecord]) -> dict[int, Place]:
    """The layout of a new thread's posts (by index in `group`) before they are stored: what
    services.thread_relayout gives once they are, from the same values the posts get
    (In-Reply-To, their last 50 References, their date), provided they get increasing ids in
    this order (siblings of one date are ordered by id: here by position)."""
    return thread_layout([Node(number, record.message_id, record.in_reply_to,
                               list(record.references[-50:]), record.stamp)
                          for number, record in enumerate(group)])


def _new_post_batches(fresh, threads: list[Thread], spool: MessageSpool,
                      ids: Iterator[int] | None) -> Iterator[_PostBatch]:
    """The new threads' posts, laid out and read back from the spool, about BATCH at a time
    (a thread is laid out whole from its records, its posts made BATCH at a time); with the
    reserved ids, and so their parents, when there are some."""
    batch = _PostBatch()
    for (index, group), thread in zip(fresh, threads, strict=True):
        places = _thread_places(group)
        parents = [places[number].parent for number in range(len(group))]
        thread_ids = [next(ids) for _ in group] if ids is not None else None
        for start in range(0, len(group), BATCH):
            messages = [full_message(record, spool) for record in group[start:start + BATCH]]
            posts = [_post_row(message, thread) for message in messages]
            for number, post in enumerate(posts, start):
                post.thread_order, post.depth = places[number].order, places[number].depth
                if thread_ids is not None:
                    post.pk = thread_ids[number]
                    parent = parents[number]
                    post.parent_id = thread_ids[parent] if parent is not None else None
            batch.parts.append(_ThreadPart(index, thread, start, posts, messages, parents,
                                           start + BATCH >= len(group)))
            batch.size += len(posts)
            if batch.size >= BATCH:
                yield batch
                batch = _PostBatch()
    if batch.parts:
        yield batch


def _store_new_threads(fresh: list[tuple[int, list[MessageRecord]]], spool: MessageSpool,
                       user, target, written: _Written) -> list[Thread]:
    """Conversations (index, records) that start new threads: the threads go in first (their
    figures come from the records), then their posts, each thread laid out before its posts
    are written (`_thread_places`), one insert per part; parents too where ids can be
    reserved first, else one more statement per batch sets them."""
    threads = []
    for _, group in fresh:
        thread = _new_thread(group, user, target)
        thread.post_count = len(group)
        thread.last_activity = max(record.stamp for record in group)
        threads.append(thread)
    Thread.objects.bulk_create(threads, batch_size=BATCH)
    reserved = _reserved_post_ids(sum(len(group) for _, group in fresh))

    parents_after_insert = _ParentsAfterInsert() if reserved is None else None

    def after_each(batch: _PostBatch) -> None:
        if parents_after_insert is not None:
            parents_after_insert(batch)
        for part in batch.parts:
            written.add(part.index, part.posts, part.messages)

    _posts_insert(_new_post_batches(fresh, threads, spool,
                                    iter(reserved) if reserved is not None else None),
                  after_each)
    return threads


def _attachments_insert(written: _Written) -> None:
    """The written posts' attachments, in the order of their conversations in the import."""
    pending: list[Attachment] = []
    for _, offset in sorted(written.attachments, key=lambda item: item[0]):  # stable
        post_id, attachments = written.spool.get(offset)
        pending += [Attachment(post_id=post_id, position=number, filename=a.filename[:255],
                               content_type=a.content_type[:100], size=a.size, text=a.text,
                               content=a.content)
                    for number, a in enumerate(attachments, 1)]
        if len(pending) >= BATCH:
            Attachment.objects.bulk_create(pending, batch_size=BATCH)
            pending = []
    Attachment.objects.bulk_create(pending, batch_size=BATCH)


def _store(records: list[MessageRecord], spool: MessageSpool, user, target,
           report: ImportReport) -> _Written:
    """The messages as posts, in new threads or in the stored threads they continue."""
    groups = list(_group(records).values())
    found = _stored_thread_ids(groups)
    written = _Written(spool)
    fresh = [(index, group) for index, (group, thread_id) in enumerate(zip(groups, found,
                                                                            strict=True))
             if thread_id is None]
    new_threads = _store_new_threads(fresh, spool, user, target, written)
    threads: dict[int, Thread] = {thread.pk: thread for thread in new_threads}
    report.created_thread_ids = set(threads)
    for thread in new_threads:
        report.posts_by_thread[thread.pk] = thread.post_count
    joined: dict[int, Thread] = {}
    for index, (group, thread_id) in enumerate(zip(groups, found, strict=True)):
        if thread_id is None:
            continue
        # posts joining a stored thread: the whole thread is laid out again below
        thread = joined.get(thread_id) or Thread.objects.select_for_update().get(pk=thread_id)
        joined[thread_id] = threads[thread_id] = thread
        messages = [full_message(record, spool) for record in group]
        rows = [_post_row(message, thread) for message in messages]
        _render_rows(rows)
        Post.objects.bulk_create(rows, batch_size=BATCH)
        written.add(index, rows, messages)
        report.posts_by_thread[thread.pk] = report.posts_by_thread.get(thread.pk, 0) + len(rows)
    _attachments_insert(written)
    for thread in joined.values():
        thread_relayout(thread=thread)
    report.threads = sorted(threads.values(), key=lambda t: t.pk)
    return written


def _own_texts(message: MailMessage) -> str:
    """The body plus plain-text attachments (results files), never patches or code."""
    extra = [a.text for a in message.attachments
             if a.text and attachment_kind(a.filename, a.content_type, a.text) == "text"
             and a.content_type in ("text/plain", "")]
    return "\n\n".join([message.body, *extra])


def _tables(written: _Written) -> Iterator[tuple[_Source, object]]:
    """Tables in each new message's own text, earliest message first, so the first poster of
    a result set owns its run and later re-pastes link to it (see `_links`)."""
    for _, position, pk, message_id, _, offset in sorted(written.tables,
                                                          key=lambda entry: entry[:2]):
        source = _Source(pk, message_id, position)
        for table in written.spool.get(offset):
            yield source, table


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


class _Linked:
    """The runs the post being linked is linked to already. A message's tables come one
    after the other (`_tables`), so only the current post's are kept."""

    def __init__(self):
        self.post: int | None = None
        self.runs: set[int] = set()

    def first_time(self, post: int, run: int) -> bool:
        if post != self.post:
            self.post, self.runs = post, set()
        if run in self.runs:
            return False
        self.runs.add(run)
        return True


def _links(source: _Source, runs, first: _FirstReports, linked: _Linked,
           report: ImportReport) -> list[PostRun]:
    """A post's links to its runs; a run it repeats names the message that reported it."""
    links = []
    for run in runs:
        if not linked.first_time(source.pk, run.pk):
            continue  # the same table twice in one message
        # Stored before this import, or by an earlier message of it (a batch stores a result
        # set once and hands every table that holds it the same run).
        earlier = getattr(run, "already_stored", False) or run.pk in first.known
        reported_in = first.of(run.pk) if earlier else ""
        if reported_in == source.message_id:
            continue  # the message repeats its own table
        if not reported_in:
            first.known[run.pk] = source.message_id
        else:
            report.repeated.append({"message": f"<{source.message_id}>", "run": run.pk,
                                    "reported_in": reported_in})
        links.append(PostRun(post_id=source.pk, run=run, reported_in=reported_in))
    return links


def _no_progress(stage: str, done: int, total: int) -> None:
    pass


def _extract(written: _Written, user, report: ImportReport, progress=_no_progress) -> None:
    """The tables of the new messages, a batch at a time through one bulk service call
    (`tables_ingest`: an artifact per table as an upload would keep it, one transaction,
    catalog lookups shared, one write of the runs), linked to their posts in that transaction.

    A batch is a few hundred tables: one commit per table made large imports wait on the disk,
    one transaction for all of them would hold catalog rows locked for the whole import.
    Only the batch's tables are in memory; the others wait in the spool.
    """
    total = sum(entry[4] for entry in written.tables)
    tables = _tables(written)
    first, linked = _FirstReports(), _Linked()
    for start in range(0, total, TABLES_PER_BATCH):
        progress("extracting runs", start, total)
        batch = list(islice(tables, TABLES_PER_BATCH))

        def link(outcomes, batch=batch) -> None:
            links = []
            for (source, table), outcome in zip(batch, outcomes, strict=True):
                if outcome.error is not None:
                    report.problem(source, f"table at line {table.first_line} not stored: "
                                           f"{outcome.error.message}")
                    continue
                links.extend(_links(source, outcome.runs, first, linked, report))
            PostRun.objects.bulk_create(links, batch_size=BATCH)
            report.runs_extracted += sum(1 for link in links if not link.reported_in)

        tables_ingest(tables=[TableInput(text=table.text, format=table.format,
                                         filename=f"{source.message_id}.txt"[:255],
                                         kernel=table.kernel_hint)
                              for source, table in batch],
                      source=RunSource.MAIL, submitter=user, after_store=link)
        # The collector is off during an import (_collector_paused), and storing a batch of
        # runs leaves a few reference cycles (7 objects a table, counted with gc.collect):
        # freed here, or they would pile up with the archive's size. Only what was made since
        # the last collection is looked at, so this costs the batch's objects, not the import's.
        gc.collect(0)


_collector = {"imports": 0, "was_enabled": False}
_collector_lock = threading.Lock()


@contextmanager
def _collector_paused():
    """Python's cyclic garbage collector off while an import runs. An import holds a record
    of every message until its threads are stored (hundreds of thousands of objects for a
    large archive), and each full collection would walk all of them to free nothing (when it
    held every message, post and table, a tenth of the CPU time of a 100,000-message import,
    measured with gc.callbacks). Reading and storing leave no cycles; the extraction's are
    freed batch by batch (`_extract`). Imports side by side in one process: the last to end
    turns the collector back on, if it was on."""
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


def mbox_import(*, data: bytes | BinaryIO, user, target: Target | None = None,
                site_url: str = "", progress=_no_progress) -> ImportReport:
    """Import an mbox (or .mbox.gz): its bytes, or a binary file open at its start (read a
    block at a time, never whole; a gzip file is read twice, so it must be seekable).
    Returns the report; never raises on bad input. `progress(stage, done, total)` is called
    between the steps (an import job shows it)."""
    source = io.BytesIO(data) if isinstance(data, bytes | bytearray | memoryview) else data
    with _collector_paused(), MessageSpool() as spool:
        return _mbox_import(source=source, spool=spool, user=user, target=target,
                            site_url=site_url, progress=progress)


def _mbox_import(*, source: BinaryIO, spool: MessageSpool, user, target: Target | None,
                 site_url: str, progress) -> ImportReport:
    report = ImportReport()
    started = time.perf_counter()
    progress("reading", 0, 0)
    records = _new_messages(message_records(source, report, spool), report)
    for record in records:
        for note in record.notes:
            report.problem(record, note)
    if not records:
        return report
    progress("storing messages", 0, len(records))
    with transaction.atomic():
        written = _store(records, spool, user, target, report)
        for thread in report.threads:
            if thread.pk in report.created_thread_ids:
                continue  # nobody can follow a thread this transaction has not committed yet
            notifications.notify_import_on_commit(
                thread=thread, new_posts=report.posts_by_thread[thread.pk], site_url=site_url)
    del records  # threading is done: only the written posts' tables are needed from here
    report.imported = written.count
    report.seconds["read_and_store"] = time.perf_counter() - started
    with runs_stored_together():  # one detection pass per series, not one per message's run
        _extract(written, user, report, progress)
    report.seconds["extract_runs"] = time.perf_counter() - started - report.seconds[
        "read_and_store"]
    return report
