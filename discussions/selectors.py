"""Reads for discussions: what the pages and the API show."""

from dataclasses import dataclass

from django.conf import settings
from django.core.paginator import Page, Paginator
from django.db.models import QuerySet

from .models import Post, Thread

WHOLE_THREAD_LIMIT = 2000  # "?all=1" shows a whole thread on one page up to this many posts
THREADS_PER_PAGE = 50
MAX_INDENT = 10  # deeper replies stay at this indent; their depth is still shown


@dataclass
class ThreadPage:
    thread: Thread
    page: Page
    flat: bool
    whole: bool = False

    @property
    def query_prefix(self) -> str:
        """What the page links keep of the current view."""
        return ("view=flat&" if self.flat else "") + ("all=1&" if self.whole else "")


def thread_posts(thread: Thread, *, flat: bool = False) -> QuerySet:
    posts = Post.objects.filter(thread=thread).for_display()
    return posts.by_date() if flat else posts.in_thread_order()


def posts_per_page() -> int:
    return settings.DISCUSSIONS_POSTS_PER_PAGE


def thread_page(thread: Thread, *, page_number, flat: bool = False,
                whole: bool = False) -> ThreadPage:
    """One page of a thread: the posts come in one query ordered by the stored thread order.

    The page count comes from the stored post_count, so paging costs no COUNT query."""
    per_page = WHOLE_THREAD_LIMIT if whole else posts_per_page()
    paginator = Paginator(thread_posts(thread, flat=flat), per_page)
    paginator.count = thread.post_count
    return ThreadPage(thread, paginator.get_page(page_number), flat, whole)


def threads_listed(*, target_type: str = "", target_id: str = "") -> QuerySet:
    threads = Thread.objects.latest_first()
    if target_type:
        threads = threads.attached_to(target_type, target_id)
    return threads


def thread_list_page(page_number, **filters) -> Page:
    return Paginator(threads_listed(**filters), THREADS_PER_PAGE).get_page(page_number)


def post_by_message_id(message_id: str) -> Post | None:
    message_id = (message_id or "").strip().strip("<>")
    posts = Post.objects.select_related("thread", "user", "parent")
    return posts.filter(message_id=message_id).first()


def run_ids_of(post: Post) -> list[int]:
    return post.run_ids
