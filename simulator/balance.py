"""Load balancing and task placement for the per-CPU-runqueue families (O(1), CFS, RSDL, EEVDF).

Periodic balancing runs from a CPU's tick when its domain's interval has passed (the interval is
multiplied by busy_factor while the CPU is busy, doubles while the domain looks balanced and resets
after a failed or successful move, as in 2.6's load_balance(); past cache_nice_tries + 2 failures
the busiest CPU's migration thread pushes a task, active_push()).  Balance events are only scheduled
while some runqueue has a second task, so an idle or evenly loaded machine costs no ticks.
"""

from typing import TYPE_CHECKING, Any, Final

from . import balance66
from .domains import DomainLevel
from .program import RUNNING, Task
from .topology import build_domains

if TYPE_CHECKING:  # annotations only (the engine imports this module)
    from .engine import Cpu, Engine

# Final: the compiled build folds the constants in (a plain module global is a dict lookup)
NEWIDLE: Final = "NEWIDLE"
WAKE_AFFINE: Final = "WAKE_AFFINE"
BALANCE_FORK: Final = "FORK"
BALANCE_WAKE: Final = "WAKE"
CACHE_LEVELS: Final = ("SMT", "MC")  # the levels whose CPUs share a cache


def setup(eng: "Engine"):
    if eng.policy.global_queue:
        return
    tun = eng.tun
    flags = set()
    if tun["newidle_balance"]:
        flags.add(NEWIDLE)
    if tun["wake_affine"]:
        flags.add(WAKE_AFFINE)
    if tun["balance_fork"]:
        flags.add(BALANCE_FORK)
    cache_flags = set(flags)
    if tun["balance_wake"]:  # the thread's patch sets it on the cache-sharing levels only
        cache_flags.add(BALANCE_WAKE)

    def flags_for(name: str) -> set[str]:
        return cache_flags if name in CACHE_LEVELS else flags

    for cpu in eng.cpus:
        cpu.domains = build_domains(eng.topo, cpu.id, flags_for, tun["busy_factor"],
                                    sd_init_66_params=bool(tun.get("balance_66")))
        cpu.llc_span = _find_llc_span(cpu)


def _find_llc_span(cpu: "Cpu"):
    """The CPUs sharing ``cpu``'s last-level cache: its MC level, else its lowest level."""
    for level in cpu.domains:
        if level.name == "MC":
            return level.span
    return cpu.domains[0].span if cpu.domains else (cpu.id,)


def _allowed(task: Task, cpu_id):
    return task.affinity is None or cpu_id in task.affinity


def _idlest(eng: "Engine", task: Task, span, prefer):
    """find_idlest_cpu(): the least weighted load, the preferred CPU winning ties."""
    best: int | None = None
    best_key: Any = None
    load_of = eng.policy.load_of
    for cid in span:
        if not _allowed(task, cid):
            continue
        key = (load_of(eng.cpus[cid].rq), cid != prefer, cid)
        if best_key is None or key < best_key:
            best, best_key = cid, key
    return best


def _first_allowed(task: Task):
    return min(task.affinity) if task.affinity else 0


def select_fork_cpu(eng: "Engine", task: Task, parent_cpu):
    if eng.policy.global_queue:
        return parent_cpu if parent_cpu is not None else _first_allowed(task)
    home = parent_cpu if parent_cpu is not None else 0
    if eng.tun["balance_fork"]:
        found = _idlest(eng, task, range(len(eng.cpus)), home)
        if found is not None:
            return found
    elif eng.tun["balance_fork_smt"]:
        found = _idlest(eng, task, _smt_span(eng, home), home)
        if found is not None:
            return found
    return home if _allowed(task, home) else _first_allowed(task)


def _smt_span(eng: "Engine", cpu_id: int) -> tuple[int, ...]:
    """The hardware threads of ``cpu_id``'s core (its SMT domain), or the CPU alone."""
    level: DomainLevel
    for level in eng.cpus[cpu_id].domains:
        if level.name == "SMT":
            return level.span
    return (cpu_id,)


def _wake_affine(eng: "Engine", task: Task, waker: int, prev: int, sync: bool,
                 level: DomainLevel) -> bool:
    """2.6 wake_affine(): move the wakee next to its waker when the waker's CPU is not busier."""
    if eng.policy.wake_affine_66:
        return _wake_affine_66(eng, task, waker, prev, sync, level)
    pct = 100 + (level.imbalance_pct - 100) // 2
    waker_rq = eng.cpus[waker].rq
    this_load = eng.policy.load_of(waker_rq)
    waker_curr = eng.cpus[waker].curr
    if sync and waker_curr is not None:
        this_load -= waker_curr.weight
    prev_load = eng.policy.load_of(eng.cpus[prev].rq)
    balanced = 100 * (this_load + task.weight) <= pct * prev_load
    if not eng.wake_affine_3x or balanced:
        return balanced
    # 3.x wake_affine() (stored 3.x kernel/sched/fair.c, find_string ids 6254856844,
    # 15376374630; wake_idx 0, so source_load() and target_load() are the loads now, and
    # effective_load() of a task of the root group is the weight itself): "if (this_load > 0)"
    # the imbalance test, else balanced; "if (sync && balanced) return 1"; then balanced, or
    # this_load <= load && this_load + target_load(prev_cpu) <= cpu_avg_load_per_task(this)
    if this_load <= 0:
        return True
    nr = waker_rq.nr_running
    per_task = eng.policy.load_of(waker_rq) // nr if nr else 0
    return this_load <= prev_load and this_load + prev_load <= per_task


