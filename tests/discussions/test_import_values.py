"""The post INSERT's values skip Django's preparation where a field hands the value back
unchanged (importer._prepared_values); what is sent must be what the preparation gives."""

from pathlib import Path

import pytest
from django.db import connection
from django.utils.safestring import SafeString

from discussions import importer
from discussions.importer import ImportReport, _read_messages
from discussions.models import Post, Thread

from .test_import_layout import messy_archive

pytestmark = pytest.mark.django_db
MBOX_DIR = Path(__file__).resolve().parent.parent / "fixtures" / "mbox"


def _posts(poster) -> list[Post]:
    """Posts as the import builds them (rendered, thread and parent ids set) from the fixture
    archives, a messy generated one and awkward values no archive gives."""
    data = b"".join(path.read_bytes() for path in sorted(MBOX_DIR.glob("*.mbox")))
    messages = _read_messages(messy_archive(7, 20).encode() + data, ImportReport())
    thread = Thread.objects.create(subject="values", started_by=poster)
    posts = [importer._post_row(message, thread) for message in messages]
    importer._render_rows(posts)
    for number, post in enumerate(posts, 1):
        post.pk = 10**6 + number
        post.parent_id = post.pk - 1 if number % 3 else None
    odd = posts[-1]
    # a str subclass, a bool where an integer goes, an integer where a bool goes
    odd.subject, odd.thread_order, odd.deleted = SafeString("<b>"), True, 1
    return posts


def _sent(values: list) -> list:
    """Values as the database receives them (psycopg2 adapters have no equality)."""
    if connection.vendor != "postgresql":
        return [(type(value), value) for value in values]  # True == 1, but not to a column
    with connection.cursor() as cursor:
        return [cursor.cursor.mogrify("%s", [value]) for value in values]


def test_prepared_values_are_what_django_prepares(poster):
    posts = _posts(poster)
    assert len(posts) > 250 and any(post.notes for post in posts) and any(
        post.author_email for post in posts)
    fields = list(Post._meta.concrete_fields)
    plain = importer._plain_fields(fields)
    assert sum(kept is not None for kept in plain) >= 15  # most columns take the shortcut
    created = [index for index, field in enumerate(fields) if field.name == "created"]
    for post in posts:
        post._prepare_related_fields_for_save(operation_name="bulk_create")
        fast = importer._prepared_values(post, fields, plain)
        django = [field.get_db_prep_save(field.pre_save(post, True), connection)
                  for field in fields]
        for index in created:  # auto_now_add: a new now() each time it is prepared
            assert type(fast[index]) is type(django[index])
            fast[index] = django[index]
        assert _sent(fast) == _sent(django), post.message_id
