"""6.6's periodic and newidle load balancing: load_balance() as v5.5 reworked it, for 6.6-eevdf.

The shared balancer (balance.py) is 2.6/3.x find_busiest_group() / move_tasks() on cpu_load[]
histories, CPU against CPU.  6.6 (kernel/sched/fair.c, read in a stored android15-6.6 tree:
whitewhale0612/android_kernel_common_oneplus_sm8750) balances sched groups, the spans of the
level below (single CPUs at the lowest level):

* update_sd_lb_stats() / update_sg_lb_stats(): per group the summed cpu_load(), utilisation,
  runnable sum, running tasks and idle CPUs; group_classify() gives group_overloaded (more
  tasks than CPUs and utilisation or runnable above capacity by imbalance_pct), group_smt_balance
  (an idle or newly idle puller and an SMT core running two tasks or more), group_fully_busy
  (no capacity left) or group_has_spare; update_sd_pick_busiest() keeps the worst type, then by
  avg_load (overloaded), idle CPUs and running tasks (spare), or the later group (fully busy).
* find_busiest_group()'s decision matrix and calculate_imbalance()'s migration types:
  migrate_load (both groups overloaded, the load that brings them to the domain average),
  migrate_util (spare capacity above the LLC), migrate_task (running tasks evened out between
  groups, sibling_imbalance() when the groups prefer siblings, or SMT balance).
* find_busiest_queue(), detach_tasks() (oldest task first, loop_max = min(32, nr_running), a
  newly idle pull stops after one task under CONFIG_PREEMPTION, the load limit relaxed by
  nr_balance_failed), attach_task()'s wakeup-preemption check of each pulled task (the shared
  balancer only wakes an idle puller), can_migrate_task() (affinity, task_hot() with
  sched_migration_cost, none at SMT level, forced after more than cache_nice_tries failed
  balances).
* should_we_balance() (one CPU per group balances a level: the first idle one, an idle core
  first; else the group's first CPU; a CPU that is not it stops climbing), the outcome's
  nr_balance_failed and balance_interval, get_sd_balance_interval() (x busy_factor and one
  jiffy less while busy, at most HZ x CPUs / 10 jiffies).

Simplified (docs/simulator.md, issue 24): cpu_load() is the policy's wake_load() (PELT averages
for tasks of groups with shares, the weight for the others); the utilisation and runnable
averages are pelt.py's PELT signals (pelt_signals; 0: their steady states, 1024 a busy CPU and
1024 per runnable task); every CPU's capacity is 1024.  Not modelled: misfit and asym packing
(no asymmetric CPUs), group_imbalanced and the LBF_*_PINNED retries (affinity only refuses a task),
newidle_balance()'s avg_idle / max_newidle_lb_cost gate (no avg_idle in the model), NUMA.

Active balancing (need_active_balance(), active_load_balance_cpu_stop()): a failed
migrate_task balance past cache_nice_tries + 2 failures wakes the busiest CPU's stopper, which
preempts its running task and pushes the oldest task that may run on the puller (cache-hot or
not); a push resets nr_balance_failed, and the interval returns to min_interval.
"""

from typing import TYPE_CHECKING, Final

from .domains import DomainLevel
from .program import Task

if TYPE_CHECKING:  # annotations only (the engine imports balance.py, which imports this)
    from .engine import Cpu, Engine

# Final: the compiled build folds the constants in (a plain module global is a dict lookup)
SCHED_CAPACITY_SCALE: Final = 1024
SCHED_NR_MIGRATE: Final = 32  # sysctl_sched_nr_migrate = SCHED_NR_MIGRATE_BREAK (32 without RT)
NEWIDLE_FLAG: Final = "NEWIDLE"  # balance.NEWIDLE (this module does not import balance.py)
# enum group_type's values, in pulling priority (misfit 2, asym_packing 4, imbalanced 5 are
# not modelled)
HAS_SPARE: Final = 0
FULLY_BUSY: Final = 1
SMT_BALANCE: Final = 3
OVERLOADED: Final = 6
MIGRATE_LOAD: Final = "migrate_load"
MIGRATE_UTIL: Final = "migrate_util"
MIGRATE_TASK: Final = "migrate_task"
BUSY: Final = "busy"  # CPU_NOT_IDLE
IDLE: Final = "idle"  # CPU_IDLE
NEWLY_IDLE: Final = "newidle"  # CPU_NEWLY_IDLE


