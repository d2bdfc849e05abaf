"""Kernel profiles: which scheduler family a kernel uses and its tunables with defaults.

Values come from the kernel sources of each version (see FIELD-NOTES.md's mechanism table and
docs/simulator.md).  Nothing here is fitted to a benchmark result.  Latency-type CFS tunables are
given unscaled, as the sysctl defaults in the source; the engine multiplies them by the
kernel's own CPU-count factor (1 + log2 ncpus, capped at 8 CPUs from 2.6.32 on).
"""

from .machine import MachineModel

MS = 1_000_000


def _t(default, type_, help_):
    return {"default": default, "type": type_, "help": help_}


def _sysctl01(default, help_):
    """A boolean sysctl: reported as the 0/1 integer /proc/sys shows (true/false accepted)."""
    return {"default": int(default), "type": "int", "min": 0, "max": 1, "help": help_,
            "sysctl_bool": True}


def machine_tunables(machine):
    """The tunables a machine model (calibration) sets: their defaults for runs on it.

    An idle CPU's wakeup-to-run latency is the IPI plus the idle-state exit (plus the host
    waking a halted vCPU on a virtualised machine), or the measured excess of a cross-CPU
    wakeup over a same-CPU one, whichever is larger.  In a guest, a vCPU idle for less than the
    host's halt-polling window (``halt_poll_us``) is still polling on its host CPU: its wake
    costs the IPI and idle exit, or the cross-CPU excess (the ping-pong's partner idles far
    shorter than the window), whichever is larger, and never more than the long wake."""
    idle_wake_us = machine.ipi_us + machine.idle_exit_us
    polled_us = max(idle_wake_us, machine.wakeup_remote_us - machine.wakeup_local_us)
    if machine.virtualised:
        idle_wake_us += machine.vcpu_wake_us
    idle_wake_us = max(idle_wake_us, machine.wakeup_remote_us - machine.wakeup_local_us)
    polled_us = min(polled_us, idle_wake_us)
    loop_memory = {} if machine.loop_memory_ns is None else {"loop_memory_ns":
                                                             machine.loop_memory_ns}
    return {"loop_ns": machine.loop_ns, **loop_memory,
            "fork_ns": round(machine.thread_create_join_us * 1000),
            "context_switch_ns": round(machine.context_switch_us * 1000),
            "wakeup_ns": round(machine.wakeup_local_us * 1000),
            "idle_wake_ns": round(idle_wake_us * 1000),
            "idle_wake_polled_ns": round(polled_us * 1000),
            "halt_poll_ns": round(machine.halt_poll_us * 1000) if machine.virtualised else 0,
            "busy_contention": machine.contention,
            "cache_llc_ns": machine.llc_hit_ns, "cache_remote_ns": machine.remote_line_ns}


