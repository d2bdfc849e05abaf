"""Event kinds of the engine's heap (shared by the engine and the action interpreter)."""

from typing import Final

EV_SEG: Final = 0
EV_TIMER: Final = 1
EV_BALANCE: Final = 2
EV_SAMPLE: Final = 3
EV_STOP: Final = 4
EV_CALL: Final = 5

# "No time" for the engine's time fields that are unset (a CPU's pending event, its slice
# expiry): times are >= 0, and an int rather than None is never boxed by the compiled build
NO_TIME: Final = -1
