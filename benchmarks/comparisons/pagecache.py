"""Whole pages of frozen comparisons, served nearly like static files.

A permalink's numbers never change; only the deletion of a source run changes its page (it then
says so). The newest RunTombstone id is therefore the page's version. It is read at most once a
second per process (a deletion in another process shows within that second; one in this process
shows at once), and rendered pages live in a small in-process LRU in front of the shared file
cache, so a hit costs neither a query nor a decompression.
"""

import threading
import time
from collections import OrderedDict

from django.core.cache import cache
from django.db.models import Max

from benchmarks.models import RunTombstone

VERSION_TTL = 1.0
MEMORY_PAGES = 32
CACHE_SECONDS = 3600


class FrozenPages:
    def __init__(self):
        self._lock = threading.Lock()
        self._version, self._version_read = 0, float("-inf")
        self._pages: OrderedDict[str, bytes] = OrderedDict()

    def version(self) -> int:
        if time.monotonic() - self._version_read > VERSION_TTL:
            newest = RunTombstone.objects.aggregate(newest=Max("id"))["newest"] or 0
            self._version, self._version_read = newest, time.monotonic()
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