def enabled(eng: "Engine") -> bool:
    return bool(eng.tun.get("balance_66"))


class GroupStats:
    """sg_lb_stats of one sched group."""

    __slots__ = ("cpus", "load", "util", "runnable", "nr", "idle", "capacity", "cores", "smt",
                 "kind", "avg_load")

    def __init__(self, cpus: tuple[int, ...], smt: bool) -> None:
        self.cpus = cpus
        self.load = self.util = self.runnable = self.nr = self.idle = self.avg_load = 0
        self.capacity = SCHED_CAPACITY_SCALE * len(cpus)
        self.cores = 1
        self.smt = smt  # the group is an SMT core (its flags carry SD_SHARE_CPUCAPACITY)
        self.kind = HAS_SPARE


class Env:
    """lb_env: one load_balance() call."""

    __slots__ = ("cpu", "level", "index", "idle", "migration", "imbalance")

    def __init__(self, cpu: "Cpu", level: DomainLevel, index: int, idle: str) -> None:
        self.cpu = cpu
        self.level = level
        self.index = index
        self.idle = idle
        self.migration = MIGRATE_LOAD
        self.imbalance = 0


def _idle_cpu(cpu: "Cpu") -> bool:
    return cpu.curr is None and cpu.rq.nr_running == 0


def sched_groups(eng: "Engine", cpu: int, index: int) -> list[tuple[int, ...]]:
    """The groups of ``cpu``'s level ``index``: the spans of the level below, the local group
    first and then round the circular list in CPU order (build_sched_groups()).  Made once
    per level (DomainLevel.groups): the domain spans are fixed once balance.setup() built
    them.  The list is shared: callers read it only."""
    level = eng.cpus[cpu].domains[index]
    made = level.groups
    if made is not None:
        return made
    groups: list[tuple[int, ...]] = []
    for c in level.span:
        child = (c,) if index == 0 else eng.cpus[c].domains[index - 1].span
        if child not in groups:
            groups.append(child)
    at = next(i for i, g in enumerate(groups) if cpu in g)
    made = level.groups = groups[at:] + groups[:at]
    return made


# ------------------------------------------------------------------------ group statistics
def group_classify(imbalance_pct: int, s: GroupStats, smt_balance: bool) -> int:
    """group_classify(): group_is_overloaded(), the SMT case, then group_has_capacity()."""
    cap = s.capacity
    if s.nr > len(s.cpus) and (cap * 100 < s.util * imbalance_pct
                               or cap * imbalance_pct < s.runnable * 100):
        return OVERLOADED
    if smt_balance:
        return SMT_BALANCE
    if s.nr < len(s.cpus):
        return HAS_SPARE
    if cap * imbalance_pct < s.runnable * 100:
        return FULLY_BUSY
    return HAS_SPARE if cap * 100 > s.util * imbalance_pct else FULLY_BUSY


