"""Executes a task's instantaneous actions until it reaches a running action, blocks or exits."""

from typing import TYPE_CHECKING, Any, Final

from .events import NO_TIME
from .policies.base import remove_task
from .program import (
    ADD,
    BARRIER,
    BLOCKED,
    EXIT,
    FORK,
    LOCK,
    LOOP,
    MARK,
    OP_NAMES,
    POST,
    RUN,
    RUNNING,
    SET,
    SLEEP,
    SPIN,
    TIMER,
    UNLOCK,
    WAIT,
    WALL_END,
    WALL_RUN,
    YIELD,
    Mutex,
    Semaphore,
    Task,
)

if TYPE_CHECKING:  # annotations only (the engine imports this module)
    from .engine import Cpu, Engine


# HotSpot's Java monitor, ObjectMonitor (jvm=hotspot-monitor; JDK 7u's
# hotspot/src/share/vm/runtime/objectMonitor.cpp, its knobs' defaults and synchronizer.cpp's
# inflate()).  A spinner's spin_sleep is MONITOR_PARK: when its spin's budget is spent it
# parks (monitor_park()) instead of yielding or sleeping.
MONITOR_PARK: Final = -1
SPIN_LIMIT: Final = 5000  # Knob_SpinLimit; inflate() starts a monitor's _SpinDuration there
PRE_SPIN: Final = 11  # TrySpin_VaryDuration(): Knob_PreSpin (10) + 1 TryLock probes first
SPIN_POVERTY: Final = 1000  # Knob_Poverty: a successful spin raises _SpinDuration to it first
SPIN_BONUS: Final = 100  # Knob_Bonus and Knob_BonusB: added after a successful spin
SPIN_PENALTY: Final = 200  # Knob_Penalty: taken off after a spin that ran its full count
RECHECK_MAX_MS: Final = 1000  # EnterI(): the responsible thread's RecheckInterval cap
PARK_NS_PER_MS: Final = 1_000_000


def _finish_spin(task: Task):
    obj = task.spin_on
    remove_task(obj.spinners, task)
    if task.lock_mode is not None:
        obj.owner = task
        if task.spin_sleep == MONITOR_PARK:
            _monitor_acquired(obj, task)
        task.lock_mode = None
    task.spin_on = None
    task.spin_yield = False


def step(eng: "Engine", cpu: "Cpu", task: Task) -> None:
    """The current action is done; run the following ones until the CPU has its next plan."""
    if task.spin_on is not None:
        _finish_spin(task)
    run_actions(eng, cpu, task)


def run_actions(eng: "Engine", cpu: "Cpu", task: Task) -> None:
    """Run the task's actions from task.pc until one takes CPU time, blocks or exits.

    This is the simulator's innermost loop (once per event on most workloads), so the commonest
    actions and their uncontended cases are handled inline, the program counter lives in a local
    (written back before anything that could look at it), and everything else goes through
    _handle().  step_reference() below is the plain version; tests/simulator/
    test_reference_mode.py runs every workload through each and requires identical results."""
    task.remaining = 0
    prog = task.prog
    pc = task.pc
    while True:
        op: tuple[Any, ...] = prog[pc]
        code: int = op[0]
        pc += 1
        if code == RUN:
            ns: int = op[1]
            if ns > 0:
                task.pc = pc
                start_run(eng, cpu, task, ns)
                return
            task.remaining = ns
            continue
        if code == LOOP:
            pc = _loop_jump(task, op, pc)
            continue
        if code == WAIT:
            wsem: Semaphore = op[1]
            if wsem.count > 0:
                wsem.count -= 1
                continue
        elif code == POST:
            psem: Semaphore = op[1]
            posts: int = op[2]  # typed: an int test, not a generic == on an object
            if not psem.waiters and posts == 1:
                psem.count += 1
                continue
        elif code == LOCK:
            lmutex: Mutex = op[1]
            if lmutex.owner is None:
                lmutex.owner = task
                continue
        elif code == UNLOCK:
            umutex: Mutex = op[1]
            if not umutex.waiters and not umutex.spinners:
                umutex.owner = None
                continue
        task.pc = pc
        if _handle(eng, cpu, task, op, code):
            return
        pc = task.pc  # a handler that returns False leaves the task where it was