def _available_idle(eng: "Engine", cid: int) -> bool:
    cpu = eng.cpus[cid]
    return cpu.curr is None and cpu.rq.nr_running == 0


def _wake_affine_66(eng: "Engine", task: Task, this: int, prev: int, sync: bool,
                    level: DomainLevel) -> bool:
    """6.6 wake_affine(): wake_affine_idle() -- an idle waking CPU sharing the cache takes the
    wakee unless prev is idle too, a sync waker alone on its CPU takes it, an idle prev keeps
    it -- else wake_affine_weight() on PELT loads (cpu_load(), task_h_load()): the waking CPU
    with the wakee added against prev without it, the latter raised by half the imbalance
    margin (WA_BIAS); strictly less pulls.  True moves the wakee to ``this``."""
    if _available_idle(eng, this) and _spans(eng.cpus[this].llc_span, prev):
        return not _available_idle(eng, prev)
    if sync and eng.cpus[this].rq.nr_running == 1:
        return True
    if _available_idle(eng, prev):
        return False
    policy = eng.policy
    now = eng.now
    this_load = policy.wake_load(eng.cpus[this].rq, now, None)
    curr = eng.cpus[this].curr
    if sync and curr is not None:
        current = policy.task_load(curr, now)
        if current > this_load:
            return True
        this_load -= current
    this_eff = 100 * (this_load + policy.task_load(task, now))
    # cpu_load(prev) - task_load: the wakee's load is on prev, so this is cpu_load_without()
    prev_eff = (policy.wake_load(eng.cpus[prev].rq, now, task)
                * (100 + (level.imbalance_pct - 100) // 2))
    if sync:
        prev_eff += 1  # equal loads: let select_idle_sibling() consider stacking on the waker
    return this_eff < prev_eff


def _wake_levels(eng: "Engine", cpu: int, prev: int, want_affine: bool):
    """select_task_rq_fair()'s walk up the waking CPU's domains: the lowest level with
    SD_WAKE_AFFINE that spans the previous CPU (it wins over every balance flag), else the
    highest level with SD_BALANCE_WAKE, as (affine level, its index) or (None, balance index)."""
    balance_at = -1
    levels: list[DomainLevel] = eng.cpus[cpu].domains
    for i in range(len(levels)):
        level = levels[i]
        if want_affine and WAKE_AFFINE in level.flags and _spans(level.span, prev):
            return level, i
        if BALANCE_WAKE in level.flags:
            balance_at = i
    return None, balance_at


def _spans(span: tuple[int, ...], cpu: int) -> bool:
    """``cpu in span``, compared as machine integers in the compiled build (a tuple's ``in``
    compares through PyObject_RichCompare, at every wakeup)."""
    return any(member == cpu for member in span)  # mypyc makes this a loop, not a generator


def select_wake_cpu(eng: "Engine", task: Task, waker_cpu: int | None, sync: bool = False) -> int:
    """The CPU a waking task is queued on, following select_task_rq_fair() (3.3; 6.6 the same
    shape): the walk starts at the waking CPU (a timer's wakeup runs on the sleeper's CPU)."""
    prev = task.cpu if task.cpu is not None else 0
    if eng.policy.global_queue:
        return prev
    if task.affinity is not None and len(task.affinity) == 1:
        return next(iter(task.affinity))
    cpu = waker_cpu if waker_cpu is not None else prev
    want_affine = eng.wake_affine and _allowed(task, cpu)
    affine, index = _wake_levels(eng, cpu, prev, want_affine)
    if affine is not None:
        target = prev
        if cpu != prev and _wake_affine(eng, task, cpu, prev, sync, affine):
            target = cpu
            if eng.trace_file is not None:
                eng.trace(cpu, "wake-affine", f"{task.name} pulled from cpu{prev}")
    elif index >= 0:
        return _slow_path(eng, task, cpu, prev, index)
    elif eng.policy.idle_sibling_needs_affine:
        return prev  # 3.3: select_idle_sibling() runs only under an affine domain
    else:
        target = prev
    if eng.idle_sibling:
        if eng.idle_sibling_3x:
            target = _idle_sibling_3x(eng, task, target, prev, cpu)
        elif eng.cpus[target].curr is not None:
            target = _idle_sibling(eng, task, target, prev)
    return target if _allowed(task, target) else prev


def _idle_sibling_3x(eng: "Engine", task: Task, target: int, prev: int, waker: int) -> int:
    """3.3's select_idle_sibling() (stored 3.x text, find_string id 15376374630, the sd_llc
    walk without its vendor lines; id 35066303546 shows it as context): the target itself if
    it is the waking or the previous CPU and idle (idle_cpu(): nothing running or queued);
    else, from the highest domain sharing the target's cache (sd_llc) down, the first group of
    that level, in the circular order that starts at the target's own, whose CPUs are all
    idle gives its first allowed CPU; else the target."""
    if (target == waker or target == prev) and _available_idle(eng, target):  # noqa: SIM109
        return target
    levels: list[DomainLevel] = eng.cpus[target].domains
    llc = -1
    for i in range(len(levels)):
        if levels[i].name in CACHE_LEVELS:
            llc = i
    index = llc
    while index >= 0:
        for group in _groups(eng, target, index):
            if not _allowed_in(task, group):
                continue
            idle = True
            for c in group:
                if not _available_idle(eng, c):
                    idle = False
                    break
            if idle:
                for c in group:  # cpumask_first_and(sched_group_cpus(sg), tsk_cpus_allowed(p))
                    if _allowed(task, c):
                        return c
        index -= 1
    return target


def _idle_sibling(eng: "Engine", task: Task, target: int, prev: int) -> int:
    """select_idle_sibling(): an idle CPU sharing the target's cache, the previous CPU first."""
    cpus = eng.cpus
    span = cpus[target].llc_span
    prev_cpu = cpus[prev]
    if prev_cpu.curr is None and prev_cpu.rq.nr_running == 0 and prev in span:
        return prev
    for cid in span:
        cpu = cpus[cid]
        if cpu.curr is None and cpu.rq.nr_running == 0 and _allowed(task, cid):
            return cid
    return target


# ------------------------------------------------------------------------- SD_BALANCE_WAKE
# The slow path of select_task_rq_fair(), run when a level has SD_BALANCE_WAKE and no level
# chose wake-affine: from the highest such level of the waking CPU down, find the idlest group
# of the level, then its idlest CPU, and go on from that CPU's next lower level.  3.3 compares
# groups by weighted load (find_idlest_group(), wake_idx 0: the instantaneous load) and keeps
# the previous CPU when no group beats the waker's by half the imbalance margin; 6.6 (after
# v5.5's rework of find_idlest_group()) classifies groups by spare capacity first, prefers idle
# CPUs inside the group, and keeps the waker's CPU when its group is as good.
def _groups(eng: "Engine", cpu: int, index: int) -> list[tuple[int, ...]]:
    """The sched groups of ``cpu``'s level ``index`` (the spans of the level below) in the
    order the kernel walks them: sd->groups is ``cpu``'s own group and the list is circular in
    CPU order (build_sched_groups()), so the walk starts at the local group and wraps; the
    first of equally idle groups wins.  Made once per level (balance66.sched_groups()): the
    wakeup paths walk it at every wakeup.  Shared: callers read it only."""
    return balance66.sched_groups(eng, cpu, index)


def _allowed_in(task: Task, group: tuple[int, ...]) -> bool:
    return task.affinity is None or any(c in task.affinity for c in group)


def _slow_path(eng: "Engine", task: Task, cpu: int, prev: int, index: int) -> int:
    by_capacity = eng.policy.idlest_by_spare_capacity
    new_cpu = cpu if by_capacity else prev
    while index >= 0:
        level = eng.cpus[cpu].domains[index]
        if BALANCE_WAKE not in level.flags:
            index -= 1
            continue
        if by_capacity:
            group = _idlest_group_by_capacity(eng, task, cpu, index)
        else:
            group = _idlest_group_by_load(eng, task, cpu, index)
        if group is None:
            index -= 1
            continue
        found = (_idlest_cpu_by_capacity(eng, task, group, cpu) if by_capacity
                 else _idlest_cpu_by_load(eng, task, group, cpu))
        if found is None:
            index -= 1
            continue
        new_cpu = found
        if found == cpu:
            index -= 1
            continue
        # go on at the new CPU's levels below the one just balanced
        cpu, index = found, index - 1
    if eng.trace_file is not None and new_cpu != prev:
        eng.trace(new_cpu, "wake-balance", f"{task.name} from cpu{prev}")
    return new_cpu


def _load_by_cpu(eng: "Engine", group: tuple[int, ...]) -> list[int]:
    load_of = eng.policy.load_of
    return [load_of(eng.cpus[c].rq) for c in group]


def _idlest_group_by_load(eng: "Engine", task: Task, cpu: int, index: int):
    """3.3 find_idlest_group(): the group with the least load per CPU, if the waker's own
    group carries more than (100 + (imbalance_pct - 100) / 2) % of it."""
    level = eng.cpus[cpu].domains[index]
    this_load = min_load = -1.0
    idlest = None
    for group in _groups(eng, cpu, index):
        if not _allowed_in(task, group):
            continue
        avg = sum(_load_by_cpu(eng, group)) / len(group)
        if cpu in group:
            this_load = avg
        elif idlest is None or avg < min_load:
            idlest, min_load = group, avg
    pct = 100 + (level.imbalance_pct - 100) // 2
    if idlest is None or 100 * this_load < pct * min_load:
        return None
    return idlest


def _idlest_cpu_by_load(eng: "Engine", task: Task, group: tuple[int, ...], cpu: int):
    """3.3 find_idlest_cpu(): the least weighted load, the waking CPU winning ties."""
    best: int | None = None
    best_load = 0
    load_of = eng.policy.load_of
    for cid in group:
        if not _allowed(task, cid):
            continue
        load = load_of(eng.cpus[cid].rq)
        if best is None or load < best_load or (load == best_load and cid == cpu):
            best, best_load = cid, load
    return best


HAS_SPARE: Final = 0
FULLY_BUSY: Final = 1
OVERLOADED: Final = 2


def _group_stats(eng: "Engine", task: Task, group: tuple[int, ...], imbalance_pct: int
                 ) -> tuple[int, int, float]:
    """(group type, idle CPUs, load per CPU) as 6.6's update_sg_wakeup_stats() sees them; the
    load cpu_load_without() the wakee (policy.wake_load(): PELT with 6.6's group shares); the
    type group_classify() of cpu_util_without() and cpu_runnable_without() with 6.6's PELT
    signals (pelt.py), else of the runnable count against the CPUs alone."""
    cpus = eng.cpus
    nr = idle = 0
    load = 0
    util = runnable = 0
    wake_load = eng.policy.wake_load
    pelt = eng.pelt
    for c in group:
        nr += cpus[c].rq.nr_running
        if cpus[c].curr is None and cpus[c].rq.nr_running == 0:
            idle += 1
        load += wake_load(cpus[c].rq, eng.now, task)
        if pelt is not None:
            util += pelt.cpu_util_without(c, task.tid, eng.now)
            runnable += pelt.cpu_runnable_without(c, task.tid, eng.now)
    if pelt is not None:
        stats = balance66.GroupStats(group, False)
        stats.nr, stats.util, stats.runnable = nr, util, runnable
        kind = _WAKE_KIND[balance66.group_classify(imbalance_pct, stats, False)]
    else:
        kind = HAS_SPARE if nr < len(group) else FULLY_BUSY if nr == len(group) else OVERLOADED
    return kind, idle, load / len(group)


# balance66.group_classify()'s types as the wake path ranks them (no SMT balance there)
_WAKE_KIND: Final = {balance66.HAS_SPARE: HAS_SPARE, balance66.FULLY_BUSY: FULLY_BUSY,
                     balance66.OVERLOADED: OVERLOADED}


def _idlest_group_by_capacity(eng: "Engine", task: Task, cpu: int, index: int):
    """6.6 find_idlest_group(): the best group by type (spare capacity first), then by idle
    CPUs (spare) or load (busy); None when the waker's own group is as good."""
    level = eng.cpus[cpu].domains[index]
    local: tuple[int, int, float] | None = None
    best: tuple[int, int, float] | None = None
    idlest = None
    for group in _groups(eng, cpu, index):
        if not _allowed_in(task, group):
            continue
        stats = _group_stats(eng, task, group, level.imbalance_pct)
        if cpu in group:
            local = stats
        elif best is None or _better_group(stats, best):
            idlest, best = group, stats
    if idlest is None or best is None or local is None:
        return idlest if local is None else None
    if local[0] != best[0]:
        return idlest if local[0] > best[0] else None
    if local[0] == HAS_SPARE:
        return None if local[1] >= best[1] else idlest
    margin = 1024 * (level.imbalance_pct - 100) / 100
    if best[2] >= local[2] + margin or 100 * local[2] <= level.imbalance_pct * best[2]:
        return None
    return idlest


def _better_group(stats: tuple[int, int, float], best: tuple[int, int, float]) -> bool:
    """update_pick_idlest(): a lower type; then more idle CPUs (spare) or less load."""
    if stats[0] != best[0]:
        return stats[0] < best[0]
    if stats[0] == HAS_SPARE:
        return stats[1] > best[1] or (stats[1] == best[1] and stats[2] < best[2])
    return stats[2] < best[2]


def _idlest_cpu_by_capacity(eng: "Engine", task: Task, group: tuple[int, ...], cpu: int):
    """6.6 find_idlest_group_cpu(): a group of one CPU is that CPU; else the idle CPU that
    went idle last (no cpuidle states modelled: the latest rq->idle_stamp, "the most recently
    idled CPU might have a warmer cache"), else the least loaded, ``cpu`` when none is."""
    if len(group) == 1:
        return group[0]
    cpus = eng.cpus
    idle_best = -1
    idle_stamp = -1
    least = cpu
    least_load = -1
    for c in group:
        if not _allowed(task, c):
            continue
        other = cpus[c]
        if other.curr is None and other.rq.nr_running == 0:
            if other.idle_stamp > idle_stamp:
                idle_best, idle_stamp = c, other.idle_stamp
        elif idle_best < 0:
            load = eng.policy.wake_load(other.rq, eng.now, None)  # cpu_load(), not _without
            if least_load < 0 or load < least_load:
                least, least_load = c, load
    return idle_best if idle_best >= 0 else least


# ------------------------------------------------------------------------- periodic balancing
def _interval_ns(eng: "Engine", cpu: "Cpu", level: DomainLevel) -> int:
    if eng.tun.get("balance_66"):
        return balance66.interval_ns(eng, cpu, level)
    ms = level.balance_interval_ms
    if cpu.curr is not None:
        ms *= level.busy_factor
    return max(eng.tick_ns, eng.tick_after(int(ms * 1e6)))


def _schedule_balance(eng: "Engine", cpu: "Cpu", at: int | None = None, kick: bool = False):
    if kick:
        cpu.kicked = True
    if at is None:
        due = -1  # the earliest level due (times are >= 0)
        lv: DomainLevel
        for lv in cpu.domains:
            level_due: int = lv.last_balance_ns + _interval_ns(eng, cpu, lv)
            if due < 0 or level_due < due:
                due = level_due
        at = eng.cpu_tick_after(cpu, max(due, eng.now + 1))  # run from the CPU's own tick
        if cpu.bal_hold > at:  # rq->next_balance kept from busy times (idle_keeps_busy_...)
            at = eng.cpu_tick_after(cpu, cpu.bal_hold)
    if cpu.bal_at is not None and cpu.bal_at <= at:
        return
    cpu.bal_at = at
    eng.queue.schedule(cpu.bal_event, at)


def became_overloaded(eng: "Engine", busy_cpu: "Cpu"):
    """A runqueue got its second task: CPUs that could pull it need balance ticks again."""
    if eng.global_queue or not busy_cpu.domains:
        return
    kick = eng.idle_balance_kick
    cpus = eng.cpus
    for cid in busy_cpu.domains[-1].span:
        cpu = cpus[cid]
        if cpu is busy_cpu:
            continue
        if kick and cpu.curr is None and cpu.rq.nr_running == 0:
            _schedule_balance(eng, cpu, eng.now, kick=True)
            if eng.trace_file is not None:
                eng.trace(cid, "kick", f"idle cpu kicked: cpu{busy_cpu.id} has queued work")
        elif cpu.bal_at is None:
            _schedule_balance(eng, cpu)


def went_idle(eng: "Engine", cpu: "Cpu"):
    cpu.idle_stamp = eng.now
    if eng.keep_busy_balance and cpu.domains:
        _keep_busy_next_balance(eng, cpu)
    if eng.overloaded > 0 and cpu.domains:
        cpu.bal_at = None
        _schedule_balance(eng, cpu)


def _keep_busy_next_balance(eng: "Engine", cpu: "Cpu"):
    """idle_balance() that pulled nothing resets rq->next_balance only when it has passed
    ("sched: fix next_balance logic in rebalance_domains() and idle_balance()"; 2.6.22 reset
    it whenever it pulled nothing).  rebalance_domains() at the first tick the CPU took busy
    set it to a level's last balance plus its busy interval (balance_interval x busy_factor),
    and again at each tick it came due, so the CPU going idle keeps that deadline: its idle
    balancing waits for it.  (While no runqueue has a second task this model runs no balance
    pass, so a busy CPU's passes are counted one per busy interval.)"""
    since = cpu.busy_since
    cpu.busy_since = -1
    if since < 0:  # it was idle already: the deadline it keeps is unchanged
        return
    tick = eng.tick_ns
    last_tick = eng.now - 1 - (eng.now - 1 - cpu.tick_phase) % tick  # last tick before now
    if last_tick <= since:  # no tick while busy: rq->next_balance is still the idle one
        cpu.bal_hold = 0
        return
    hold = -1
    level: DomainLevel
    for level in cpu.domains:
        busy_interval = max(tick, eng.tick_after(int(level.balance_interval_ms
                                                     * level.busy_factor * 1e6)))
        due = level.last_balance_ns + busy_interval
        if due <= last_tick:  # came due while busy: a pass then set the next deadline
            due += ((last_tick - due) // busy_interval + 1) * busy_interval
        if hold < 0 or due < hold:
            hold = due
    cpu.bal_hold = hold if hold > eng.now else 0


def periodic(eng: "Engine", cpu: "Cpu"):
    cpu.bal_at = None
    kicked, cpu.kicked = cpu.kicked, False
    if eng.policy.rebalance_tick(cpu.rq, eng.now):
        _weights_changed(eng, cpu)
    if eng.overloaded == 0 or not cpu.domains:
        return
    if eng.tun.get("balance_66"):
        balance66.rebalance_domains(eng, cpu, kicked)
        if eng.overloaded > 0:
            _schedule_balance(eng, cpu)
        return
    idle = cpu.curr is None and cpu.rq.nr_running == 0
    level: DomainLevel
    for level in cpu.domains:
        if (kicked and idle) or eng.now >= level.last_balance_ns + _interval_ns(eng, cpu, level):
            # sd->last_balance is in jiffies: a pass run between ticks (a kick, or a CPU whose
            # tick is skewed) counts from the jiffy it fell in, so the next pass is due at this
            # CPU's first tick an interval after that jiffy
            level.last_balance_ns = eng.now - eng.now % eng.tick_ns
            if load_balance(eng, cpu, level, "idle" if idle else "busy"):
                idle = False
    if eng.overloaded > 0:
        _schedule_balance(eng, cpu)


def _weights_changed(eng: "Engine", cpu: "Cpu"):
    """Reweighted tasks on ``cpu``: its load, and the running task's slice, are new."""
    load_changed(eng, cpu)
    cpu.preempt_valid = False
    curr = cpu.curr
    if curr is not None and curr.state == RUNNING:
        eng.plan(cpu)


# 2.6.33's rate limit of the newly idle balance (3.3's idle_balance() and ttwu_do_wakeup(),
# stored 3.x core.c/fair.c text): idle_balance() stamps rq->idle_stamp and returns at once
# while rq->avg_idle < sysctl_sched_migration_cost; a wakeup queued on a CPU with the stamp
# set takes the span since it (over 2 x the cost: avg_idle = 2 x the cost; else update_avg(),
# avg += (span - avg) / 8) and clears it, as does a pull; sched_init() starts avg_idle at
# 2 x the cost.  Tunable newidle_avg_idle (3.3).
def end_idle_span(eng: "Engine", cpu: "Cpu"):
    """ttwu_do_wakeup()'s avg_idle update for a wakeup queued on ``cpu``."""
    delta = eng.now - cpu.newidle_stamp
    limit = 2 * eng.migration_cost_ns
    if delta > limit:
        cpu.avg_idle = limit
    else:
        cpu.avg_idle += (delta - cpu.avg_idle) >> 3
    cpu.newidle_stamp = -1


def newidle(eng: "Engine", cpu: "Cpu"):
    if eng.newidle_gate:
        cpu.newidle_stamp = eng.now
        if cpu.avg_idle < eng.migration_cost_ns:
            if eng.trace_file is not None:
                eng.trace(cpu.id, "newidle-skip", f"avg_idle {cpu.avg_idle} ns < "
                          f"sched_migration_cost {eng.migration_cost_ns} ns")
            return False
    if eng.policy.rebalance_tick(cpu.rq, eng.now):  # 3.x's idle_balance() updates shares too
        load_changed(eng, cpu)
    if eng.tun.get("balance_66"):
        return balance66.newidle_balance(eng, cpu)
    level: DomainLevel
    for level in cpu.domains:
        if NEWIDLE in level.flags and load_balance(eng, cpu, level, "newidle"):
            cpu.newidle_stamp = -1
            return True
    return False


# ------------------------------------------------------------------------- cpu_load history
# The balancer does not look at instantaneous loads: each CPU keeps cpu_load[0..4], updated every
# tick as cpu_load[i] = (cpu_load[i] * (2^i - 1) + load) / 2^i (update_cpu_load(); cpu_load[0] is
# the load at the last tick).  A busy CPU's load is underestimated (source_load = min(history,
# now)) and an idle CPU's overestimated (target_load = max(history, now)) for a few ticks after a
# change, which is why a fresh imbalance is not fixed at the very next tick.  Load index ``type``
# (sd->busy_idx, idle_idx, newidle_idx) reads cpu_load[type - 1], 0 the instantaneous load: so
# busy_idx 2 is the half-life-one-tick average, not the 3/4 one.  The history is brought up to
# date analytically when the load changes.
LOAD_IDX_TUNABLE: Final = {"busy": "busy_idx", "idle": "idle_idx", "newidle": "newidle_idx"}


def load_changed(eng: "Engine", cpu: "Cpu"):
    """Call after the runqueue load of ``cpu`` changed (the old load held until now)."""
    if (eng.now - cpu.tick_phase) // eng.tick_ns > cpu.load_tick:  # else up to date already
        _sync_history(eng, cpu)
    cpu.load_now = eng.policy.load_of(cpu.rq)


def _sync_history(eng: "Engine", cpu: "Cpu"):
    tick = (eng.now - cpu.tick_phase) // eng.tick_ns  # update_cpu_load() runs at its own tick
    ticks = tick - cpu.load_tick
    if ticks <= 0:
        return
    cpu.load_tick = tick
    cur: Any = cpu.load_now  # an object, as it was: stored into the float history as it is
    hist = cpu.load_hist
    hist[0] = cur
    for i in range(1, len(hist)):
        keep = ((1 << i) - 1) / (1 << i)
        hist[i] = cur + (hist[i] - cur) * keep ** min(ticks, 10_000)


# find_busiest_group() as the stored sources have it, in three forms (`busiest_group_form`):
# "2.6.22" (2.6.22.19's kernel/sched.c, smpnice), "2.6.23" (2.6.23.17's and 2.6.24's sched.c:
# SCHED_LOAD_SCALE_FUZZ, and a small imbalance that moving one task would not improve is
# returned as a failed balance, not a balanced domain) and "3.0" (3.0's kernel/sched_fair.c:
# calculate_imbalance() / fix_small_imbalance(), the CPU_IDLE test and newidle's force_balance).
# Every group here is one CPU (the model balances CPU by CPU at every level).
SCHED_LOAD_SCALE_FUZZ: Final = 1024  # 2.6.23 / 2.6.24 include/linux/sched.h: SCHED_LOAD_SCALE


def _find_imbalance(eng: "Engine", cpu: "Cpu", level: DomainLevel, kind: str):
    """find_busiest_group(): (busiest cpu, load to move) or (None, 0) when balanced.  A busiest
    CPU with a load to move of 0 is a failed balance (nothing can move)."""
    idx: int = 0 if level.name == "SMT" else eng.tun[LOAD_IDX_TUNABLE[kind]]
    cpus = eng.cpus
    for cid in level.span:  # every load history up to date before any is read
        _sync_history(eng, cpus[cid])
    load_now: Any = cpu.load_now  # an object: max() keeps the int or the float it was given
    this_load: Any = max(cpu.load_hist[idx - 1] if idx else load_now, load_now)  # target
    total: Any = this_load
    busiest: Any = None
    max_load: Any = -1.0
    for cid in level.span:
        if cid == cpu.id:
            continue
        other = cpus[cid]
        now: Any = other.load_now
        source: Any = min(other.load_hist[idx - 1] if idx else now, now)  # source_load
        total += source
        if other.rq.nr_running >= 2 and source > max_load:  # sum_nr_running > group_capacity
            busiest, max_load = other, source
    if busiest is None:
        return None, 0
    avg = total / len(level.span)
    form: str = eng.tun["busiest_group_form"]
    if eng.trace_file is not None:
        eng.trace(cpu.id, "loads", f"{level.name} {kind} this {this_load:.0f} busiest "
                  f"cpu{busiest.id} {max_load:.0f} avg {avg:.0f}")
    if _looks_balanced(form, kind, level, this_load, max_load, avg):
        return None, 0
    # busiest_load_per_task: the busiest group's instantaneous weighted load per task
    per_task: Any = busiest.load_now / max(1, busiest.rq.nr_running)
    if max_load <= per_task and eng.tun["busiest_per_task_check"]:
        # 2.6.x: "if (max_load <= busiest_load_per_task) goto out_balanced;" -- while the
        # busiest CPU's load history still shows one task's load or less, nothing is pulled
        return None, 0
    imbalance: Any = 0.0  # "if (max_load < avg_load) { *imbalance = 0; goto small_imbalance; }"
    if max_load >= avg:
        if form == "3.0":  # load_above_capacity: the tasks beyond the group's capacity of one
            max_pull: Any = min(max_load - avg, (busiest.rq.nr_running - 1) * 1024.0)
        else:  # "Don't want to pull so many tasks that a group would go idle"
            max_pull = min(max_load - avg, max_load - per_task)
        imbalance = min(max_pull, avg - this_load)
        if imbalance >= per_task:
            return busiest, imbalance
    return _fix_small_imbalance(cpu, form, busiest, max_load, this_load, per_task, imbalance)


def _looks_balanced(form: str, kind: str, level: DomainLevel, this_load, max_load, avg) -> bool:
    """find_busiest_group()'s out_balanced tests before the imbalance is computed."""
    if form == "3.0" and kind == "newidle":
        # "SD_BALANCE_NEWIDLE trumps SMP nice when underutilized": the CPU going idle has spare
        # capacity and the busiest (>= 2 tasks on one CPU) none, so force_balance
        return False
    if this_load >= max_load or this_load >= avg:
        return True
    if form == "3.0" and kind == "idle":
        # CPU_IDLE compares idle CPUs instead: balanced only if this group has at most one idle
        # CPU more than the busiest and the busiest runs no more tasks than it has CPUs, never
        # so for a one-CPU busiest group with >= 2 tasks; no imbalance_pct test
        return False
    return 100 * max_load <= level.imbalance_pct * this_load


def _fix_small_imbalance(cpu: "Cpu", form: str, busiest: "Cpu", max_load, this_load, per_task,
                         imbalance):
    """The small_imbalance path (fix_small_imbalance() in 3.0): move one task if the loads
    differ by enough, or if that raises the summed throughput estimate; else 2.6.22 finds the
    domain balanced while 2.6.23 / 2.6.24 / 3.0 return the busiest CPU with the small (or
    zero) imbalance, which moves what fits in it or fails."""
    nr_here = cpu.rq.nr_running
    # this_load_per_task: the local group's instantaneous weighted load per task; with no task
    # SCHED_LOAD_SCALE in 2.6.x, and 3.0's cpu_avg_load_per_task() of an empty runqueue, 0
    empty = 0.0 if form == "3.0" else 1024.0
    this_per_task: Any = cpu.load_now / nr_here if nr_here else empty
    imbn = 1 if nr_here and per_task > this_per_task else 2
    slack: Any = 0  # an object: the loads may be ints or floats (mypyc types locals)
    if form == "2.6.23":
        slack = SCHED_LOAD_SCALE_FUZZ
    elif form == "3.0":  # scaled_busy_load_per_task (cpu_power 1024)
        slack = per_task
    if max_load - this_load + slack >= per_task * imbn:
        return busiest, per_task
    pwr_now: Any = min(per_task, max_load) + min(this_per_task, this_load)
    pwr_move: Any = min(per_task, max_load - per_task) if max_load > per_task else 0.0
    pwr_move += min(this_per_task, this_load + min(max_load, per_task))
    if pwr_move > pwr_now:  # "Move if we gain throughput"
        return busiest, per_task
    if form == "2.6.22":
        return None, 0
    return busiest, imbalance


def _skip_for_load(form: str, weight, remaining) -> bool:
    """move_tasks()' skip_for_load: 2.6.22 skips a task heavier than the load left to move;
    2.6.23 / 2.6.24 one whose half weight exceeds it + SCHED_LOAD_SCALE_FUZZ (so a nice-0 task
    moves for any imbalance above 0); 3.0 one whose half weight exceeds it.  (The exception
    for a task that would be the highest-priority one on its new CPU is not modelled.)"""
    if form == "2.6.22":
        return weight > remaining
    if form == "2.6.23":
        return weight / 2 > remaining + SCHED_LOAD_SCALE_FUZZ
    return weight / 2 > remaining


def load_balance(eng: "Engine", cpu: "Cpu", level: DomainLevel, kind: str):
    """Pull queued tasks from the busiest CPU of ``level`` to ``cpu``; True if something moved."""
    eng._counters["balance_attempts"] += 1
    busiest, imbalance = _find_imbalance(eng, cpu, level, kind)
    if busiest is None:
        level.nr_balance_failed = 0
        if kind != "newidle":
            level.balance_interval_ms = min(level.max_interval_ms, level.balance_interval_ms * 2)
        if eng.trace_file is not None:
            eng.trace(cpu.id, "balance", f"{level.name} {kind}: balanced")
        return False
    moved = _move_tasks(eng, busiest, cpu, level, imbalance)
    if moved:
        level.nr_balance_failed = 0
        level.balance_interval_ms = level.min_interval_ms
        eng._counters["balance_moved"] += moved
        eng.check_preempt_after_pull(cpu)
        return True
    eng._counters["balance_failed"] += 1
    if kind != "newidle":
        level.nr_balance_failed += 1
        if eng.tun.get("active_balance") and level.nr_balance_failed > level.cache_nice_tries + 2:
            _active_balance(eng, cpu, busiest, level)
            return False
    level.balance_interval_ms = level.min_interval_ms
    return False


def _active_balance(eng: "Engine", cpu: "Cpu", busiest: "Cpu", level: DomainLevel):
    """load_balance()'s kick, 2.6.20 - 3.x: only a periodic pass (2.6's
    load_balance_newidle() has none; 3.x's need_active_balance() refuses CPU_NEWLY_IDLE without
    sched_mc_power_savings).  A busiest CPU whose running task may not run here is
    out_one_pinned (all_pinned: back off up to MAX_PINNED_INTERVAL); else the migration thread
    is woken (unless a push is pending there), nr_balance_failed is set to cache_nice_tries + 1
    (so that its push, and the next passes, ignore cache-hotness) and the interval backs off
    ("If we've begun active balancing, start to back off"); with a push already pending the
    interval is reset as for any failed balance."""
    if not balance66.request_active_push(eng, cpu, busiest):
        if (level.balance_interval_ms < balance66.MAX_PINNED_INTERVAL_MS
                or level.balance_interval_ms < level.max_interval_ms):
            level.balance_interval_ms *= 2
        return
    kicked = busiest.push_cpu == cpu.id
    level.nr_balance_failed = level.cache_nice_tries + 1
    if kicked and level.balance_interval_ms < level.max_interval_ms:
        level.balance_interval_ms *= 2
    elif not kicked:
        level.balance_interval_ms = level.min_interval_ms


def active_push(eng: "Engine", src: "Cpu"):
    """The busiest CPU's migration thread (2.6.x active_load_balance(), 3.x / 6.6
    active_load_balance_cpu_stop()), run by engine.schedule() after the running task was put
    back: nothing if no task but the thread itself is left; else at the puller's lowest level
    spanning this CPU, one task moves -- 2.6.x / 3.x: the first move_tasks() / move_one_task()
    would take with no load limit (can_migrate_task() with that level's nr_balance_failed),
    6.6: detach_one_task() (and a push resets nr_balance_failed).  The moved task pays the
    migrate path's refill when it runs."""
    dst = eng.cpus[src.push_cpu]
    src.push_cpu = -1
    level = next((lvl for lvl in dst.domains if _spans(lvl.span, src.id)), None)
    if src.rq.nr_running == 0 or level is None:
        return
    on_66 = balance66.enabled(eng)
    task: Task | None = None
    if on_66:
        task = balance66.detach_one_task(eng, src, dst)
    else:
        for queued in eng.policy.queued_tasks(src.rq):
            if _can_migrate(eng, queued, src, dst, level, eng.now):
                task = queued
                break
    if task is None:
        return
    eng.dequeue(src, task)
    eng.enqueue(dst, task, "migrate")
    balance66._count(eng, "active_balance_pushed")
    if eng.trace_file is not None:
        eng.trace(dst.id, "pull", f"{task.name} pushed from cpu{src.id} by its migration "
                  f"thread ({level.name})")
    if on_66:
        level.nr_balance_failed = 0
        eng.check_preempt(dst, task)  # attach_one_task(): check_preempt_curr()
    else:
        eng.check_preempt_after_pull(dst)


MAX_PRIO: Final = 140


def _move_tasks(eng: "Engine", src: "Cpu", dst: "Cpu", level: DomainLevel, imbalance):
    """move_tasks(): pull queued tasks until ``imbalance`` load has moved; 2.6.22 and 2.6.23 /
    2.6.24 do not skip for load a task that would be the highest-priority one on ``dst``
    (this_best_prio: this runqueue's current task -- the one going to sleep, in a newidle pass
    -- and, in 2.6.22, its best expired prio; MAX_PRIO when idle)."""
    if imbalance <= 0:  # "if (max_load_move == 0) goto out;"
        return 0
    policy = eng.policy
    now = eng.now
    form: str = eng.tun["busiest_group_form"]
    this_best = dst.curr.prio if dst.curr is not None else MAX_PRIO
    best = best_seen = 0
    if form == "2.6.22":  # rq_best_prio() = min(curr->prio, best_expired_prio)
        this_best = min(this_best, policy.best_expired_prio(dst.rq))
        src_curr = src.curr.prio if src.curr is not None else MAX_PRIO
        best = min(src_curr, policy.best_expired_prio(src.rq))
        best_seen = best == src_curr  # that prio's task runs on src and will not move
    moved = moved_load = 0
    for task in policy.queued_tasks(src.rq):
        skip = _skip_for_load(form, task.weight, imbalance - moved_load)
        if skip and form != "3.0" and task.prio < this_best:
            skip = form == "2.6.22" and not best_seen and task.prio == best
        if skip or not _can_migrate(eng, task, src, dst, level, now):
            best_seen = best_seen or task.prio == best
            continue
        eng.dequeue(src, task)
        eng.enqueue(dst, task, "migrate")
        if eng.trace_file is not None:
            eng.trace(dst.id, "pull", f"{task.name} from cpu{src.id} ({level.name})")
        moved += 1
        moved_load += task.weight
        if moved_load >= imbalance:
            break
        this_best = min(this_best, task.prio)
    return moved


def _can_migrate(eng: "Engine", task: Task, src: "Cpu", dst: "Cpu", level: DomainLevel,
                 now: int) -> bool:
    """can_migrate_task(): affinity, then cache-hotness unless balancing failed too often."""
    if not _allowed(task, dst.id):
        return False
    policy = eng.policy
    if policy.hot(task, now, level) and level.nr_balance_failed <= level.cache_nice_tries:
        eng._counters["cache_hot_refusals"] += 1
        if eng.trace_file is not None:
            ago = (now - task.last_ran) / 1e6
            limit = policy.hot_cost() / 1e6
            eng.trace(dst.id, "refuse", f"migration of {task.name} from cpu{src.id} refused: "
                      f"cache-hot {ago:.3f} ms < {limit:.3f} ms (level {level.name}, "
                      f"failed balances {level.nr_balance_failed} <= cache_nice_tries "
                      f"{level.cache_nice_tries})")
        return False
    return True