def update_sg_lb_stats(eng: "Engine", env: Env, group: tuple[int, ...], local: bool
                       ) -> GroupStats:
    """update_sg_lb_stats(): cpu_load(), cpu_util_cfs() and cpu_runnable() summed (PELT
    averages with pelt_signals; else utilisation and runnable at steady state)."""
    smt = env.index > 0 and eng.cpus[group[0]].domains[env.index - 1].name == "SMT"
    s = GroupStats(group, smt)
    policy = eng.policy  # a method call on the typed policy: native (a bound method is not)
    pelt = eng.pelt
    for c in group:
        cpu = eng.cpus[c]
        s.load += policy.wake_load(cpu.rq, eng.now, None)
        s.nr += cpu.rq.nr_running
        if pelt is not None:
            s.util += pelt.cpu_util(c, eng.now)
            s.runnable += pelt.cpu_runnable(c, eng.now)
        else:
            s.runnable += SCHED_CAPACITY_SCALE * cpu.rq.nr_running
            if not _idle_cpu(cpu):
                s.util += SCHED_CAPACITY_SCALE
        if _idle_cpu(cpu):
            s.idle += 1
    s.cores = _distinct_cores(group, eng.threads)
    smt_balance = not local and env.idle != BUSY and smt and s.nr > 1  # smt_balance()
    s.kind = group_classify(env.level.imbalance_pct, s, smt_balance)
    if s.kind == OVERLOADED:
        s.avg_load = s.load * SCHED_CAPACITY_SCALE // s.capacity
    return s


def _distinct_cores(group: tuple[int, ...], threads: int) -> int:
    """How many cores the group's CPUs are on (len({c // threads for c in group}), counted
    without building a set: groups have at most a socket's CPUs)."""
    cores = 0
    for i in range(len(group)):
        core = group[i] // threads
        j = 0
        while j < i and group[j] // threads != core:
            j += 1
        if j == i:
            cores += 1
    return cores


def update_sd_pick_busiest(s: GroupStats, busiest: GroupStats | None) -> bool:
    """update_sd_pick_busiest(): is ``s`` busier than the busiest group so far?"""
    if s.nr == 0:
        return False
    if busiest is None:
        return True  # init_sd_lb_stats(): the first candidate beats "spare, idle_cpus max"
    if s.kind != busiest.kind:
        return s.kind > busiest.kind
    if s.kind == OVERLOADED:
        return s.avg_load > busiest.avg_load
    if s.kind == FULLY_BUSY or (s.kind == SMT_BALANCE and s.idle == 0 and busiest.idle == 0):
        if s.avg_load != busiest.avg_load:  # avg_load is 0 unless overloaded: the later wins
            return s.avg_load > busiest.avg_load
        return not busiest.smt
    if s.idle != busiest.idle:  # has_spare: fewest idle CPUs, then most running tasks
        return s.idle < busiest.idle
    return s.nr > busiest.nr


class SdStats:
    """sd_lb_stats: the local group, the busiest, and the domain's totals."""

    __slots__ = ("local", "busiest", "total_load", "total_capacity", "avg_load")

    def __init__(self, local: GroupStats) -> None:
        self.local = local
        self.busiest: GroupStats | None = None
        self.total_load = self.total_capacity = self.avg_load = 0


def update_sd_lb_stats(eng: "Engine", env: Env) -> SdStats:
    groups = sched_groups(eng, env.cpu.id, env.index)
    sds = SdStats(update_sg_lb_stats(eng, env, groups[0], True))
    for i, group in enumerate(groups):
        s = sds.local if i == 0 else update_sg_lb_stats(eng, env, group, False)
        if i and update_sd_pick_busiest(s, sds.busiest):
            sds.busiest = s
        sds.total_load += s.load
        sds.total_capacity += s.capacity
    return sds


# ------------------------------------------------------------------------ the imbalance
def sibling_imbalance(env: Env, busiest: GroupStats, local: GroupStats) -> int:
    """sibling_imbalance(): the running tasks to even out, by cores when the groups differ."""
    if env.idle == BUSY or busiest.nr == 0:
        return 0
    nb, nl = busiest.cores, local.cores
    if nb == nl:
        return max(0, busiest.nr - local.nr)
    imbalance = max(0, nl * busiest.nr - nb * local.nr)
    imbalance = (2 * imbalance + nl + nb) // (nl + nb)
    if imbalance <= 1 and local.nr == 0 and busiest.nr > 1:
        imbalance = 2  # take advantage of an empty group
    return imbalance


