"""The embedded broker (portal/fsbroker.py) under several producers and consumers at once."""

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from queue import Empty

import kombu
import pytest
from django.conf import settings

from benchmarks.tasks import ping
from tests.factories import make_run

QUEUE = "race"


def broker_options(root):
    folders = {name: root / name for name in ("queue", "processed", "control")}
    for folder in folders.values():
        folder.mkdir()
    return {
        "data_folder_in": str(folders["queue"]),
        "data_folder_out": str(folders["queue"]),
        "processed_folder": str(folders["processed"]),
        "control_folder": str(folders["control"]),
    }


def connection(options):
    return kombu.Connection("filesystem://", transport="portal.fsbroker:Transport",
                            transport_options=options)


def test_settings_select_the_atomic_transport_for_the_embedded_broker():
    if not settings.CELERY_BROKER_URL.startswith("filesystem://"):
        pytest.skip("the configured broker is not the embedded one")
    from portal.celery import app

    with app.connection_for_write() as conn:
        assert type(conn.transport).__module__ == "portal.fsbroker"


def test_consumers_never_see_a_message_half_written(tmp_path):
    """Large messages (each write takes a while) sent by two producers, taken by two consumers
    polling as fast as they can: every message arrives exactly once and whole."""
    options = broker_options(tmp_path)
    sent = 200
    body = "x" * 400_000
    received: list[int] = []
    errors: list[BaseException] = []
    done = threading.Event()

    def produce(start):
        with connection(options) as conn:
            channel = conn.default_channel
            for number in range(start, sent, 2):
                channel._put(QUEUE, {"n": number, "body": body})

    def consume():
        with connection(options) as conn:
            channel = conn.default_channel
            while not done.is_set() or channel._size(QUEUE):
                try:
                    message = channel._get(QUEUE)
                except Empty:
                    continue
                except BaseException as exc:  # the failure this test exists for
                    errors.append(exc)
                    return
                assert message["body"] == body
                received.append(message["n"])

    consumers = [threading.Thread(target=consume) for _ in range(2)]
    for thread in consumers:
        thread.start()
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(produce, [0, 1]))
    done.set()
    for thread in consumers:
        thread.join(timeout=60)
    assert errors == []
    assert sorted(received) == list(range(sent))


def test_a_message_that_never_decodes_is_set_aside_and_the_next_one_served(tmp_path, caplog):
    options = broker_options(tmp_path)
    queue_folder = tmp_path / "queue"
    (queue_folder / f"1_bad.{QUEUE}.msg").write_bytes(b'{"cut short')
    with connection(options) as conn:
        channel = conn.default_channel
        channel._put(QUEUE, {"n": 1})
        assert channel._get(QUEUE) == {"n": 1}
        with pytest.raises(Empty):
            channel._get(QUEUE)
    assert (tmp_path / "rejected" / f"1_bad.{QUEUE}.msg").read_bytes() == b'{"cut short'
    assert "does not decode" in caplog.text


def test_a_message_still_being_written_by_an_older_producer_is_waited_for(tmp_path):
    """kombu's own transport writes in place: the reader waits for the rest instead of dying."""
    options = broker_options(tmp_path)
    path = tmp_path / "queue" / f"1_slow.{QUEUE}.msg"
    text = json.dumps({"n": 7, "pad": "y" * 1000}).encode()
    with open(path, "wb", buffering=0) as handle:
        handle.write(text[:100])
        finisher = threading.Timer(0.5, handle.write, [text[100:]])
        finisher.start()
        with connection(options) as conn:
            assert conn.default_channel._get(QUEUE)["n"] == 7
        finisher.join()


def test_exchange_tables_stay_whole_while_many_queues_bind(tmp_path):
    options = broker_options(tmp_path)
    queues = [f"worker{number}.pidbox" for number in range(40)]

    def bind(queue):
        with connection(options) as conn:
            channel = conn.default_channel
            channel._queue_bind("pidbox", queue, None, queue)
            return len(channel.get_table("pidbox"))  # decodes while the others write

    with ThreadPoolExecutor(8) as pool:
        assert all(list(pool.map(bind, queues)))
    with connection(options) as conn:
        table = conn.default_channel.get_table("pidbox")
    assert sorted(row.queue for row in table) == sorted(queues)


@pytest.mark.worker
@pytest.mark.slow
def test_two_real_workers_on_the_default_broker_lose_no_task(celery_worker_factory):
    """Two worker processes on the configured broker (the embedded one by default), tasks sent
    from eight threads at once: every task is answered, and both workers served."""
    run = make_run("2.6.24", [1.0])
    first, second = celery_worker_factory(), celery_worker_factory()
    sent = 160
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda _: ping.delay(run.pk), range(sent)))
    answers = [result.get(timeout=180) for result in results]
    assert all(answer["run_found"] for answer in answers)
    pids = {answer["pid"] for answer in answers}
    assert pids == {first.process.pid, second.process.pid}
    assert first.process.poll() is None and second.process.poll() is None
