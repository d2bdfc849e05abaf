"""The burn variant's line: `time: T (us)  work: W  wait: X  idx: F`.

Sweeps trade iterations against burn time; a heading such as `100 x 100 ms:` sets
params iterations=100, burn_us=100000 for the lines after it.
"""

from .skips import ATTRIBUTION, SETUP, SHELL, LineRules
from .timing import TimingLinesParser, burn_like, burn_setup


class BurnParser(TimingLinesParser):
    name = "burn"
    version = 2
    description = "threadtest burn-variant lines"
    kind = "burn"
    example = "time: 10612345 (us)  work: 20000000  wait: 201234  idx: 1.88"
    # `constant total work 10 s` describes the setup: only the burn fields are its values.
    rules = LineRules(ATTRIBUTION, SHELL, SETUP, result_like=burn_like)

    def detect(self, head: str) -> float:
        # The burn line is unmistakable, so even a few of them among chatter are convincing.
        score = super().detect(head)
        return 0.4 + 0.55 * score / 0.9 if score else 0.0

    def setup_line(self, text: str, lineno: int) -> dict | None:
        return burn_setup(text, lineno)
