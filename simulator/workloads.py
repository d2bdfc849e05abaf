"""The workload registry (names are part of the CLI contract)."""

from .rtapp import Rtapp
from .wl_sched import Periodic, RunqueueCost, YieldLoop
from .wl_server import Chatroom, Overcommit, Pipeline, WakePingpong
from .wl_threads import Threadtest, ThreadtestBurn

WORKLOADS = {w.name: w for w in (Threadtest(), ThreadtestBurn(), YieldLoop(), RunqueueCost(),
                                   Chatroom(), Pipeline(), WakePingpong(), Overcommit(),
                                   Periodic(), Rtapp())}


def catalog_workloads():
    return {name: {"description": w.description, "params": w.params, "metrics": w.metrics,
                   "aliases": dict(getattr(w, "aliases", {}))}
            for name, w in WORKLOADS.items()}
