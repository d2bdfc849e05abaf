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
# The same prefix found from its anchor (`-pid [cpu] flags ts: `) with search(): the greedy
# comm group above backtracks over the whole line, this does not. A comm is at most 16 bytes
# in the kernel, but one with `-12 [000] ` inside it would still be read right: the anchor
# search starts at the left and comm text can never hold the timestamp that must follow.
ANCHOR = re.compile(
    r"-(\d+)\s+(?:\(\s*(?:\d+|-+)\)\s+)?\[(\d+)\]\s+(?:[^\s:]{4,6}\s+)?(\d+(?:\.\d+)?):\s+")
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
        match = ANCHOR.search(text)
        if match is None:
            return None
        pid, cpu, ts = match.groups()
        return text[:match.start()].strip(), int(pid), int(cpu), ts, text[match.end():].rstrip()


def looks_like(text: str) -> bool:
    return PREFIX.match(text) is not None or PREFIX.match(INSTANCE.sub("", text, 1)) is not None
