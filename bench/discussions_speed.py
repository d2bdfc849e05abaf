"""Discussions speed on PostgreSQL: mbox import rate, and a 1,000-post thread page.

    .venv/bin/python bench/discussions_speed.py [--messages 2000] [--thread-posts 1000]

Imports a generated 2,000-message mbox (100 threads of 20 replies; every reply quotes its
parent, one in four pastes its own results table) and prints messages/s and runs extracted;
then imports one 1,000-post thread, serves it with gunicorn and prints the page's p95 in ms and
the number of queries it takes (first page, and all 1,000 posts on one page).
Issue 7's targets: a 1,000-post thread page under 300 ms p95 with a fixed number of queries.

Needs PostgreSQL: DATABASE_URL, default postgres://postgres@127.0.0.1:5432/schedbench_discussions.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time
import urllib.request
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.portal_support import PYTHON, Gunicorn, bench_env, prepare_database  # noqa: E402

DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/schedbench_discussions"
KERNELS = ["2.6.22", "2.6.23", "2.6.24", "2.6.24-git19", "2.6.25-rc1"]


def message(*, mid, parent, refs, author, when, subject, body) -> str:
    headers = [f"From {author}@example.org {when:%a %b %d %H:%M:%S %Y}",
               f"From: {author.title()} <{author}@example.org>", f"Subject: {subject}",
               f"Date: {format_datetime(when)}", f"Message-ID: <{mid}>"]
    if parent:
        headers += [f"In-Reply-To: <{parent}>", "References: " + " ".join(f"<{r}>" for r in refs)]
    return "\n".join(headers) + "\n\n" + body.rstrip("\n") + "\n\n"


def reply_body(number: int, parent_body: str, thread: int) -> str:
    quoted = "\n".join(f"> {line}" if line else ">" for line in parent_body.splitlines()[:12])
    own = f"Reply {number}: I see the same thing here, see below.\n"
    if number % 4 == 0:
        kernel = KERNELS[(number + thread) % len(KERNELS)]
        own += (f"\nOn {kernel} with loops={number * 1000 + thread}:\n\n"
                + "".join(f"time {3000 + (number * 37 + i * 11) % 900} ms\n" for i in range(3)))
    return f"On some day, someone wrote:\n{quoted}\n\n{own}\n-- \nsig {number}\n"


def thread_mbox(thread: int, posts: int, fanout: int) -> str:
    start = datetime(2008, 2, 11, tzinfo=UTC) + timedelta(days=thread)
    chain, bodies, out = [], {}, []
    for number in range(posts):
        mid = f"t{thread}.m{number}@bench.example.org"
        parent_index = (number - 1) // fanout if number else None
        parent = chain[parent_index][0] if parent_index is not None else None
        refs = (chain[parent_index][1] + [parent])[-10:] if parent else []
        body = (reply_body(number, bodies[parent], thread) if parent
                else "Loop to 1M:\n" + "".join(f"{k}\t\ttime {4000 + i * 500} ms\n"
                                               for i, k in enumerate(KERNELS)))
        bodies[mid] = body
        chain.append((mid, refs))
        out.append(message(mid=mid, parent=parent, refs=refs, author=f"dev{number % 7}",
                           when=start + timedelta(minutes=number),
                           subject=f"{'Re: ' if parent else ''}thread {thread}", body=body))
    return "".join(out)


def inner(args) -> None:
    """Runs under the benchmark database's environment: import, then count queries."""
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from discussions.importer import mbox_import
    from discussions.models import Thread

    Thread.objects.all().delete()
    user, _ = get_user_model().objects.get_or_create(username="bench-importer")
    per_thread = 20
    data = "".join(thread_mbox(t, per_thread, 3) for t in range(args.messages // per_thread))
    started = time.perf_counter()
    report = mbox_import(data=data.encode(), user=user)
    seconds = time.perf_counter() - started
    print(f"import: {report.imported} messages in {seconds:.2f} s = "
          f"{report.imported / seconds:.0f} messages/s; {report.runs_extracted} runs extracted, "
          f"{len(report.problems)} problems")
    store, extract = report.seconds["read_and_store"], report.seconds["extract_runs"]
    print(f"  of which: read, decode, thread and store {store:.2f} s "
          f"({report.imported / store:.0f} messages/s); table extraction through "
          f"tables_ingest {extract:.2f} s ({report.runs_extracted / extract:.0f} runs/s)")

    big = mbox_import(data=thread_mbox(9999, args.thread_posts, 4).encode(), user=user)
    thread = big.threads[0]
    client = Client(HTTP_HOST="127.0.0.1")
    for query, label in [("", "first page of 200"), ("?all=1", "all posts on one page")]:
        with CaptureQueriesContext(connection) as queries:
            response = client.get(f"/threads/{thread.pk}/{query}")
        assert response.status_code == 200
        print(f"queries for a {thread.post_count}-post thread, {label}: {len(queries)}")
    Path(args.id_file).write_text(str(thread.pk))


def p95_ms(url: str, rounds: int) -> tuple[float, float]:
    timings = []
    for index in range(rounds + 3):
        started = time.perf_counter()
        urllib.request.urlopen(url, timeout=60).read()
        if index >= 3:  # warm-up requests are not counted
            timings.append((time.perf_counter() - started) * 1000)
    timings.sort()
    return statistics.median(timings), timings[int(0.95 * (len(timings) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--thread-posts", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--id-file", default=str(ROOT / "var" / "discussions-bench-thread"))
    args = parser.parse_args()
    if args.inner:
        return inner(args)
    env = bench_env(DATABASE_URL=os.environ.get("DATABASE_URL", DEFAULT_DB))
    prepare_database(env)
    subprocess.run([PYTHON, __file__, "--inner", "--messages", str(args.messages),
                    "--thread-posts", str(args.thread_posts), "--id-file", args.id_file],
                   cwd=ROOT, env=env, check=True)
    thread_id = Path(args.id_file).read_text().strip()
    server = Gunicorn(env)
    try:
        for query, label in [("", "threaded, first page of 200"),
                             ("?view=flat", "flat, first page of 200"),
                             ("?all=1", "threaded, all posts on one page")]:
            median, p95 = p95_ms(f"{server.url}/threads/{thread_id}/{query}", args.rounds)
            print(f"{args.thread_posts}-post thread page ({label}): median {median:.0f} ms, "
                  f"p95 {p95:.0f} ms over {args.rounds} requests (gunicorn, PostgreSQL)")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