def calculate_imbalance(env: Env, sds: SdStats, busiest: GroupStats) -> None:
    """calculate_imbalance(): the migration type and the amount, into ``env``."""
    local = sds.local
    if busiest.kind == SMT_BALANCE:
        env.migration, env.imbalance = MIGRATE_TASK, 1
        return
    if local.kind == HAS_SPARE:
        if busiest.kind > FULLY_BUSY and env.level.name not in ("SMT", "MC"):
            # above the LLC: fill the local group's spare capacity
            env.migration = MIGRATE_UTIL
            env.imbalance = max(local.capacity, local.util) - local.util
            if env.idle != BUSY and env.imbalance == 0:
                env.migration, env.imbalance = MIGRATE_TASK, 1
            return
        env.migration = MIGRATE_TASK
        if len(busiest.cpus) == 1 or env.index > 0:  # or sds->prefer_sibling
            env.imbalance = sibling_imbalance(env, busiest, local) >> 1
        else:
            env.imbalance = max(0, local.idle - busiest.idle) >> 1
        return
    if local.kind < OVERLOADED:  # local will become overloaded: avg_load is needed now
        local.avg_load = local.load * SCHED_CAPACITY_SCALE // local.capacity
        sds.avg_load = sds.total_load * SCHED_CAPACITY_SCALE // sds.total_capacity
        if local.avg_load >= busiest.avg_load or local.avg_load >= sds.avg_load:
            env.imbalance = 0
            return
    env.migration = MIGRATE_LOAD
    # unsigned in the kernel: a negative term wraps to a huge one and min() takes the other
    terms = [t for t in ((busiest.avg_load - sds.avg_load) * busiest.capacity,
                         (sds.avg_load - local.avg_load) * local.capacity) if t >= 0]
    env.imbalance = min(terms) // SCHED_CAPACITY_SCALE if terms else 0


def find_busiest_group(eng: "Engine", env: Env) -> GroupStats | None:
    """find_busiest_group(): its decision matrix, then calculate_imbalance()."""
    sds = update_sd_lb_stats(eng, env)
    busiest, local = sds.busiest, sds.local
    if busiest is None or local.kind > busiest.kind:
        return None
    if local.kind == OVERLOADED:
        sds.avg_load = sds.total_load * SCHED_CAPACITY_SCALE // sds.total_capacity
        if (local.avg_load >= busiest.avg_load or local.avg_load >= sds.avg_load
                or 100 * busiest.avg_load <= env.level.imbalance_pct * local.avg_load):
            return None
    force = (env.index > 0 and local.kind == HAS_SPARE  # sds.prefer_sibling
             and sibling_imbalance(env, busiest, local) > 1)
    if not force and busiest.kind != OVERLOADED:
        if env.idle == BUSY:
            return None  # let an idle CPU pull
        if busiest.kind != SMT_BALANCE or local.smt == busiest.smt:
            if len(busiest.cpus) > 1 and local.idle <= busiest.idle + 1:
                return None
            if busiest.nr == 1:
                return None
    calculate_imbalance(env, sds, busiest)
    return busiest if env.imbalance else None


def find_busiest_queue(eng: "Engine", env: Env, group: GroupStats) -> "Cpu | None":
    """find_busiest_queue(): by load (all capacities equal), utilisation or running tasks."""
    best: Cpu | None = None
    best_value = 0
    for c in group.cpus:
        cpu = eng.cpus[c]
        nr = cpu.rq.nr_running
        if nr == 0:
            continue
        if env.migration == MIGRATE_LOAD:
            value = eng.policy.wake_load(cpu.rq, eng.now, None)
            if nr == 1 and value > env.imbalance:
                continue  # its one task would overshoot (no reduced capacity modelled)
        elif env.migration == MIGRATE_UTIL:
            if nr <= 1:
                continue
            value = (SCHED_CAPACITY_SCALE if eng.pelt is None  # a busy CPU's steady state
                     else cpu_util_boost(eng, c))
        else:
            value = nr
        if value > best_value:
            best, best_value = cpu, value
    return best


