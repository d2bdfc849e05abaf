"""Whole pages of frozen comparisons, served nearly like static files.

A permalink's numbers never change; only the deletion or withdrawal of a source run changes its
page (it then says so). The newest RunTombstone and RunVisibilityChange ids are therefore the
page's version. It is read at most once a
second per process (a deletion in another process shows within that second; one in this process
shows at once), and rendered pages live in a small in-process LRU in front of the shared file
cache, so a hit costs neither a query nor a decompression.
"""

import json
import logging
import os
import re
import tempfile
import threading
import time
from collections import OrderedDict
from pathlib import Path

from django.conf import settings
from django.core.cache import cache
from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django.db.models import Max
from django.db.models.signals import post_save

from benchmarks.models import RunTombstone, RunVisibilityChange

log = logging.getLogger(__name__)
SLUG = re.compile(r"[-a-zA-Z0-9_]+")

VERSION_TTL = 1.0
MEMORY_PAGES = 32
CACHE_SECONDS = 3600


class FrozenPages:
    def __init__(self):
        self._lock = threading.Lock()
        self._version, self._version_read = "0.0", float("-inf")
        self._pages: OrderedDict[str, bytes] = OrderedDict()

    def version(self) -> str:
        if time.monotonic() - self._version_read > VERSION_TTL:
            deleted = RunTombstone.objects.aggregate(newest=Max("id"))["newest"] or 0
            hidden = RunVisibilityChange.objects.aggregate(newest=Max("id"))["newest"] or 0
            self._version, self._version_read = f"{deleted}.{hidden}", time.monotonic()
        return self._version

    def forget_version(self) -> None:
        self._version_read = float("-inf")

    def get(self, key: str) -> bytes | None:
        with self._lock:
            if key in self._pages:
                self._pages.move_to_end(key)
                return self._pages[key]
        content = cache.get(key)
        if content is not None:
            self._remember(key, content)
        return content

    def set(self, key: str, content: bytes) -> None:
        cache.set(key, content, CACHE_SECONDS)
        self._remember(key, content)

    def _remember(self, key: str, content: bytes) -> None:
        with self._lock:
            self._pages[key] = content
            self._pages.move_to_end(key)
            while len(self._pages) > MEMORY_PAGES:
                self._pages.popitem(last=False)

    def clear_memory(self) -> None:
        with self._lock:
            self._pages.clear()
        self.forget_version()


frozen_pages = FrozenPages()


class FrozenFiles:
    """A durable copy of every frozen permalink (page, .json, .csv, .txt) under
    FROZEN_PAGES_DIR, so they are still served while the database is down: they never change,
    except the page's deleted-runs notice, and the copy is rewritten at every render.

    The exports are written when the comparison is frozen; the page and the .txt (they carry the
    permalink with the host the visitor used) when first rendered. Files are written to a temporary
    name and renamed, so a reader never sees half a file.
    """

    KINDS = ("html", "json", "csv", "txt")

    def path(self, slug: str, kind: str) -> Path:
        if kind not in self.KINDS or not SLUG.fullmatch(slug):
            raise ValueError(f"no frozen file {slug!r}.{kind}")
        return Path(settings.FROZEN_PAGES_DIR) / slug[:2] / f"{slug}.{kind}"

    def read(self, slug: str, kind: str) -> bytes | None:
        try:
            return self.path(slug, kind).read_bytes()
        except (FileNotFoundError, ValueError):
            return None

    def write(self, slug: str, kind: str, content: bytes) -> None:
        target = self.path(slug, kind)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=target.parent, prefix=".tmp-",
                                             delete=False) as out:
                out.write(content)
            os.replace(out.name, target)
        except OSError:  # a full disk must not fail the page that was just rendered
            log.warning("cannot keep a durable copy of %s", target, exc_info=True)

    def has(self, slug: str, kind: str) -> bool:
        try:
            return self.path(slug, kind).exists()
        except ValueError:
            return False


frozen_files = FrozenFiles()


def store_exports(comparison_id: int) -> None:
    """The host-independent exports of a new comparison, written once it is committed. Read
    back from the database first: a JSON column may come back with its keys in another order,
    and the copy must be byte for byte what the view answers."""
    from benchmarks.comparisons.report import as_csv, as_json
    from benchmarks.models import Comparison

    comparison = Comparison.objects.filter(pk=comparison_id).first()
    if comparison is None:
        return
    frozen_files.write(comparison.slug, "json",
                       json.dumps(as_json(comparison), cls=DjangoJSONEncoder).encode())
    frozen_files.write(comparison.slug, "csv", as_csv(comparison).encode())


def _comparison_saved(sender, instance, created, **kwargs):
    if created:
        transaction.on_commit(lambda: store_exports(instance.pk))


def connect_signals() -> None:
    from benchmarks.models import Comparison

    post_save.connect(_comparison_saved, sender=Comparison, dispatch_uid="frozen-files")
