"""Wake-heavy server-like workloads: chatroom, pipeline, wake-pingpong and overcommit."""

from typing import Any

from .errors import InvalidValueError
from .events import EV_STOP
from .interp import SPIN_LIMIT
from .program import EXIT, LOCK, LOOP, POST, RUN, SLEEP, UNLOCK, WAIT, Mutex, Semaphore
from .wl_common import MS, US, m, mark_time, p

FOREVER = 10**15
# IBM J9's object-monitor spinning on a multi-CPU Linux box (OpenJ9's threadParseArguments(),
# runtime/vm/vmthread.cpp, the defaults of -Xthr:yield=, spin2=, spin1=): a contended enter
# yields 45 times, each after 32 rounds of 256 busy-loop iterations, then blocks.
J9_YIELDS = 45
J9_SPIN2 = 32
J9_SPIN1 = 256
# HotSpot's spin/yield/sleep lock (Thread::SpinAcquire(): JDK 6 runtime/synchronizer.cpp, JDK 7
# and 8 runtime/thread.cpp; copied by GraalVM's JavaSpinLockUtils and Shenandoah's
# ShenandoahEvacLockingBitmap): a contended acquire spins, and every 4096th iteration
# ((ctr & 0xFFF) == 0) calls os::NakedYield() while Yields <= 5 (six yields), then park(1)
# (later os::naked_short_sleep(1)): a 1 ms timed sleep that SpinRelease() never cuts short
HOTSPOT_YIELDS = 6
HOTSPOT_SPINS = 4096
HOTSPOT_SLEEP_US = 1000

# What one chat message makes a client task touch, in 64-byte lines: it reads the message off
# one loopback TCP socket and writes it to the next (VolanoMark's structure; the derivation and
# its sources are in docs/simulator.md, chatroom).  x86_64 sizes, 3.x and 6.x kernels alike.
CHAT_TEXT_LINES = 2  # the message in user space: "about 100 bytes" (IBM LTC's description)
SKB_LINES = 4  # struct sk_buff, 224-240 bytes, a line-aligned slab object
SKB_SHARED_INFO_LINES = 1  # skb_shared_info up to dataref (cleared at alloc), frags[0]
SKB_HEADER_LINES = 2  # Ethernet 14 + IPv4 20 + TCP 32 (with timestamps) = 66 bytes
SKB_PAYLOAD_LINES = 2  # the message's 100 bytes inside the skb
ROOM_LOCK_LINES = 1  # the room lock's word (a futex word, a JVM monitor's lock word)
# sending: the fclone pair (the queued original and the clone handed to loopback), the
# headers, shared info and payload; receiving: the clone's sk_buff, the TCP header
# tcp_recvmsg() reads, shared info and payload
CHAT_SEND_LINES = 2 * SKB_LINES + SKB_HEADER_LINES + SKB_SHARED_INFO_LINES + SKB_PAYLOAD_LINES
CHAT_RECEIVE_LINES = SKB_LINES + 1 + SKB_SHARED_INFO_LINES + SKB_PAYLOAD_LINES
CHAT_MESSAGE_BYTES = 64 * (CHAT_TEXT_LINES + CHAT_SEND_LINES + CHAT_RECEIVE_LINES + ROOM_LOCK_LINES)