# ------------------------------------------------------------------------ moving tasks
def can_migrate_task(eng: "Engine", env: Env, task: Task, src: "Cpu") -> bool:
    """can_migrate_task(): affinity, then task_hot() unless balancing failed often enough."""
    if task.affinity is not None and env.cpu.id not in task.affinity:
        return False
    level = env.level
    # task_hot(): SMT siblings share the cache, so nothing is hot at the SMT level
    if level.name == "SMT" or not eng.policy.hot(task, eng.now, level):
        return True
    if level.nr_balance_failed > level.cache_nice_tries:
        return True
    eng._counters["cache_hot_refusals"] += 1
    if eng.trace_file is not None:
        eng.trace(env.cpu.id, "refuse", f"migration of {task.name} from cpu{src.id} refused: "
                  f"cache-hot (level {level.name}, failed balances {level.nr_balance_failed} "
                  f"<= cache_nice_tries {level.cache_nice_tries})")
    return False


def cpu_util_boost(eng: "Engine", cpu: int) -> int:
    """cpu_util_cfs_boost(): the larger of the CPU's utilisation and runnable averages, at most
    its capacity (runnable boosting, find_busiest_queue()'s migrate_util case)."""
    pelt = eng.pelt
    assert pelt is not None
    return min(SCHED_CAPACITY_SCALE, max(pelt.cpu_util(cpu, eng.now),
                                         pelt.cpu_runnable(cpu, eng.now)))


def task_util(eng: "Engine", task: Task, src: "Cpu") -> int:
    """task_util_est(): the task's PELT util_avg (no util_est) with pelt_signals; else at
    steady state, the task's share of its busy CPU by weight."""
    if eng.pelt is not None:
        return eng.pelt.task_util(task.tid, eng.now)
    return SCHED_CAPACITY_SCALE * task.weight // max(1, eng.policy.load_of(src.rq))


def detach_tasks(eng: "Engine", env: Env, src: "Cpu") -> int:
    """detach_tasks() with attach_tasks(): the oldest queued task first (the tail of
    cfs_tasks), at most loop_max looked at, until the imbalance is used up."""
    if src.rq.nr_running <= 1 or env.imbalance <= 0:
        return 0
    loop_max = min(SCHED_NR_MIGRATE, src.rq.nr_running)
    failed = min(env.level.nr_balance_failed, 63)  # shr_bound()
    moved = loop = 0
    for task in reversed(eng.policy.queued_tasks(src.rq)):
        if env.idle != BUSY and src.rq.nr_running <= 1:
            break  # do not steal all
        loop += 1
        if loop > loop_max:
            break
        if not can_migrate_task(eng, env, task, src):
            continue
        if env.migration == MIGRATE_TASK:
            amount = 1
        else:
            amount = (max(eng.policy.task_load(task, eng.now), 1) if env.migration == MIGRATE_LOAD
                      else task_util(eng, task, src))
            if amount >> failed > env.imbalance:
                continue  # too much load: the limit relaxes as balancing keeps failing
        env.imbalance -= amount
        eng.dequeue(src, task)
        eng.enqueue(env.cpu, task, "migrate")
        eng.check_preempt(env.cpu, task)  # attach_task(): check_preempt_curr() per task
        if eng.trace_file is not None:
            eng.trace(env.cpu.id, "pull", f"{task.name} from cpu{src.id} ({env.level.name}, "
                      f"{env.migration})")
        moved += 1
        if env.idle == NEWLY_IDLE or env.imbalance <= 0:
            break  # CONFIG_PREEMPTION: a newly idle pull stops at one task
    return moved