# Tunables every profile has: the machine model and the benchmark environment.
COMMON_TUNABLES = {
    "HZ": _t(250, "int", "timer tick rate; slices expire and periodic balancing runs on ticks"),
    "tick_skew": _t(False, "bool", "each CPU's tick is offset by (tick / 2) / ncpus x its "
                    "number, as tick_setup_sched_timer() did from 2.6.21 until 2.6.33 removed "
                    "it; off: every CPU ticks at the same instant (3.4 on: the skew_tick= boot "
                    "option, off by default)"),
    "context_switch_ns": _t(2000, "int", "cost of switching to another task (register + TLB)"),
    "yield_syscall_ns": _t(400, "int", "cost of one sched_yield() call that does not switch"),
    "fork_ns": _t(25000, "int", "cost of creating a thread (clone + setup), charged to the parent"),
    "exit_ns": _t(10000, "int", "cost of a thread exiting, charged to the exiting thread"),
    "wakeup_ns": _t(1500, "int", "cost of a futex/pipe wakeup, charged to the waker"),
    "loop_ns": _t(3.0, "float", "calibration: nanoseconds per counting-loop iteration "
                  "(unoptimised loop at ~1.5 GHz; LOOP_INSNS instructions, which also prices "
                  "an instruction for modelled kernel code paths)"),
    "loop_memory_ns": _t(3.0, "float", "calibration: nanoseconds per iteration of the same "
                         "loop with its counter in memory (volatile, or a -O0 build)"),
    "smt_speed": _t(0.6, "float", "throughput of one SMT thread while its sibling is busy "
                    "(1.0 = no sharing)"),
    "cache_refill_us": _t(-1.0, "float", "cache refill paid by a migrated task that ran "
                          "recently. -1 (default): priced from the workload's working set, one "
                          "cache_llc_ns per 64-byte line between cores of a socket, "
                          "cache_remote_ns across sockets, nothing between SMT siblings (a "
                          "workload that gives no working set pays 30 us x0.1 / x1 / x3, no "
                          "source); >= 0: that flat price, x0.1 to an SMT sibling, x1 within a "
                          "socket, x3 across sockets, whatever the working set"),
    "cache_llc_ns": _t(15.75, "float", "machine: load-to-use latency of a line from the shared "
                       "last-level cache (a migrated task's refill within a socket)"),
    "cache_remote_ns": _t(120.0, "float", "machine: latency of a line from another socket (a "
                          "migrated task's refill across sockets)"),
    "cache_warm_ms": _t(10.0, "float", "a task whose last run ended longer ago than this has a "
                        "cold cache anyway and pays no refill on migration"),
    "busy_factor": _t(64, "int", "a busy CPU multiplies its balance interval by this"),
    "balance_fork": _t(False, "bool", "SD_BALANCE_FORK on every level: place a new task on the "
                       "idlest CPU instead of its parent's"),
    "balance_wake": _t(False, "bool", "SD_BALANCE_WAKE on the SMT and MC levels: a wakeup with "
                       "no SD_WAKE_AFFINE level (wake_affine off) goes to the idlest group and "
                       "CPU of the cache domain"),
    "balance_fork_smt": _t(False, "bool", "SD_BALANCE_FORK on the SMT level only: a new task "
                           "goes to the idlest hardware thread of its parent's core "
                           "(sched_fork()'s sched_balance_self() climbs no higher than the SMT "
                           "domain)"),
    "wake_affine": _t(True, "bool", "SD_WAKE_AFFINE: pull a wakee to the waker's CPU when loads "
                      "allow"),
    "newidle_balance": _t(True, "bool", "SD_BALANCE_NEWIDLE: a CPU about to go idle pulls work"),
    "idle_keeps_busy_next_balance": _t(False, "bool", "idle_balance() that pulled nothing "
                                       "keeps rq->next_balance unless it has passed: a CPU "
                                       "that was busy at a tick keeps the deadline its busy "
                                       "interval (balance_interval x busy_factor) set and "
                                       "does not balance before it once idle (\"sched: fix "
                                       "next_balance logic in rebalance_domains() and "
                                       "idle_balance()\"; 2.6.22 reset it)"),
    "idle_balance_kick": _t(False, "bool", "an idle CPU is kicked to balance as soon as another "
                            "CPU of its domain gets a second runnable task (faster idle "
                            "balancing)"),
    "idle_wake_ns": _t(0, "int", "machine: wakeup-to-run latency of an idle CPU that gets work "
                       "(IPI + idle-state exit; + the host waking a halted vCPU in a guest)"),
    "halt_poll_ns": _t(0, "int", "machine: a guest's host halt-polling window: a vCPU woken less "
                       "than this long after it went idle is still polling on its host CPU and "
                       "wakes in idle_wake_polled_ns (KVM's halt_poll_ns, 200000 by default: "
                       "KVM_HALT_POLL_NS_DEFAULT); 0: every idle wake costs idle_wake_ns"),
    "idle_wake_polled_ns": _t(0, "int", "machine: wakeup-to-run latency of a guest's idle vCPU "
                              "still within the host's halt-polling window (halt_poll_ns)"),
    "busy_contention": _t(0.0, "float", "machine: fractional slowdown of a busy CPU when every "
                          "CPU outside its core is busy too (shared cache, memory bandwidth, "
                          "host steal); 0 = none"),
    "noise_pct": _t(1.0, "float", "random +-% jitter on every work amount, seeded (run-to-run "
                    "variance)"),
    "vmstat_interval_ms": _t(100.0, "float", "sampling interval of the vmstat-like series"),
    "sched_cost_ns": _t(300, "int", "fixed cost of one schedule() decision"),
    "busy_idx": _t(2, "int", "cpu_load[] history index a busy CPU balances with (0 = "
                   "instantaneous load; higher = slower-moving average; index k reads "
                   "cpu_load[k - 1], as source_load() / target_load() do)"),
    "idle_idx": _t(1, "int", "cpu_load[] history index for periodic balancing of an idle CPU"),
    "newidle_idx": _t(2, "int", "cpu_load[] history index for balancing when going idle"),
    "busiest_per_task_check": _t(True, "bool", "find_busiest_group() finds the domain balanced "
                                 "while the busiest CPU's load (its cpu_load[] history, "
                                 "source_load) is no more than its load per task (2.6.17 - "
                                 "2.6.3x: \"if (max_load <= busiest_load_per_task) goto "
                                 "out_balanced\"); 0: no such test (3.0 and later)"),
    "busiest_group_form": _t("2.6.22", "choice:2.6.22,2.6.23,3.0", "find_busiest_group() as "
                             "that release's source has it: 2.6.22 (a small imbalance that "
                             "moving one task does not improve is balanced; move_tasks() skips "
                             "a task heavier than the load left), 2.6.23 (also 2.6.24: "
                             "SCHED_LOAD_SCALE_FUZZ, such an imbalance is a failed balance, a "
                             "task moves unless half its weight exceeds the load left + FUZZ), "
                             "3.0 (load_above_capacity, an idle CPU has no imbalance_pct test, "
                             "newidle force-balances)"),
}

