"""``--format text``: what the real benchmark prints, one block per repeat (see docs/simulator.md).

threadtest      time <ms> ms
threadtest-burn time: <us> (us)  work: <us>  wait: <us>  idx: <f>
runqueue-cost   runqueue length  microseconds / <n>  <us>
everything else <metric>: <value>, one line per metric in catalog order
Blocks are separated by one blank line.
"""

from .workloads import WORKLOADS


def _fmt(value):
    if isinstance(value, float):
        return f"{value:.3f}".rstrip("0").rstrip(".") if value != int(value) else str(int(value))
    return str(value)


def _block(result, i):
    name = result["workload"]
    metrics = result["metrics"]
    if name == "threadtest":
        return f"time {round(metrics['time_ms'][i])} ms"
    if name == "threadtest-burn":
        return (f"time: {round(metrics['time_us'][i])} (us)  work: {round(metrics['work_us'][i])}"
                f"  wait: {round(metrics['wait_us'][i])}  idx: {metrics['idx'][i]:.2f}")
    if name == "runqueue-cost":
        return (f"runqueue length  microseconds\n"
                f"{result['params']['runqueue_length']}  {metrics['schedule_us'][i]:.3f}")
    order = list(WORKLOADS[name].metrics) if name in WORKLOADS else list(metrics)
    return "\n".join(f"{m}: {_fmt(metrics[m][i])}" for m in order if m in metrics)


def render_text(result):
    repeats = len(next(iter(result["metrics"].values()), []))
    return "\n\n".join(_block(result, i) for i in range(repeats)) + "\n"
