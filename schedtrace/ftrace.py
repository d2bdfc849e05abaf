"""ftrace text: the `trace` and `trace_pipe` files of tracefs and `trace-cmd report`.

    <comm>-<pid> [(<tgid>)] [<cpu>] [<flags>] <seconds>.<fraction>: <event>: <fields>

trace-cmd report may prefix each line with the instance name (`sb:  comm-12 [000] ...`) and
prints sched_switch/sched_wakeup in its plugin spelling; both are accepted.
"""

import re

from .lines import LineParser

PREFIX = re.compile(
    r"^\s*(?P<comm>.*)-(?P<pid>\d+)\s+(?:\(\s*(?:\d+|-+)\)\s+)?\[(?P<cpu>\d+)\]\s+"
    r"(?:[^\s:]{4,6}\s+)?(?P<ts>\d+(?:\.\d+)?):\s+(?P<rest>.*?)\s*$")
# trace-cmd's instance prefix: a name, a colon, then the padded comm column.
INSTANCE = re.compile(r"^\s*[\w.-]+:\s{2,}")


class FtraceParser(LineParser):
    name = "ftrace"

    def __init__(self, warnings, *, instance_prefix=False):
        super().__init__(warnings)
        self.instance_prefix = instance_prefix

    def match_prefix(self, text):
        if self.instance_prefix:
            text = INSTANCE.sub("", text, count=1)
        match = PREFIX.match(text)
        if match is None:
            return None
        return (match["comm"].strip(), int(match["pid"]), int(match["cpu"]), match["ts"],
                match["rest"])


def looks_like(text: str) -> bool:
    return PREFIX.match(text) is not None or PREFIX.match(INSTANCE.sub("", text, 1)) is not None