def start_run(eng: "Engine", cpu: "Cpu", task: Task, ns: int) -> None:
    """A RUN action of ``ns`` > 0 begins: jitter it, then plan the CPU's next event (the
    inlined Engine.jitter() and Engine.plan() of a fresh run segment)."""
    noise = eng.noise
    if noise > 0.0:
        r: float = eng._random()
        scaled: float = ns * (1.0 + noise * (2.0 * r - 1.0))
        ns = int(scaled) or 1
    task.remaining = ns
    preempt_at = cpu.preempt_at
    if cpu.need_resched or (preempt_at != NO_TIME and eng.now >= preempt_at):
        eng.begin(cpu, task)
        return
    start = cpu.seg_start
    end = start + (ns if cpu.speed == 1.0 else int(-(-ns // cpu.speed)))
    if not cpu.preempt_valid:
        preempt_at = eng.slice_expiry(cpu, task, start)
    if preempt_at != NO_TIME and preempt_at < end:
        end = preempt_at
    if end != cpu.pending_at:  # Engine.arm(), inlined
        cpu.pending_at = end
        eng.queue.schedule(cpu.seg_event, end)


class LoopLeft:
    """The iterations a LOOP action has left (0: not begun), kept in task.loops at the LOOP's
    pc + 1.  An object with a native field rather than an int in the list: the compiled build
    counts down in place, where storing a new count in the list boxed it (a new object for
    every count above 256, once per iteration)."""

    __slots__ = ("left",)

    def __init__(self) -> None:
        self.left: int = 0


def _loop_counter(task: Task, pc: int) -> LoopLeft:
    """The LOOP counter kept at ``pc`` (made on the task's first LOOP)."""
    loops = task.loops
    if loops is None:
        loops = task.loops = [None] * (len(task.prog) + 1)
    counter: LoopLeft | None = loops[pc]
    if counter is None:
        counter = loops[pc] = LoopLeft()
    return counter


def _loop_jump(task: Task, op: tuple[Any, ...], pc: int) -> int:
    """The pc after a LOOP action at pc - 1: jump back to op[2] until op[1] iterations are
    done."""
    counter = _loop_counter(task, pc)
    count = counter.left  # a begun loop has 1 or more left
    if not count:  # two statements, not `x if c else op[1]`: an int joined with an object is
        count = op[1]  # an object, and the compiled build boxed the count to join them
    if count > 1:
        counter.left = count - 1
        return op[2]
    counter.left = 0
    return pc


def _handle(eng: "Engine", cpu: "Cpu", task: Task, op: tuple[Any, ...], code: int) -> bool:
    """Every action run_actions() does not finish inline; True when the task's step ended
    (it runs, blocks or exits).  The synchronisation handlers are called directly: a call
    through the table costs several times more in the compiled build."""
    if code == WAIT:
        return _op_wait(eng, cpu, task, op)
    if code == POST:
        return _op_post(eng, cpu, task, op)
    if code == LOCK:
        return _op_lock(eng, cpu, task, op)
    if code == UNLOCK:
        return _op_unlock(eng, cpu, task, op)
    handled: bool = HANDLERS[code](eng, cpu, task, op)
    return handled


def _start_spin(eng: "Engine", cpu: "Cpu", task: Task, obj, target, use_yield, lock_mode,
                spins=None, busy_ns=0, sleep_ns=0):
    task.spins_left = spins
    task.spin_busy = busy_ns
    task.spin_sleep = sleep_ns
    task.spin_phase = 0
    task.spin_on = obj
    task.spin_target = target
    task.spin_yield = use_yield
    task.lock_mode = lock_mode
    task.remaining = 0
    obj.spinners.append(task)
    eng.begin(cpu, task)


def _charge(eng: "Engine", cpu: "Cpu", task: Task, ns: int) -> bool:
    """Continue running for ``ns`` of kernel work (syscall cost) before the next action."""
    task.remaining = ns
    eng.begin(cpu, task)
    return True


def _op_wait(eng: "Engine", cpu: "Cpu", task: Task, op: tuple[Any, ...]) -> bool:
    sem: Semaphore = op[1]
    if sem.count > 0:
        sem.count -= 1
        return False
    sem.waiters.append(task)
    eng.block(cpu, task)
    return True


def _op_post(eng: "Engine", cpu: "Cpu", task: Task, op: tuple[Any, ...]) -> bool:
    sem: Semaphore = op[1]
    posts: int = op[2]
    # a futex/pipe post hints that the poster is about to sleep (WF_SYNC); a 4th field False
    # posts without the hint (a kick from a task that keeps running)
    sync: bool = len(op) < 4 or bool(op[3])
    woke = 0
    posted = 0
    while posted < posts:  # not `for _ in range(posts)`: the compiled build boxed the `_`
        posted += 1
        if sem.waiters:
            eng.wake(sem.waiters.pop(0), cpu.id, sync=sync)
            woke += 1
        else:
            sem.count += 1
    if woke:
        return _charge(eng, cpu, task, eng.wakeup_ns * woke)
    return False


def _op_lock(eng: "Engine", cpu: "Cpu", task: Task, op: tuple[Any, ...]) -> bool:
    mutex: Mutex = op[1]
    mode: str = op[2]
    if mutex.owner is None:
        mutex.owner = task
        return False
    mutex.contended += 1
    if mode == "monitor":  # ObjectMonitor::enter(): TrySpin() before it queues itself
        if mutex.succ is None:  # Knob_SpinSetSucc: a spinner marks itself the successor
            mutex.succ = task
        _start_spin(eng, cpu, task, mutex, 0, True, "monitor", 0, _spin_budget(mutex),
                    MONITOR_PARK)
    elif mode == "yield":  # JVM style: sched_yield() up to op[3] times (None: forever), each after
        # op[4] ns of busy waiting, then block (op[5] > 0: spin op[4] more and sleep op[5] ns
        # by a timer instead, again after each such sleep until the lock is free)
        _start_spin(eng, cpu, task, mutex, 0, True, "yield", op[3] if len(op) > 3 else None,
                    op[4] if len(op) > 4 else 0, op[5] if len(op) > 5 else 0)
    elif mode == "spin":
        _start_spin(eng, cpu, task, mutex, 0, False, "spin")
    else:
        mutex.waiters.append(task)
        eng.block(cpu, task)
    return True


def _op_unlock(eng: "Engine", cpu: "Cpu", task: Task, op: tuple[Any, ...]) -> bool:
    mutex: Mutex = op[1]
    if mutex.monitor:
        return _monitor_exit(eng, cpu, task, mutex)
    if mutex.waiters and mutex.handoff:
        mutex.owner = mutex.waiters.pop(0)
        eng.wake(mutex.owner, cpu.id)
        return _charge(eng, cpu, task, eng.wakeup_ns)
    mutex.owner = None
    if mutex.waiters:  # competitive succession: the woken waiter runs its LOCK again
        heirs: list[Task] = mutex.waiters[:] if mutex.wake_all else [mutex.waiters[0]]
        del mutex.waiters[:len(heirs)]
        heir: Task  # typed: pc read and written natively
        for heir in heirs:
            heir.pc -= 1
        if mutex.spinners:
            eng.notify_spinners(mutex.spinners)
        for heir in heirs:
            eng.wake(heir, cpu.id)
        return _charge(eng, cpu, task, eng.wakeup_ns * len(heirs))
    if mutex.spinners:
        eng.notify_spinners(mutex.spinners)
    return False


def _spin_budget(mutex: Mutex) -> int:
    """The ns a TrySpin_VaryDuration() spins: its pre-spin probes, then _SpinDuration iterations
    unless that is 0 or the owner cannot drop the lock (NotRunnable(): the owner is blocked;
    a preempted owner is still "in Java" and is spun on), each iteration at the monitor's
    loop_ns.  At least 1 ns, so that a park that returns at once cannot loop in no time."""
    iterations = PRE_SPIN
    owner = mutex.owner
    if mutex.spin_duration > 0 and (owner is None or owner.state != BLOCKED):
        iterations += mutex.spin_duration
    return max(1, round(iterations * mutex.loop_ns))


def _monitor_acquired(mutex: Mutex, task: Task) -> None:
    """A contender took the monitor (EnterI()'s egress, TrySpin()'s success): a spin that
    found it free after the first probe earns the bonus; the contender unlinks itself from the
    EntryList or cxq (UnlinkAfterAcquire()) and stops being successor or responsible."""
    if task.spin_phase > 0 and mutex.spin_duration < SPIN_LIMIT:
        mutex.spin_duration = max(mutex.spin_duration, SPIN_POVERTY) + SPIN_BONUS
    if task.recheck_ms > 0:
        queue = mutex.waiters if any(t is task for t in mutex.waiters) else mutex.cxq
        remove_task(queue, task)
    task.recheck_ms = 0
    if mutex.succ is task:
        mutex.succ = None
    if mutex.responsible is task:
        mutex.responsible = None
    task.permit = False


def monitor_park(eng: "Engine", cpu: "Cpu", task: Task) -> None:
    """A monitor contender's TrySpin() ran its budget out (Engine.give_up_spin()): EnterI().
    The spin enter() made (Knob_SpinEarly) is followed by EnterI()'s own TrySpin() before it
    queues itself (task.recheck_ms -1 between the two).  Then, the first time, it queues itself
    on the cxq (_queue_on_cxq()) and parks (_park()).  A pending unpark() makes the park return
    at once, into another TrySpin().  Woken, it is still a spinner of the monitor:
    Engine.begin() takes the monitor if it is free (TryLock()), else it spins again
    (Knob_SpinAfterFutile)."""
    mutex: Mutex = task.spin_on
    _spin_failed(mutex, task)
    if task.recheck_ms == 0:  # enter()'s early spin failed: EnterI() spins once more
        task.recheck_ms = -1
        _spin_again(eng, cpu, task, mutex)
        return
    if task.recheck_ms < 0:
        _queue_on_cxq(mutex, task)
    if task.permit:  # an unpark() came while it was not parked: the park returns at once
        task.permit = False
        _spin_again(eng, cpu, task, mutex)
        return
    task.spin_phase = 0
    task.spin_busy = _spin_budget(mutex)  # the TrySpin() after the park (Knob_SpinAfterFutile)
    _park(eng, cpu, task, mutex)


def _spin_failed(mutex: Mutex, task: Task) -> None:
    """TrySpin_VaryDuration()'s failure: a spin past the pre-spin probes (one that had a
    _SpinDuration to run) costs the monitor Knob_Penalty, and the spinner stops being the
    successor, so that an exit wakes a queued waiter instead."""
    if task.spin_busy > round(PRE_SPIN * mutex.loop_ns) and mutex.spin_duration > 0:
        mutex.spin_duration = max(0, mutex.spin_duration - SPIN_PENALTY)
    if mutex.succ is task:
        mutex.succ = None


def _spin_again(eng: "Engine", cpu: "Cpu", task: Task, mutex: Mutex) -> None:
    """Another TrySpin() on the CPU, with a budget for the monitor as it is now; the spinner
    marks itself the successor if no one is (Knob_SpinSetSucc)."""
    if mutex.succ is None:
        mutex.succ = task
    task.spin_phase = 0
    task.spin_busy = _spin_budget(mutex)
    eng.plan(cpu)


def _queue_on_cxq(mutex: Mutex, task: Task) -> None:
    """EnterI() pushes the contender on the cxq's front; it takes the responsible role if it
    found the cxq and the EntryList empty and no one has it."""
    if not mutex.cxq and not mutex.waiters and mutex.responsible is None:
        mutex.responsible = task
    mutex.cxq.insert(0, task)
    task.recheck_ms = 1
    task.permit = False  # EnterI() resets its ParkEvent before it queues itself


def _park(eng: "Engine", cpu: "Cpu", task: Task, mutex: Mutex) -> None:
    """EnterI()'s park: timed if the contender is the responsible thread (RecheckInterval: 1
    ms, then x8 each time, up to 1000 ms), so that a monitor freed with no one woken (a
    stranding) is still taken; untimed otherwise, until an exit unparks it."""
    counters = eng._counters
    if mutex.responsible is task:
        timeout = task.recheck_ms
        task.recheck_ms = min(timeout * 8, RECHECK_MAX_MS)
        counters["monitor_timed_parks"] = counters.get("monitor_timed_parks", 0) + 1
        eng.sleep(cpu, task, eng.now + timeout * PARK_NS_PER_MS)
        return
    counters["spin_blocks"] += 1
    eng.block(cpu, task)


def _monitor_exit(eng: "Engine", cpu: "Cpu", task: Task, mutex: Mutex) -> bool:
    """ObjectMonitor::exit() (Knob_ExitPolicy 0, QMode 0): drop the monitor and the responsible
    role; with both queues empty, or a successor already there (a woken heir, or a spinner:
    a running spinner sets _succ on every iteration it finds it clear), wake no one.  Else
    drain the cxq into an empty EntryList (its order kept: newest first), make the EntryList's
    head the successor and unpark it; it stays queued and competes again (spinners may take
    the monitor first)."""
    mutex.responsible = None
    mutex.owner = None
    if mutex.succ is None:
        spinner: Task
        for spinner in mutex.spinners:
            if spinner.state == RUNNING:
                mutex.succ = spinner
                break
    if (not mutex.waiters and not mutex.cxq) or mutex.succ is not None:
        if mutex.spinners:
            eng.notify_spinners(mutex.spinners)
        return False
    if not mutex.waiters:
        mutex.waiters, mutex.cxq = mutex.cxq, []
    heir: Task = mutex.waiters[0]
    mutex.succ = heir
    eng.notify_spinners(mutex.spinners)
    if heir.state != BLOCKED:  # not parked: its next park returns at once
        heir.permit = True
        return False
    eng.disarm_timer(heir)  # a timed park ends at the unpark
    heir.spin_busy = _spin_budget(mutex)
    eng.wake(heir, cpu.id)
    return _charge(eng, cpu, task, eng.wakeup_ns)


def _op_spin(eng: "Engine", cpu: "Cpu", task: Task, op: Any) -> bool:
    counter = op[1]
    if counter.value >= op[2]:
        return False
    _start_spin(eng, cpu, task, counter, op[2], op[3], None)
    return True


def _op_add(eng: "Engine", cpu: "Cpu", task: Task, op: Any) -> bool:
    op[1].value += op[2]
    if op[1].spinners:
        eng.notify_spinners(op[1].spinners)
    return False


def _op_set(eng: "Engine", cpu: "Cpu", task: Task, op: Any) -> bool:
    op[1].value = op[2]
    return False


def _op_mark(eng: "Engine", cpu: "Cpu", task: Task, op: Any) -> bool:
    op[1](eng, task)
    return False


def _op_sleep(eng: "Engine", cpu: "Cpu", task: Task, op: Any) -> bool:
    eng.sleep(cpu, task, eng.now + eng.jitter(op[1]))
    return True


def _op_timer(eng: "Engine", cpu: "Cpu", task: Task, op: Any) -> bool:
    """End of a periodic job: account it, then sleep until the next release."""
    period = op[1]
    eng._counters["jobs"] += 1
    if eng.now > task.job_deadline:
        eng._counters["deadline_misses"] += 1
    task.release += period
    task.job_deadline = task.release + period
    task.deadline = task.job_deadline  # SCHED_DEADLINE orders by it
    if task.release <= eng.now:
        return False
    if eng.reference:
        eng.sleep(cpu, task, task.release)
        return True
    # Engine.sleep(cpu, task, task.release), inlined: this runs once per job
    eng.arm_timer(task, task.release)
    task.state = BLOCKED
    eng._leave_cpu(cpu, task)
    eng.schedule(cpu)
    return True


def _op_yield(eng: "Engine", cpu: "Cpu", task: Task, op: Any) -> bool:
    eng.do_yield(cpu, task)
    return True


def _op_fork(eng: "Engine", cpu: "Cpu", task: Task, op: Any) -> bool:
    child = op[1](eng, task)
    eng.fork(cpu, task, child)
    if cpu.need_resched:
        # the child preempts its parent (child-runs-first, or wakeup preemption): clone()
        # returns in the parent only when the parent runs again, so whatever follows the fork
        # (a gettimeofday() that starts a burn's clock) happens then, not at the fork
        task.remaining = 0
        eng.begin(cpu, task)
        return True
    return False


def _op_exit(eng: "Engine", cpu: "Cpu", task: Task, op: Any) -> bool:
    if task.joinsem is not None:
        sem = task.joinsem
        if sem.waiters:
            eng.wake(sem.waiters.pop(0), cpu.id)
        else:
            sem.count += 1
    eng.exit(cpu, task)
    return True


def _op_barrier(eng: "Engine", cpu: "Cpu", task: Task, op: Any) -> bool:
    bar = op[1]
    bar.arrived += 1
    if bar.arrived < bar.parties:
        bar.waiters.append(task)
        eng.block(cpu, task)
        return True
    bar.arrived = 0
    waiters, bar.waiters = bar.waiters, []
    for waiter in waiters:
        eng.wake(waiter, cpu.id)
    return False


def _op_run(eng: "Engine", cpu: "Cpu", task: Task, op: Any) -> bool:
    ns = op[1]
    if ns <= 0:
        task.remaining = ns
        return False
    task.remaining = eng.jitter(ns)
    eng.begin(cpu, task)
    return True


def _op_loop(eng: "Engine", cpu: "Cpu", task: Task, op: Any) -> bool:
    """Jump back to op[2] until op[1] iterations are done (state per LOOP action's pc + 1)."""
    counter = _loop_counter(task, task.pc)
    left = (counter.left if counter.left else op[1]) - 1
    if left > 0:
        counter.left = left
        task.pc = op[2]
    else:
        counter.left = 0
    return False


def step_reference(eng: "Engine", cpu: "Cpu", task: Task):
    """step() without run_actions()'s inlined cases: every action through its handler, every run
    segment planned by Engine.begin()/plan().  The reference mode's step (see Engine)."""
    if task.spin_on is not None:
        _finish_spin(task)
    task.remaining = 0
    while True:
        op = task.prog[task.pc]
        task.pc += 1
        if REFERENCE_HANDLERS[op[0]](eng, cpu, task, op):
            return


def _op_wall_run(eng: "Engine", cpu: "Cpu", task: Task, op: Any) -> bool:
    """Busy-loop until the wall clock shows op[1] ns more (gettimeofday() polling, as the
    harness's threadtest_burn does): time spent preempted counts towards the burn."""
    start = cpu.seg_start if cpu.seg_start > eng.now else eng.now
    task.wall_until = start + op[1]
    task.remaining = op[1]
    eng.begin(cpu, task)
    return True


def _op_wall_end(eng: "Engine", cpu: "Cpu", task: Task, op: Any) -> bool:
    task.wall_until = None
    return False


def _op_unknown(eng: "Engine", cpu: "Cpu", task: Task, op: Any) -> bool:
    raise AssertionError(f"unknown op {op[0]}")


# _handle()'s table for the actions run_actions() does not finish itself, indexed by op code
# (RUN and LOOP never reach it)
HANDLERS: Final[list[Any]] = [_op_unknown] * len(OP_NAMES)
for _code, _fn in ((WAIT, _op_wait), (POST, _op_post), (LOCK, _op_lock), (UNLOCK, _op_unlock),
                   (SPIN, _op_spin), (ADD, _op_add), (SET, _op_set), (MARK, _op_mark),
                   (SLEEP, _op_sleep), (TIMER, _op_timer), (YIELD, _op_yield), (FORK, _op_fork),
                   (EXIT, _op_exit), (BARRIER, _op_barrier), (WALL_RUN, _op_wall_run),
                   (WALL_END, _op_wall_end)):
    HANDLERS[_code] = _fn

REFERENCE_HANDLERS: Final[list[Any]] = list(HANDLERS)
REFERENCE_HANDLERS[RUN] = _op_run
REFERENCE_HANDLERS[LOOP] = _op_loop