for _name, _value in machine_tunables(MachineModel.default()).items():
    COMMON_TUNABLES[_name]["default"] = _value

# Active balancing: every per-CPU-runqueue version read has it (2.6.20's, 2.6.22's and 3.x's
# load_balance() wake the busiest CPU's migration thread / stopper, 6.6's need_active_balance());
# a tunable so that its effect can be measured, on by default wherever a balancer runs
ACTIVE_BALANCE = _t(True, "bool", "active balancing: a periodic balance that found an imbalance "
                    "but moved nothing, more than cache_nice_tries + 2 times in a row at a "
                    "level (6.6: with migrate_task), makes the busiest CPU's migration thread "
                    "(stopper) preempt its running task and push one task, cache-hot or not, to "
                    "the balancing CPU (2.6.x / 3.x load_balance(), active_load_balance(); 6.6 "
                    "need_active_balance(), active_load_balance_cpu_stop()); 0: never")

FAMILY_TUNABLES = {
    "goodness": {
        "HZ": _t(100, "int", "timer tick rate (2.4 default 100)"),
        "timeslice_ticks": _t(6, "int", "NICE_TO_TICKS(0): counter refill at nice 0"),
        "proc_change_penalty": _t(15, "int", "goodness() bonus for staying on the last CPU"),
        "goodness_insns": _t(40, "int", "instructions schedule() spends per runnable task: the "
                             "list step, can_schedule() and goodness()'s tests and compare"),
        "task_line_miss_ns": _t(60, "int", "fetching each scanned task_struct's scheduling "
                                "fields: one cache-line miss to the last-level cache"),
    },
    "o1": {
        "active_balance": ACTIVE_BALANCE,
        "timeslice_ms": _t(100, "int", "timeslice at nice 0; a forked child gets half of the "
                           "parent's remaining slice"),
        "cache_hot_time_ns": _t(2_500_000, "int", "boot-time cache_hot_time: a task that ran "
                                "more recently than this is not migrated by the balancer"),
        "sched_child_runs_first": _sysctl01(True, "child runs first, only for fork without "
                                            "CLONE_VM (threads never)"),
        "interactivity": _t(True, "bool", "the sleep_avg interactivity estimator: dynamic "
                            "priorities (static -5..+5 by sleep_avg), wakeup preemption by a "
                            "better dynamic priority, interactive tasks back to the active array "
                            "on slice expiry unless the expired ones starve; 0: static "
                            "priorities only"),
    },
    "cfs": {
        "active_balance": ACTIVE_BALANCE,
        "sched_latency_ns": _t(20 * MS, "int", "targeted preemption latency (unscaled)"),
        "sched_min_granularity_ns": _t(4 * MS, "int", "minimal preemption granularity (unscaled)"),
        "sched_wakeup_granularity_ns": _t(10 * MS, "int", "wakeup preemption granularity "
                                          "(unscaled)"),
        "wakeup_gran_by_wakee": _t(False, "bool", "wakeup preemption converts the wakeup "
                                   "granularity to the woken task's virtual time "
                                   "(calc_delta_fair(gran, se), 3.3's wakeup_gran()): a task "
                                   "lighter than nice 0 needs a larger lead to preempt; off: "
                                   "the granularity as is, whatever the weights"),
        "cfs_v1_preemption": _t(False, "bool", "2.6.23's preemption rules: at the tick the "
                                "running task yields once its key leads the leftmost task's by "
                                "more than latency/nr - latency/nr^2 (at least the minimal "
                                "granularity), or by anything after max(latency/nr, minimal "
                                "granularity) of running; a wakeup needs the wakeup "
                                "granularity in the running task's units, or any lead after "
                                "that time; off: 2.6.24's slice of latency x weight / load"),
        "sched_child_runs_first": _sysctl01(True, "forked child preempts its parent"),
        "child_runs_first_threads": _t(True, "bool", "whether child_runs_first also applies to "
                                       "threads (CLONE_VM); 2.6.23 skipped threads"),
        "thread_fork_inherits_vruntime": _t(False, "bool", "2.6.23's wake_up_new_task(): a new "
                                            "thread (CLONE_VM) is queued by activate_task(), "
                                            "not task_new_fair(): no START_DEBIT, no "
                                            "child-runs-first; it starts at its parent's "
                                            "vruntime and does not preempt it"),
        "sched_compat_yield": _sysctl01(False, "1: sched_yield() queues the task after the "
                                        "rightmost task"),
        "sched_migration_cost_ns": _t(MS // 2, "int", "cache-hot veto: a task that ran within "
                                      "this long is not migrated (0 disables)"),
        "newidle_avg_idle": _t(False, "bool", "2.6.33+ idle_balance(): a CPU going idle "
                               "skips the newly idle balance while its avg_idle (an eighth "
                               "of each idle span, measured at the wakeup that ends it, "
                               "capped at 2 x sched_migration_cost, starting there) is below "
                               "sched_migration_cost"),
        "latency_cap_cpus": _t(0, "int", "cap on the CPU count in the latency scaling factor "
                               "(0: no cap)"),
        "select_idle_sibling": _t(False, "bool", "on wakeup pick an idle CPU sharing the "
                                  "target's cache"),
        "wake_affine_form": _t("imbalance", "choice:imbalance,3.x", "wake_affine() as "
                               "that release's source has it: imbalance (the waking CPU's load, "
                               "less a sync waker's, plus the wakee's, within half the "
                               "imbalance margin of the previous CPU's: the model for the 2.6 "
                               "profiles, whose own forms are not modelled), 3.x (also a waking "
                               "CPU a sync waker leaves empty, and one no busier than the "
                               "previous CPU whose load and the previous CPU's together are at "
                               "most its load per task: 3.x kernel/sched/fair.c)"),
        "idle_sibling_form": _t("prev-first", "choice:prev-first,3.x", "select_idle_sibling() "
                                "of a busy target: prev-first (the previous CPU if idle, else "
                                "the first idle CPU sharing the target's cache), 3.x (the "
                                "target's own idle check only; else from the last-level-cache "
                                "domain down, the first group, from the target's, whose CPUs "
                                "are all idle: 3.3's walk of sd_llc's groups)"),
        "sched_cost_log_ns": _t(60, "int", "extra schedule() cost per log2(nr_running)"),
        "yield_semantics": _t("requeue", "choice:requeue,skip", "what sched_yield() does with "
                              "sched_compat_yield=0 in this version's code: requeue at its own "
                              "key, updated (2.6.23-2.6.38), skip-buddy (2.6.39 on)"),
        "gentle_fair_sleepers": _t(False, "bool", "GENTLE_FAIR_SLEEPERS: a waking sleeper gets "
                                   "half a latency period of vruntime credit instead of one"),
        "tick_lead_preempt": _t(False, "bool", "check_preempt_tick()'s second test (2.6.32 - "
                                "6.5): at a tick, once the running entity ran "
                                "sched_min_granularity since it was picked, it is preempted when "
                                "its vruntime leads the leftmost's by more than its slice; off: "
                                "only the slice's end preempts at the tick"),
        "shares_window_ms": _t(0, "int", "sysctl_sched_shares_window (2.6.38 - 3.7): a "
                               "cgroup's entity on a CPU weighs its cpu.shares x its load there "
                               "/ its load over all CPUs, the others' averaged over this window "
                               "(update_cfs_shares()); 0: the shares split evenly over the "
                               "group's tasks (the flattening)"),
        "group_hierarchy": _t(False, "bool", "CONFIG_FAIR_GROUP_SCHED's hierarchy (with "
                              "shares_window_ms > 0): a task of a cgroup with cpu.shares is "
                              "queued in its group's cfs_rq on its CPU at its own weight, the "
                              "root queue holds the group's entity (tg->se[cpu]) at the shares' "
                              "weight; enqueue, dequeue, update_curr, sched_slice, the tick's "
                              "check and wakeup preemption (find_matching_se()) per level, as "
                              "3.0's kernel/sched_fair.c; off: the group's shares split over "
                              "its tasks in one flat queue (the flattening)"),
        "cfs_buddies": _t(False, "bool", "3.x's buddies per cfs_rq (3.0 kernel/sched_fair.c: "
                          "pick_next_entity(), clear_buddies(), check_preempt_wakeup(), "
                          "dequeue_task_fair()): the pick prefers the next buddy, else the last, "
                          "else the entity after a skip buddy, each only within a wakeup "
                          "granularity of the leftmost; a preempting wakee becomes the next "
                          "buddy, a group task that sleeps while its group stays runnable makes "
                          "the group's entity the next buddy; off: no buddies, a yielder that is "
                          "leftmost always yields (the model before)"),
        "last_buddy": _t(False, "bool", "sched_feat LAST_BUDDY (kernel/sched/features.h: on "
                         "in 3.x), with cfs_buddies: a task preempted at wakeup, with at least "
                         "latency / min_granularity entities on its cfs_rq, becomes the last "
                         "buddy (check_preempt_wakeup()'s set_last_buddy())"),
        "next_buddy": _t(False, "bool", "sched_feat NEXT_BUDDY (kernel/sched/features.h: off "
                         "in 3.x), with cfs_buddies: any wakee but a new task, with at least "
                         "latency / min_granularity entities on the running task's cfs_rq, "
                         "becomes the next buddy whether it preempts or not"),
    },
    "rsdl": {
        "active_balance": ACTIVE_BALANCE,
        "rr_interval": _t(8, "int", "quota in ms each task gets at each priority level"),
        "priority_levels": _t(20, "int", "levels a nice-0 task descends before expiring"),
        "yield_expire": _t(True, "bool", "1: sched_yield() expires the task to the expired "
                           "array (0.33); 0: the yielder keeps its place at the head of its "
                           "level and its quota, nearly a no-op (0.31)"),
        "cache_hot_time_ns": _t(2_500_000, "int", "cache-hot veto for the balancer"),
        "level_quota_sum": _t(False, "bool", "1: a level's quota is the sum of the quotas its "
                              "tasks brought when queued at it this epoch (the RSDL readme: "
                              "the CPU a task is queued onto keeps a record of its quota); 0: "
                              "one rr_interval per level, shared by its tasks"),
    },
    "eevdf": {
        "active_balance": ACTIVE_BALANCE,
        "base_slice_ns": _t(750_000, "int", "sched_base_slice (unscaled)"),
        "sched_migration_cost_ns": _t(MS // 2, "int", "cache-hot veto"),
        "select_idle_sibling": _t(True, "bool", "on wakeup pick an idle CPU sharing the target's "
                                  "cache"),
        "sched_deadline": _t(True, "bool", "periodic tasks use SCHED_DEADLINE (global EDF)"),
        "sched_cost_log_ns": _t(60, "int", "extra schedule() cost per log2(nr_running)"),
        "run_to_parity": _t(True, "bool", "sched_feat RUN_TO_PARITY: no wakeup preemption "
                            "while the running task is eligible and on the slice it was "
                            "picked with"),
        "balance_66": _t(True, "bool", "6.6's periodic and newidle load balancing "
                         "(balance66.py): sd_init()'s domain parameters (intervals of "
                         "sd_weight to 2 x sd_weight ms, imbalance_pct 110 SMT / 117 above, "
                         "cache_nice_tries 0 SMT / 1 above) and load_balance() over sched "
                         "groups (group_classify(), migrate_load / util / task, "
                         "detach_tasks()); 0: the shared 2.6 / 3.x balancer with the 2.6-era "
                         "domain table (the model before; set busy_factor 64 with it)"),
        "pelt_signals": _t(True, "bool", "with balance_66: the balancer's utilisation and "
                           "runnable are PELT averages (pelt.py: util_avg / runnable_avg per "
                           "task and CPU, cpu_util_cfs(), cpu_runnable(), task_util_est() "
                           "without util_est); 0: their steady states (1024 per busy CPU and "
                           "per runnable task, the model before)"),
        "group_shares_pelt": _t(False, "bool", "6.6's group shares: a cgroup's entity on a "
                                "CPU weighs its cpu.shares x its load there (the larger of "
                                "its runnable weight and its PELT average) / the group's PELT "
                                "load over all CPUs (calc_group_shares()); 0: the shares split "
                                "evenly over the group's tasks (the flattening)"),
        "group_hierarchy": _t(False, "bool", "CONFIG_FAIR_GROUP_SCHED's hierarchy for a cgroup "
                              "with cpu.shares: its tasks queue in the group's own cfs_rq per "
                              "CPU under one group entity in the root queue, each level with "
                              "its own avg_vruntime, deadlines and lag (6.6 fair.c: "
                              "enqueue_task_fair(), pick_next_task_fair(), find_matching_se()); "
                              "0: each task sits in the root queue at its part of the group's "
                              "weight (the flattening)"),
        "delay_dequeue": _t(False, "bool", "sched_feat DELAY_DEQUEUE (6.12, not in 6.6): a "
                            "task that blocks while not eligible stays queued (in the average) "
                            "until the pick reaches it, when its dequeue completes, or it is "
                            "woken, on its own CPU, at its old vruntime and deadline"),
        "delay_zero": _t(True, "bool", "sched_feat DELAY_ZERO (6.12, with delay_dequeue): a "
                         "delayed task's positive lag is dropped to 0 when the pick dequeues it "
                         "or a wakeup finds it eligible (placed again at the average)"),
    },
}


def _cfs(desc, drop=(), **overrides):
    return {"family": "cfs", "description": desc, "overrides": overrides, "drop": drop}


PROFILES = {
    "2.4": {"family": "goodness", "description": "2.4 scheduler: one global runqueue, goodness() "
            "scans every runnable task on each decision, counters recalculated when all run out",
            "overrides": {"wake_affine": False, "newidle_balance": False}},
    "2.6.22": {"family": "o1", "description": "O(1) scheduler: per-CPU active/expired arrays, "
               "100 ms slices, fork splits the slice, hard yield, periodic + newidle balancing",
               "overrides": {"tick_skew": True}},
    "2.6.23": _cfs("CFS as first merged: latency 20 ms, granularity 2 ms, wakeup granularity "
                   "1 ms, child_runs_first skipped for threads, yield requeues at own key, no "
                   "cache-hot veto",
                   sched_min_granularity_ns=2 * MS, sched_wakeup_granularity_ns=MS,
                   child_runs_first_threads=False, thread_fork_inherits_vruntime=True,
                   sched_migration_cost_ns=0, idle_keeps_busy_next_balance=True,
                   tick_skew=True, cfs_v1_preemption=True, busiest_group_form="2.6.23"),
    "2.6.24": _cfs("CFS 2.6.24: latency 20 ms, granularity 4 ms, wakeup granularity 10 ms, "
                   "child runs first for threads, yield nearly a no-op, 0.5 ms cache-hot veto, "
                   "an idle CPU keeps the balance deadline it had while busy",
                   idle_keeps_busy_next_balance=True, tick_skew=True,
                   busiest_group_form="2.6.23"),
    "2.6.25": _cfs("CFS 2.6.25: as 2.6.24 but with faster idle balancing (modelled: an idle "
                   "CPU is kicked as soon as another CPU has queued work and balances on "
                   "instantaneous load; the idle deadline kept from busy times is not set) and "
                   "fork balancing on the SMT level (a new task starts on an idle hardware "
                   "thread)",
                   idle_balance_kick=True, idle_idx=0, balance_fork_smt=True, tick_skew=True,
                   busiest_group_form="2.6.23", newidle_idx=0),
    "rsdl-0.31": {"family": "rsdl", "description": "RSDL 0.31: rr_interval quota per task and "
                  "per priority level, minor and major rotations; sched_yield() only requeues "
                  "the task at the tail of its level (nearly a no-op)",
                  "overrides": {"yield_expire": False}},
    "rsdl-0.33": {"family": "rsdl", "description": "RSDL 0.33: as 0.31 but sched_yield() expires "
                  "the task to the expired array", "overrides": {}},
    "3.3": _cfs("CFS 3.3: latency 6 ms, granularity 0.75 ms, wakeup granularity 1 ms, scaling "
                "capped at 8 CPUs, select_idle_sibling, wake-affine, SD_BALANCE_WAKE off, "
                "SD_BALANCE_FORK on all levels, skip-buddy yield, child_runs_first 0",
                drop=("sched_compat_yield",),
                sched_latency_ns=6 * MS, sched_min_granularity_ns=750_000,
                sched_wakeup_granularity_ns=MS, sched_child_runs_first=0,
                latency_cap_cpus=8, select_idle_sibling=True, balance_fork=True,
                yield_semantics="skip", gentle_fair_sleepers=True, wakeup_gran_by_wakee=True,
                tick_lead_preempt=True,
                shares_window_ms=10, group_hierarchy=True, busiest_per_task_check=False,
                cfs_buddies=True, last_buddy=True, next_buddy=False,
                busiest_group_form="3.0",
                idle_idx=0, newidle_idx=0, newidle_avg_idle=True, wake_affine_form="3.x",
                idle_sibling_form="3.x"),
    "6.6-eevdf": {"family": "eevdf", "description": "EEVDF (6.6): earliest eligible virtual "
                  "deadline first, base slice 0.75 ms, yield sets vruntime to the deadline, "
                  "select_idle_sibling; SCHED_DEADLINE (global EDF) for periodic tasks",
                  "overrides": {"balance_fork": True, "group_shares_pelt": True,
                                "busy_factor": 16,
                                "group_hierarchy": True,
                                "busiest_per_task_check": False, "busiest_group_form": "3.0"}},
}

def tunable_specs(kernel, machine=None):
    """Tunable metadata (default, type, help) for one profile, overrides applied; a machine
    model's values replace the defaults of the machine tunables."""
    profile = PROFILES[kernel]
    specs = {name: dict(spec) for name, spec in COMMON_TUNABLES.items()}
    if machine is not None:
        for name, value in machine_tunables(machine).items():
            specs[name]["default"] = value
    for name, spec in FAMILY_TUNABLES[profile["family"]].items():
        specs[name] = dict(spec)
    for name, value in profile["overrides"].items():
        specs[name]["default"] = int(value) if specs[name].get("sysctl_bool") else value
    for name in profile.get("drop", ()):  # tunables this version's code no longer has
        specs.pop(name)
    return specs


def catalog_kernels():
    return {
        name: {"description": p["description"], "family": p["family"],
               "tunables": tunable_specs(name)}
        for name, p in PROFILES.items()
    }