# ------------------------------------------------------------------------ load_balance()
def _is_core_idle(eng: "Engine", cpu: int) -> bool:
    base = cpu // eng.threads * eng.threads
    return all(_idle_cpu(eng.cpus[c]) for c in range(base, base + eng.threads))


def should_we_balance(eng: "Engine", env: Env) -> bool:
    """should_we_balance(): a newly idle CPU always; else the local group's first idle CPU
    (above the SMT level, the first on an idle core, then the first idle SMT thread), or the
    group's first CPU when none is idle."""
    if env.idle == NEWLY_IDLE:
        return env.cpu.rq.nr_running == 0
    group = sched_groups(eng, env.cpu.id, env.index)[0]
    idle_smt = -1
    for c in group:
        if not _idle_cpu(eng.cpus[c]):
            continue
        if env.level.name != "SMT" and not _is_core_idle(eng, c):
            if idle_smt < 0:
                idle_smt = c
            continue  # the kernel drops this core's other threads from the search
        return c == env.cpu.id
    if idle_smt >= 0:
        return idle_smt == env.cpu.id
    return group[0] == env.cpu.id


def _out_balanced(level: DomainLevel, idle: str) -> None:
    level.nr_balance_failed = 0
    if idle != NEWLY_IDLE and level.balance_interval_ms < level.max_interval_ms:
        level.balance_interval_ms *= 2  # newidle_balance() disregards the intervals


def load_balance(eng: "Engine", cpu: "Cpu", index: int, idle: str) -> tuple[int, bool]:
    """load_balance(): (tasks moved, continue_balancing)."""
    level = cpu.domains[index]
    env = Env(cpu, level, index, idle)
    eng._counters["balance_attempts"] += 1
    if not should_we_balance(eng, env):
        _out_balanced(level, idle)
        return 0, False
    group = find_busiest_group(eng, env)
    busiest = None if group is None else find_busiest_queue(eng, env, group)
    if busiest is None:
        _out_balanced(level, idle)
        if eng.trace_file is not None:
            eng.trace(cpu.id, "balance", f"{level.name} {idle}: balanced")
        return 0, True
    moved = detach_tasks(eng, env, busiest) if busiest.rq.nr_running > 1 else 0
    if moved:
        level.nr_balance_failed = 0
        eng._counters["balance_moved"] += moved
    else:
        eng._counters["balance_failed"] += 1
        if idle != NEWLY_IDLE:
            level.nr_balance_failed += 1
        if need_active_balance(eng, env) and not request_active_push(eng, cpu, busiest):
            # out_one_pinned: LBF_ALL_PINNED is still set when detach_tasks() never ran
            _back_off_pinned(level, idle, all_pinned=busiest.rq.nr_running <= 1)
            return 0, True
    # unbalanced (or active balancing needed: need_active_balance() again): reset the interval
    level.balance_interval_ms = level.min_interval_ms
    return moved, True


# ------------------------------------------------------------------------ active balancing
MAX_PINNED_INTERVAL_MS: Final = 512  # load_balance(): "Max backoff if we encounter pinned tasks"


def need_active_balance(eng: "Engine", env: Env) -> bool:
    """need_active_balance(): of its cases only imbalanced_active_balance() can hold here
    (migrate_task, more than cache_nice_tries + 2 failed balances; it does not look at the
    idle type, so a newly idle pass can kick once periodic passes failed); asym packing, misfit
    and the reduced-capacity case need CPUs of unequal capacity, which are not modelled."""
    level = env.level
    return (bool(eng.tun.get("active_balance")) and env.migration == MIGRATE_TASK
            and level.nr_balance_failed > level.cache_nice_tries + 2)


