"""Threads and messages in site search: the groups this app registers with the core's search."""

from django.contrib.postgres.search import SearchRank
from django.db.models import F, Q, QuerySet, Value

from benchmarks.search.engine import (
    every_term,
    fts,
    matches,
    postgres,
    ranked,
    snippet,
)
from benchmarks.search.sources import Hit, SearchSource, register_search_source

from .models import Post, Thread

# What the posts' stored search_vector holds (migrations/0005 keeps it with a trigger).
POST_VECTOR = ("subject", "author", "author_email", "body")


def message_id(q: str) -> str:
    """`<abc@host>`, `mid:abc@host` and `abc@host` name the same message."""
    return q.strip().removeprefix("mid:").strip().strip("<>").strip()


def thread_search(q: str) -> QuerySet:
    threads = Thread.objects.all()
    if not postgres():
        return threads.filter(every_term(q, ("subject",))).order_by("-last_activity", "-id")
    vector, query = fts(("subject",), q)
    return (ranked(threads, vector, query).filter(matches(query) | Q(subject__iexact=q))
            .order_by("-rank", "-last_activity", "-id"))


def post_search(q: str) -> QuerySet:
    """Messages by subject, author, body, or exactly by message id (with or without <>)."""
    posts = (Post.objects.filter(deleted=False)
             .only("id", "message_id", "subject", "author", "date", "body", "thread_id"))
    exact = Q(message_id=message_id(q))
    if not postgres():
        fields = ("subject", "author", "author_email", "message_id", "body")
        return posts.filter(exact | every_term(q, fields)).order_by("-date", "-id")
    # The stored vector (a trigger keeps it): both sides of the OR have an index
    # (message_id is unique, search_vector has a GIN), and ranking reads no body.
    _, query = fts(POST_VECTOR, q)
    if query is None:
        return posts.filter(exact).annotate(rank=Value(0.0)).order_by("-date", "-id")
    return (posts.annotate(rank=SearchRank(F("search_vector"), query))
            .filter(exact | Q(search_vector=query)).order_by("-rank", "-date", "-id"))


def _thread_hit(thread: Thread, q: str) -> Hit:
    return Hit("threads", thread.pk, thread.subject,
               f"{thread.post_count} message{'s' if thread.post_count != 1 else ''} · last "
               f"{thread.last_activity:%Y-%m-%d}", thread.get_absolute_url())


def _post_hit(post: Post, q: str) -> Hit:
    return Hit("posts", post.message_id, post.subject,
               f"{post.author} · {post.date:%Y-%m-%d} · <{post.message_id}> · "
               f"{snippet(post.body, q)}", post.url)


def register() -> None:
    register_search_source(SearchSource("threads", "Threads", 30, thread_search, _thread_hit))
    register_search_source(SearchSource("posts", "Messages", 40, post_search, _post_hit))
