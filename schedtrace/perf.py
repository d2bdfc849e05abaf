"""`perf script` / `perf sched script` output of the sched tracepoints:

    <comm> <pid>[/<tid>] [<cpu>] <seconds>.<fraction>: [<period>] sched:<event>: <fields>

With `pid/tid` the tid is the task (the scheduler's pid).
"""

import re

from .lines import LineParser

PREFIX = re.compile(
    r"^\s*(?P<comm>.*?)\s+(?P<pid>-?\d+)(?:/(?P<tid>-?\d+))?\s+\[(?P<cpu>\d+)\]\s+"
    r"(?P<ts>\d+(?:\.\d+)?):\s+(?:\d+\s+)?(?P<rest>[\w-]+:[\w-]+:.*?)\s*$")


class PerfParser(LineParser):
    name = "perf script"

    def match_prefix(self, text):
        match = PREFIX.match(text)
        if match is None:
            return None
        pid = int(match["tid"] if match["tid"] is not None else match["pid"])
        # perf prints `:-1 -1` for a task whose thread it no longer knows (e.g. exiting):
        # an unknown prefix, which says nothing about who runs.
        return match["comm"], (pid if pid >= 0 else None), int(match["cpu"]), match["ts"], \
            match["rest"]


def looks_like(text: str) -> bool:
    return PREFIX.match(text) is not None
