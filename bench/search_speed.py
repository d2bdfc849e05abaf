"""Site search on PostgreSQL: does the messages' GIN index pay?

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/schedbench_search \\
        .venv/bin/python bench/search_speed.py [--posts 20000] [--repeat 5]

Fills a database with generated mailing-list messages (kernel strings, benchmark names,
message ids, quoted numbers) and times the messages group of the search, median of --repeat,
for a few typical queries: as the search runs it (the stored, trigger-kept tsvector with its GIN
index); with index and bitmap scans turned off (the stored vector without its index); and
parsing every message with to_tsvector at query time (no stored vector). The first is the
measurement, the other two the references, measured in the same run; ratios are reference /
measurement. Then the whole five-group search's median.

Needs PostgreSQL (default postgres://postgres@127.0.0.1:5432/schedbench_search).
"""

import argparse
import os
import random
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.portal_support import bench_env  # noqa: E402

DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/schedbench_search"
WORDS = ("scheduler", "yield", "spin", "loop", "wakeup", "runqueue", "latency", "throughput",
         "regression", "fairness", "granularity", "preemption", "migration", "balance",
         "numbers", "variance", "machine", "patch", "commit", "tested", "kernel", "threads",
         "hackbench", "threadtest", "chatroom", "pipe", "sched_yield", "cfs", "rsdl",
         "interactive", "desktop", "server", "batch")
KERNELS = ("2.6.22", "2.6.22.17-cfs-v24.1", "2.6.23", "2.6.24-rc1", "2.6.24", "2.6.24-git19",
           "2.6.25-rc3", "2.6.25")
RARE = "futex_wake_op"  # in one message of a thousand: a selective query
QUERIES = ("hackbench regression", "2.6.24-git19", "<t17.m5@bench.example.org>", "granul",
           "sched_yield spin", RARE)


def body(rng: random.Random) -> str:
    lines = []
    for _ in range(rng.randint(4, 14)):
        words = rng.choices(WORDS, k=rng.randint(5, 12))
        if rng.random() < 0.3:
            words.append(f"{rng.choice(KERNELS)} time {rng.randint(3000, 11000)} ms")
        lines.append(" ".join(words))
    if rng.random() < 0.001:
        lines.append(f"the trouble starts in {RARE}")
    return "\n".join(lines)


def fill(posts: int) -> None:
    from discussions.models import Post, Thread

    if Post.objects.count() >= posts:
        return
    Post.objects.all().delete()
    Thread.objects.all().delete()
    rng, start = random.Random(20261130), datetime(2008, 1, 1, tzinfo=UTC)
    per_thread = 20
    for first in range(0, posts, 2000):
        threads = Thread.objects.bulk_create(
            Thread(subject=f"{rng.choice(WORDS)} {rng.choice(KERNELS)} {rng.choice(WORDS)}")
            for _ in range(first // per_thread, min(posts, first + 2000) // per_thread))
        Post.objects.bulk_create(
            Post(thread=thread, message_id=f"t{thread.pk}.m{n}@bench.example.org",
                 author=f"Dev {rng.randint(1, 300)}", author_email="dev@example.org",
                 date=start + timedelta(minutes=thread.pk * 60 + n), subject=thread.subject,
                 body=body(rng), thread_order=n)
            for thread in threads for n in range(per_thread))
        print(f"  {min(posts, first + 2000)} posts", file=sys.stderr)
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE discussions_post")


def on_the_fly(q: str):
    """The messages query as it would be without the stored column: every body parsed."""
    from django.contrib.postgres.search import SearchRank, SearchVector
    from django.db.models import F, Q

    from benchmarks.search import engine as search
    from discussions import search as thread_search
    from discussions.models import Post

    _, query = search.fts(thread_search.POST_VECTOR, q)
    return (Post.objects.filter(deleted=False)
            .annotate(document=SearchVector(*thread_search.POST_VECTOR, config=search.CONFIG))
            .annotate(rank=SearchRank(F("document"), query))
            .filter(Q(message_id=thread_search.message_id(q)) | Q(document=query))
            .order_by("-rank", "-date", "-id"))


def median_ms(work, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        work()
        times.append((time.perf_counter() - began) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--posts", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    os.environ.update(bench_env(DATABASE_URL=os.environ.get("DATABASE_URL", DEFAULT_DB)))
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from benchmarks.search import engine as search

    call_command("migrate", verbosity=0)
    fill(args.posts)
    print(f"{'query':28} {'stored+GIN':>10} {'no index':>9} {'ratio':>6} "
          f"{'parsed':>8} {'ratio':>6}  (ms)")
    for q in QUERIES:
        def group(q=q):
            return search.search_group(q, "posts")

        def parsed(q=q):
            return list(on_the_fly(q)[:search.PER_PAGE + 1])
        indexed = median_ms(group, args.repeat)
        with connection.cursor() as cursor:
            cursor.execute("SET enable_bitmapscan = off; SET enable_indexscan = off")
        scanned = median_ms(group, args.repeat)
        with connection.cursor() as cursor:
            cursor.execute("RESET enable_bitmapscan; RESET enable_indexscan")
        reparsed = median_ms(parsed, args.repeat)
        print(f"{q:28} {indexed:10.1f} {scanned:9.1f} {scanned / indexed:5.1f}x "
              f"{reparsed:8.1f} {reparsed / indexed:5.1f}x")
    overview = median_ms(lambda: search.search("2.6.24 regression"), args.repeat)
    print(f"whole search (5 groups), '2.6.24 regression': {overview:.1f} ms")


if __name__ == "__main__":
    main()