def request_active_push(eng: "Engine", dst: "Cpu", busiest: "Cpu") -> bool:
    """The kick of load_balance(): False if the busiest CPU's running task may not run on
    ``dst`` (the idle task's, while that CPU has none: pinned too); else, unless a push is
    pending there already (rq->active_balance), record push_cpu and wake the CPU's migration
    thread / stopper, which preempts the running task at once (engine.schedule() runs its
    work before the next pick).  Shared by both balancers: 2.6.x and 3.x kick the same way."""
    curr = busiest.curr
    if curr is None or (curr.affinity is not None and dst.id not in curr.affinity):
        return False
    if busiest.push_cpu < 0:
        busiest.push_cpu = dst.id
        _count(eng, "active_balance_kicks")
        eng.resched(busiest, f"active balance: migration thread pushes to cpu{dst.id}"
                    if eng.trace_file is not None else "")
    return True


def _back_off_pinned(level: DomainLevel, idle: str, all_pinned: bool) -> None:
    """out_one_pinned: newidle_balance() disregards intervals, so only a periodic pass backs
    off, up to MAX_PINNED_INTERVAL when every task was pinned, else up to max_interval."""
    if idle == NEWLY_IDLE:
        return
    if ((all_pinned and level.balance_interval_ms < MAX_PINNED_INTERVAL_MS)
            or level.balance_interval_ms < level.max_interval_ms):
        level.balance_interval_ms *= 2


def detach_one_task(eng: "Engine", src: "Cpu", dst: "Cpu") -> Task | None:
    """active_load_balance_cpu_stop()'s detach_one_task(): the first task from the tail of
    cfs_tasks (the oldest; the preempted one is queued again by now) that may run on ``dst``;
    LBF_ACTIVE_LB skips task_hot()."""
    for task in reversed(eng.policy.queued_tasks(src.rq)):
        if task.affinity is None or dst.id in task.affinity:
            return task
    return None


def _count(eng: "Engine", name: str) -> None:
    """A counter that only runs with active balancing have (the others' output is unchanged)."""
    eng._counters[name] = eng._counters.get(name, 0) + 1


# ------------------------------------------------------------------------ when to balance
def interval_ns(eng: "Engine", cpu: "Cpu", level: DomainLevel) -> int:
    """get_sd_balance_interval(): balance_interval (ms) x busy_factor while busy, in jiffies
    rounded up, one jiffy less while busy, clamped to [1, HZ x CPUs / 10] jiffies."""
    busy = not _idle_cpu(cpu)
    ms = int(level.balance_interval_ms * (level.busy_factor if busy else 1))
    hz: int = eng.tun["HZ"]
    jiffies = -(-ms * hz // 1000) - (1 if busy else 0)
    jiffies = max(1, min(jiffies, hz * len(eng.cpus) // 10))
    return jiffies * eng.tick_ns


def rebalance_domains(eng: "Engine", cpu: "Cpu", kicked: bool) -> None:
    """rebalance_domains(): each level whose interval has passed, lowest first, until a level
    where another CPU of the group balances (should_we_balance())."""
    idle = _idle_cpu(cpu)
    for index in range(len(cpu.domains)):
        level = cpu.domains[index]
        if not ((kicked and idle) or eng.now >= level.last_balance_ns
                + interval_ns(eng, cpu, level)):
            continue
        level.last_balance_ns = eng.now - eng.now % eng.tick_ns  # sd->last_balance, jiffies
        moved, go_on = load_balance(eng, cpu, index, IDLE if idle else BUSY)
        if moved:
            idle = _idle_cpu(cpu)
        if not go_on:
            break


def newidle_balance(eng: "Engine", cpu: "Cpu") -> bool:
    """newidle_balance(): nothing unless some runqueue is overloaded (rd->overload); then
    each level with SD_BALANCE_NEWIDLE, lowest first, until a task is pulled."""
    if eng.overloaded == 0:
        return False
    for index in range(len(cpu.domains)):
        if NEWIDLE_FLAG in cpu.domains[index].flags:
            moved, _ = load_balance(eng, cpu, index, NEWLY_IDLE)
            if moved:
                return True
    return False
