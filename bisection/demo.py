"""The demo's bisection: opened on the finding the demo thread is about (threadtest with
10000 loops on the 2-CPU Core 2, slower from 2.6.23 to 2.6.24), through the same service as
the finding page's "Bisect this". It stays in progress: no step has been tested yet."""

from benchmarks.hooks import DemoStep

HEADLINE_PARAMS = {"loops": 10000}  # the case the thread's first message reports


def _headline_finding():
    from regressions.demo import demo_series_keys
    from regressions.models import Regression

    findings = list(Regression.objects.live().filter(series_key__in=demo_series_keys())
                    .select_related("machine", "good", "bad").order_by("pk"))
    wanted = [f for f in findings
              if all(f.params.get(k) == v for k, v in HEADLINE_PARAMS.items())]
    return (wanted or findings or [None])[0]


def load_demo_bisection(write) -> None:
    from benchmarks.services.demo import demo_owner

    from .models import Bisection
    from .services import bisection_create

    owner, finding = demo_owner(), _headline_finding()
    if owner is None or finding is None:
        write("bisection: none (no demo finding)" if owner else
              "bisection: none (the demo's account name is taken by a real account)")
        return
    bisection = Bisection.objects.filter(owner=owner, regression=finding).first()
    if bisection is None:
        bisection = bisection_create(owner=owner, regression=finding.pk)
    write(f"bisection /bisect/{bisection.pk}/: {bisection.good}..{bisection.bad} on "
          f"{finding.machine.name}, in progress")


DEMO_BISECTION = DemoStep(order=40, name="bisection", load=load_demo_bisection)
