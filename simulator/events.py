"""Event kinds of the engine's heap (shared by the engine and the action interpreter)."""

EV_SEG, EV_TIMER, EV_BALANCE, EV_SAMPLE, EV_STOP, EV_CALL = range(6)