class Chatroom:
    name = "chatroom"
    description = ("Volanomark-like chat server: `rooms` x `clients`; each client waits for a "
                   "message, thinks, takes its room's lock (spinning on sched_yield() like the "
                   "JVM, or a futex), and passes a message on.  Prints "
                   "`throughput_msgs_per_s: <f>`.")
    params = {
        "rooms": p(10, "int", "chat rooms", 1, 10_000),
        "clients": p(20, "int", "clients per room", 2, 10_000),
        "messages": p(2000, "int", "messages each client sends", 1, 10**8),
        "lock": p("yield", "choice:yield,futex", "room lock: spin on sched_yield() or futex"),
        "spin_yields": p(1000, "int", "with lock=yield: sched_yield() calls a waiter makes before "
                         "it blocks on the futex, like the JVM monitors of the era (0: "
                         "spin forever)", 0, 10**9),
        "spin_loops": p(0, "int", "with lock=yield: busy-wait loop iterations (loop_ns each) "
                        "before each of those sched_yield() calls", 0, 10**9),
        "jvm": p("custom", "choice:custom,j9,hotspot-spin,hotspot-monitor", "with lock=yield: "
                 "`custom` spins "
                 "as spin_yields, spin_loops and spin_sleep_us say; `j9` takes IBM J9's "
                 "documented multi-CPU object-monitor defaults instead: 45 sched_yield() calls "
                 "(thrMaxYieldsBeforeBlocking), each after 32 x 256 spin-loop iterations "
                 "(thrMaxSpins2/1BeforeBlocking); `hotspot-spin` HotSpot's Thread::"
                 "SpinAcquire() (its leaf locks' strategy, not its Java monitors'): 6 "
                 "sched_yield() calls, each after 4096 spin-loop iterations, then 4096 more "
                 "and a 1 ms timed sleep (park(1)), again and again until the lock is free; "
                 "it never blocks on the futex; `hotspot-monitor` HotSpot's Java monitor "
                 "(ObjectMonitor, JDK 7u): an adaptive spin of up to 5000 iterations with no "
                 "sched_yield(), then a park; exit wakes one queued waiter unless a successor "
                 "is already there, and one waiter a monitor parks with a timeout of 1 ms, "
                 "x8 each time up to 1 s (succession and spin_* do not apply)"),
        "spin_sleep_us": p(0, "int", "with lock=yield: a waiter whose sched_yield() calls are "
                           "spent spins one more spin_loops round, then sleeps this long by a "
                           "timer (no unlock wakes it) and retries the lock, again after each "
                           "sleep, instead of blocking on the futex; with jvm=custom, 0 blocks "
                           "(the model before it); with jvm=hotspot-spin, 0 is HotSpot's 1 ms "
                           "and another value replaces it (how long a 1 ms timed futex wait "
                           "lasts on the thread's kernels is not sourced: swept); ignored with "
                           "jvm=j9 and jvm=hotspot-monitor", 0, 10**9),
        "succession": p("competitive", "choice:competitive,wakeall,handoff", "with lock=yield: "
                        "`competitive` (the JVM monitors' documented policy): unlock frees the "
                        "lock and wakes the first blocked waiter, which competes for it again; "
                        "`wakeall`: unlock frees the lock and wakes every blocked waiter, each "
                        "to spin again (J9's three-tier monitors, Apache Harmony's hythread "
                        "monitor_exit()); `handoff`: unlock passes the lock to the first "
                        "blocked waiter, which owns it while it waits to run"),
        "think_us": p(20, "int", "CPU time to build and parse a message", 0, 10**9),
        "cs_us": p(5, "int", "CPU time holding the room lock", 0, 10**9),
        "broadcast": p(0, "int", "1: VolanoMark's loopback structure instead of the token "
                       "ring (IBM LTC's VolanoMark workload description): four threads per "
                       "client (client sender and receiver, server receiver and writer); each "
                       "sender sends `messages` without waiting, its server receiver takes the "
                       "room lock and queues the message for the room's other clients' writers, "
                       "waking each, and every writer takes the room lock to dequeue it and "
                       "passes it to its client's receiver", 0, 1),
        "deliver_us": p(5, "int", "with broadcast=1: CPU time a server writer and a client "
                        "receiver each spend on one delivered copy (socket write or read)",
                        0, 10**9),
        "sock_msgs": p(0, "int", "with broadcast=1: a loopback socket's buffer, in messages "
                       "(0: unbounded, the description's \"it never waits\"): a send that "
                       "finds it full sleeps until the reader takes one, as tcp_sendmsg() "
                       "waits for sndbuf (sk_stream_memory_free()); no source gives the era's "
                       "buffer in messages: swept", 0, 10**9),
        "write_locked": p(0, "int", "with broadcast=1: 1: a server writer makes its socket "
                          "write still holding the room's monitor (so a full socket puts the "
                          "holder to sleep holding it); no source says which: swept", 0, 1),
        "pacing": p("none", "choice:none,turns", "with broadcast=1: `none`: every sender "
                    "sends all its messages one after the other; `turns`, one reading of "
                    "Volano's \"simulated test users take turns chatting\": a room's users "
                    "send in turn, each once its client has read the previous user's message"),
        "working_set_bytes": p(CHAT_MESSAGE_BYTES, "int", "with broadcast=0: bytes each task "
                               "touches per message, which a migrated task fetches again (with "
                               "cache_refill_us -1): by default a 100-byte chat message's "
                               "path through loopback TCP (24 lines: the message, the sent "
                               "skb's fclone pair, headers, shared info and payload, the "
                               "received skb's, the room lock's word)", 0, 2**30),
    }
    metrics = {"throughput_msgs_per_s": m("msgs/s", True)}

    def build(self, b):
        prm = b.params
        clients = prm["clients"]
        tokens = max(1, clients // 2)
        spins, loops, sleep_us = _spin_strategy(prm)
        busy_ns = round(loops * b.tun["loop_ns"])
        # the room filled in below
        lock_op: tuple = (LOCK, None, prm["lock"], spins or None, busy_ns, sleep_us * US)
        if _monitor(prm):
            lock_op = (LOCK, None, "monitor")
        if prm["broadcast"]:
            # its four roles touch different parts of a message's path and the engine prices
            # one working set a run, so the broadcast keeps the flat refill
            _build_broadcast(b, lock_op)
            return
        b.eng.set_working_set(prm["working_set_bytes"])
        messages = prm["rooms"] * clients * prm["messages"]
        b.check_budget(messages, messages * (prm["think_us"] + prm["cs_us"]) * US
                       // len(b.eng.cpus))
        for r in range(prm["rooms"]):
            lock = _room_lock(prm, r, b.tun["loop_ns"])
            inbox = [Semaphore(f"r{r}c{i}", 1 if i < tokens else 0) for i in range(clients)]
            for i in range(clients):
                nxt = inbox[(i + 1) % clients]
                prog = [(WAIT, inbox[i]), (RUN, prm["think_us"] * US), _locking(lock_op, lock),
                        (RUN, prm["cs_us"] * US), (POST, nxt, 1), (UNLOCK, lock),
                        (LOOP, prm["messages"], 0), mark_time("end"), (EXIT,)]
                b.start(b.task(f"r{r}c{i}", prog, group=f"room{r}"))

    def collect(self, b):
        prm = b.params
        total = prm["rooms"] * prm["clients"] * prm["messages"]
        wall = b.eng.marks.get("end", b.eng.now)
        return {"throughput_msgs_per_s": total / (wall / 1e9) if wall else 0.0}


def _spin_strategy(prm) -> tuple[int, int, int]:
    """A contended waiter's (sched_yield() calls, spin-loop iterations before each, sleep in us
    once the yields are spent: 0 blocks on the futex instead)."""
    if prm["jvm"] == "j9":
        return J9_YIELDS, J9_SPIN2 * J9_SPIN1, 0
    if prm["jvm"] == "hotspot-spin":
        return HOTSPOT_YIELDS, HOTSPOT_SPINS, prm["spin_sleep_us"] or HOTSPOT_SLEEP_US
    return prm["spin_yields"], prm["spin_loops"], prm["spin_sleep_us"]


def _monitor(prm) -> bool:
    return prm["lock"] == "yield" and prm["jvm"] == "hotspot-monitor"


def _room_lock(prm, room: int, loop_ns: float) -> Mutex:
    if _monitor(prm):
        # HotSpot's Java monitor (what a `synchronized` block takes once inflated): its
        # adaptive spin, cxq / EntryList, successor and responsible thread are modelled in
        # interp.py with their source (JDK 7u objectMonitor.cpp); inflate() starts the spin's
        # length at Knob_SpinLimit (interp.SPIN_LIMIT, one constant for both)
        lock = Mutex(f"room{room}", handoff=False, monitor=True, loop_ns=loop_ns)
        lock.spin_duration = SPIN_LIMIT
        return lock
    return Mutex(f"room{room}", handoff=prm["lock"] != "yield" or prm["succession"] == "handoff",
                 wake_all=prm["succession"] == "wakeall")


def _locking(lock_op: tuple, lock: Mutex) -> tuple:
    return (lock_op[0], lock, *lock_op[2:])


def _build_broadcast(b, lock_op: tuple):
    """VolanoMark's loopback test (IBM LTC, "VolanoMark 2.1.2 - Workload Description",
    lse.sourceforge.net/benchmarks/volanomark/vmarkworkload.html): each client has a sender and
    a receiver thread, and the server a receiver and a sender (writer) thread for it.  A client
    sender sends its messages one after the other (a loopback socket's buffer holds them all:
    it never waits); the server receiver of that connection wakes the room's other writers,
    which send the message on to their clients' receivers.  The JVM's monitors are modelled as
    one lock per room: the receiver queues the copies under it (waking each writer while it
    still holds it, as a notify() inside a synchronized block does), and each writer takes it
    to dequeue one.  That the writers' queues share the room's monitor is this model's
    assumption; the description names the threads and the wakeups, not the monitors."""
    prm = b.params
    clients = prm["clients"]
    copies = (clients - 1) * prm["messages"]  # what each writer and client receiver handles
    turns = prm["pacing"] == "turns"
    sock, locked = prm["sock_msgs"], prm["write_locked"]
    sent = prm["rooms"] * clients * prm["messages"]
    think, cs, deliver = prm["think_us"] * US, prm["cs_us"] * US, prm["deliver_us"] * US
    b.check_budget(sent * clients * 4, sent * (2 * think + clients * (cs + 2 * deliver))
                   // len(b.eng.cpus))
    for r in range(prm["rooms"]):
        lock = _room_lock(prm, r, b.tun["loop_ns"])
        lock_room = _locking(lock_op, lock)
        to_server = [Semaphore(f"r{r}in{i}") for i in range(clients)]
        queued = [Semaphore(f"r{r}q{i}") for i in range(clients)]
        to_client = [Semaphore(f"r{r}out{i}") for i in range(clients)]
        # turn[i]: user i may send (user 0 first); unused without pacing
        turn = [Semaphore(f"r{r}turn{i}", 1 if i == 0 else 0) for i in range(clients)]
        # a socket write or a notify() wakes the reader and goes on (no WF_SYNC hint); one
        # step object per writer, shared by the room's receivers: each receiver's program
        # lists clients - 1 of them, so a room holds clients^2 references, not clients^2 tuples
        wake = [(POST, queued[j], 1, False) for j in range(clients)]
        for i in range(clients):
            wake_writers = wake[:i] + wake[i + 1:]
            # a bounded socket: the sender takes a free slot first, the reader frees it
            up, down = _socket(f"r{r}up{i}", sock), _socket(f"r{r}down{i}", sock)
            send = [(RUN, think), *up[0], (POST, to_server[i], 1, False)]
            if turns:
                send.insert(0, (WAIT, turn[i]))
            write = [(RUN, deliver), *down[0], (POST, to_client[i], 1, False)]
            unlocked = [(UNLOCK, lock)]
            programs = {
                "send": [*send, (LOOP, prm["messages"], 0), (EXIT,)],
                "recv": [(WAIT, to_server[i]), *up[1], (RUN, think), lock_room, (RUN, cs),
                         *wake_writers, (UNLOCK, lock), (LOOP, prm["messages"], 0), (EXIT,)],
                "write": [(WAIT, queued[i]), lock_room, (RUN, cs),
                          *(write + unlocked if locked else unlocked + write),
                          (LOOP, copies, 0), (EXIT,)],
                "read": _reader(i, clients, prm["messages"], to_client[i], deliver,
                                turn[i] if turns else None, down[1]),
            }
            for role, prog in programs.items():
                b.start(b.task(f"r{r}c{i}.{role}", prog, group=f"room{r}"))


def _socket(name: str, slots: int) -> tuple[list, list]:
    """A loopback socket holding `slots` messages (0: unbounded): the steps a send takes before
    it queues a message (wait for a free slot, as tcp_sendmsg() sleeps at wait_for_sndbuf while
    sk_stream_memory_free() is false) and those a read takes after it (free the slot, waking a
    sender asleep on it).  Unbounded, both are empty and the programs are as before."""
    if not slots:
        return [], []
    free = Semaphore(name, slots)
    return [(WAIT, free)], [(POST, free, 1, False)]


def _reader(i: int, clients: int, messages: int, inbox: Semaphore, deliver: int,
            my_turn: Semaphore | None, freed: list) -> list:
    """Client i's receiver: it reads the room's other users' messages; taking turns, a round
    brings one from each user in order, and the one from user i - 1 gives user i its turn.
    ``freed``: the steps that free the read message's socket slot (none when unbounded)."""
    if my_turn is None:
        return [(WAIT, inbox), *freed, (RUN, deliver), (LOOP, (clients - 1) * messages, 0),
                mark_time("end"), (EXIT,)]
    prog: list = []
    read = [(WAIT, inbox), *freed, (RUN, deliver)]  # the same step objects for every message
    for origin in range(clients):
        if origin == i:
            continue
        prog += read
        if origin == (i - 1) % clients:
            prog.append((POST, my_turn, 1, False))
    return [*prog, (LOOP, messages, 0), mark_time("end"), (EXIT,)]


class Pipeline:
    name = "pipeline"
    description = ("Shell pipeline of compressors (`bzip2 | bzip2 | ...`): each stage reads a "
                   "block from a pipe, works on it, writes it to the next.  Prints `time <ms> ms` "
                   "and `cpu utilization: <pct>%`.")
    params = {
        "stages": p(4, "int", "pipeline stages", 1, 1000),
        "blocks": p(200, "int", "blocks pushed through", 1, 10**8),
        "work_us": p(500, "int", "CPU time per block per stage", 0, 10**9),
        "pipe_blocks": p(16, "int", "pipe buffer capacity in blocks", 1, 10**6),
    }
    metrics = {"time_ms": m("ms", False), "cpu_utilization": m("%", True)}

    def build(self, b):
        prm = b.params
        n = prm["stages"]
        b.check_budget(n * prm["blocks"], prm["blocks"] * prm["work_us"] * US)
        data = [Semaphore(f"data{k}") for k in range(n + 1)]
        space = [Semaphore(f"space{k}", prm["pipe_blocks"]) for k in range(n + 1)]
        for k in range(n):
            prog = []
            if k > 0:
                prog += [(WAIT, data[k]), (POST, space[k], 1)]
            prog.append((RUN, prm["work_us"] * US))
            if k < n - 1:
                prog += [(WAIT, space[k + 1]), (POST, data[k + 1], 1)]
            prog += [(LOOP, prm["blocks"], 0), mark_time("end"), (EXIT,)]
            b.start(b.task(f"stage{k}", prog))

    def collect(self, b):
        eng = b.eng
        wall = eng.marks.get("end", eng.now)
        busy = sum(c.busy_ns for c in eng.cpus)
        util = 100.0 * busy / (wall * len(eng.cpus)) if wall else 0.0
        return {"time_ms": wall / MS, "cpu_utilization": util}


# A pipe ping-pong's working set per request (perf bench sched pipe, ex pipe-test-1m.c: each
# side read()s and write()s one int through a pipe): the message, one cache line, and the
# page that holds a pipe buffer's data (fs/pipe.c: one page per buffer, 4 KB on x86)
PIPE_PINGPONG_BYTES = 64 + 4096


class WakePingpong:
    name = "wake-pingpong"
    description = ("tbench/sysbench-like request/response pairs: a client does `work_us`, wakes "
                   "its server and sleeps until answered.  Prints `throughput: <f> ops/s` and "
                   "`latency: <f> us` (mean runqueue wait per wakeup).")
    params = {
        "pairs": p(4, "int", "client/server pairs", 1, 100_000),
        "work_us": p(10, "int", "CPU time per request on each side", 0, 10**9),
        "roundtrips": p(5000, "int", "requests per pair", 1, 10**9),
        "working_set_bytes": p(PIPE_PINGPONG_BYTES, "int", "bytes each task touches per "
                               "request, which a migrated task fetches again (with "
                               "cache_refill_us -1): by default a pipe ping-pong's, the message "
                               "(one 64-byte line) and the pipe buffer's page (4096)", 0, 2**30),
    }
    metrics = {"throughput_ops_per_s": m("ops/s", True), "latency_us": m("us", False)}

    def build(self, b):
        prm = b.params
        work = prm["work_us"] * US
        b.eng.set_working_set(prm["working_set_bytes"])
        b.check_budget(2 * prm["pairs"] * prm["roundtrips"], 2 * prm["roundtrips"] * work)
        for i in range(prm["pairs"]):
            ask, answer = Semaphore(f"ask{i}"), Semaphore(f"answer{i}")
            client = [(RUN, work), (POST, ask, 1), (WAIT, answer), (LOOP, prm["roundtrips"], 0),
                      mark_time("end"), (EXIT,)]
            server = [(WAIT, ask), (RUN, work), (POST, answer, 1), (LOOP, prm["roundtrips"], 0),
                      (EXIT,)]
            b.start(b.task(f"client{i}", client))
            b.start(b.task(f"server{i}", server))

    def collect(self, b):
        eng = b.eng
        wall = eng.marks.get("end", eng.now)
        ops = b.params["pairs"] * b.params["roundtrips"]
        wakeups = max(1, eng.counters["wakeups"])
        waited = sum(wait for wait, _ran in eng.group_totals().values())
        return {"throughput_ops_per_s": ops / (wall / 1e9) if wall else 0.0,
                "latency_us": waited / wakeups / US}


class Overcommit:
    name = "overcommit"
    description = ("An overcommitted host: a guest VM's vCPUs are host tasks in a cgroup with "
                   "cpu.shares beside cgroups of CPU hogs; the guest runs a wake-heavy ring of "
                   "requests between its vCPUs.  Per-group schedstat wait_sum is the latency "
                   "evidence.  Prints `throughput: <f> ops/s` and `wait_sum <group>: <ms> ms`.")
    params = {
        "vcpus": p(4, "int", "guest vCPUs", 1, 4096),
        "hog_groups": p(2, "int", "cgroups of CPU hogs", 0, 1000),
        "hogs": p(3, "int", "hog tasks per hog cgroup", 1, 4096),
        "hog_group_sizes": p("", "str", "hog tasks of each hog cgroup, comma-separated (e.g. "
                             "`3,5`: other guests of different sizes); replaces `hog_groups` x "
                             "`hogs` when given"),
        "vm_shares": p(1024, "int", "cpu.shares of the VM cgroup", 2, 262_144),
        "hog_shares": p(1024, "int", "cpu.shares of each hog cgroup", 2, 262_144),
        "work_us": p(50, "int", "guest CPU time per request", 1, 10**9),
        "after_ipi_us": p(0, "int", "guest CPU time a vCPU keeps running after it kicks the next "
                          "one (0: it halts at once)", 0, 10**9),
        "kick": p("sync", "choice:sync,ipi", "how the host wakes the next vCPU: `sync` hints "
                  "that the kicking vCPU is about to halt (WF_SYNC, the earlier model); `ipi` "
                  "is a plain wake-up, as kvm_vcpu_kick() does"),
        "duration_ms": p(1000, "int", "simulated time (with `requests`, the longest the run "
                         "may take)", 1, 10**8),
        "hogs_ahead_ms": p(0, "int", "the hogs (the other guests) run this long before the "
                           "guest's vCPUs start, so that their averages are past start-up when "
                           "the guest's benchmark runs; the run, the cap and the throughput "
                           "begin then (0: everything starts together)", 0, 10**6),
        "in_flight": p(0, "int", "guest requests circulating in the ring, held by the first "
                       "vCPUs at the start (0: half the vCPUs, at least one)", 0, 4096),
        "hog_run_us": p(0, "int", "CPU time a hog runs before it halts for `hog_halt_us` (other "
                        "guests as vCPU threads that halt when idle; 0, or `hog_halt_us` 0: a "
                        "CPU hog that never halts)", 0, 10**9),
        "hog_halt_us": p(0, "int", "how long a hog halts after each `hog_run_us` (a timer-ended "
                         "wait, as a halted vCPU woken by its guest's timer)", 0, 10**9),
        "requests": p(0, "int", "guest requests the run serves before it ends, as a benchmark "
                      "run inside the guest does (0: run for `duration_ms`); wait_sum then sums "
                      "over the run", 0, 10**9),
    }
    metrics = {"throughput_ops_per_s": m("ops/s", True), "vm_wait_sum_ms": m("ms", False)}

    def build(self, b):
        prm = b.params
        n = prm["vcpus"]
        held = min(n, prm["in_flight"] or max(1, n // 2))
        inbox = [Semaphore(f"vcpu{i}", 1 if i < held else 0) for i in range(n)]
        b.state["ops"] = 0

        def count_op(eng, task):
            b.state["ops"] += 1
            if b.state["ops"] == prm["requests"]:  # the guest's benchmark is done
                eng.marks["end"] = eng.now
                eng.push(eng.now, EV_STOP, None)

        from .program import MARK
        sync = prm["kick"] == "sync"
        ahead = prm["hogs_ahead_ms"] * MS
        for i in range(n):
            prog: list[tuple[Any, ...]] = [(SLEEP, ahead)] if ahead else []
            top = len(prog)  # the loop's first action
            prog += [(WAIT, inbox[i]), (RUN, prm["work_us"] * US), (MARK, count_op),
                     (POST, inbox[(i + 1) % n], 1, sync)]
            if prm["after_ipi_us"]:
                prog.append((RUN, prm["after_ipi_us"] * US))
            prog.append((LOOP, FOREVER, top))
            t = b.task(f"vcpu{i}", prog, group="vm")
            t.weight = max(2, prm["vm_shares"] // n)  # a group's shares split over its tasks
            t.entity_weight = prm["vm_shares"]  # its group's entity, at wakeup preemption
            t.group_shares = prm["vm_shares"]  # where the profile models windowed shares
            b.start(t)
        sizes = _hog_group_sizes(prm)
        for g, size in enumerate(sizes):
            for h in range(size):
                t = b.task(f"hog{g}.{h}", _hog_program(prm), group=f"hogs{g}")
                t.weight = max(2, prm["hog_shares"] // size)
                t.entity_weight = prm["hog_shares"]
                t.group_shares = prm["hog_shares"]
                b.start(t)
        b.eng.stop_at = prm["duration_ms"] * MS + ahead
        b.check_budget(n + sum(sizes), b.eng.stop_at)

    def collect(self, b):
        eng = b.eng
        vm_wait = eng.group_totals().get("vm", [0, 0])[0]
        ahead = b.params["hogs_ahead_ms"] * MS
        seconds = (eng.marks.get("end", b.params["duration_ms"] * MS + ahead) - ahead) / 1e9
        return {"throughput_ops_per_s": b.state["ops"] / seconds if seconds else 0.0,
                "vm_wait_sum_ms": vm_wait / MS}


def _hog_program(prm) -> list[tuple[Any, ...]]:
    """A hog of another guest: a CPU hog, or with both hog params a vCPU thread that runs and
    halts in turn (the duty cycle has no source: bench/simulator_wake_balance.py sweeps it)."""
    if prm["hog_run_us"] and prm["hog_halt_us"]:
        return [(RUN, prm["hog_run_us"] * US), (SLEEP, prm["hog_halt_us"] * US), (LOOP, FOREVER, 0)]
    return [(RUN, FOREVER)]


def _hog_group_sizes(prm) -> list[int]:
    text = prm["hog_group_sizes"].strip()
    if not text:
        return [prm["hogs"]] * prm["hog_groups"]
    sizes = []
    for part in text.split(","):
        part = part.strip()
        if not part.isdigit() or not 1 <= int(part) <= 4096:
            raise InvalidValueError("params.hog_group_sizes", f"hog_group_sizes {text!r}: each "
                                    "group needs 1..4096 hogs, comma-separated")
        sizes.append(int(part))
    if len(sizes) > 1000:
        raise InvalidValueError("params.hog_group_sizes", "at most 1000 hog groups")
    return sizes
