"""Atom feeds for list-archive style readers: new findings, new runs."""

from django.contrib.syndication.views import Feed
from django.urls import reverse_lazy
from django.utils.feedgenerator import Atom1Feed

from benchmarks.models import Run

from .models import Regression

ITEMS = 50


class RegressionsFeed(Feed):
    feed_type = Atom1Feed
    title = "schedbench: regressions and improvements"
    link = reverse_lazy("regression-list")
    subtitle = "Changes the detector found between kernels, newest first."

    def items(self):
        return Regression.objects.live().with_list_relations().order_by("-created", "-id")[:ITEMS]

    def item_title(self, item):
        return f"[{item.verdict}] {item}"

    def item_description(self, item):
        p = "n/a" if item.p_value is None else f"{item.p_value:.3g}"
        note = " (needs repeats)" if item.needs_repeats else ""
        return (f"{item.metric.name} {(item.change - 1) * 100:+.1f}% from {item.good.version} "
                f"to {item.bad.version} on {item.machine.name}, p={p}{note}; "
                f"status {item.status}")

    def item_pubdate(self, item):
        return item.created

    def item_updateddate(self, item):
        return item.updated


class RunsFeed(Feed):
    feed_type = Atom1Feed
    title = "schedbench: new runs"
    link = reverse_lazy("run-list")
    subtitle = "Benchmark runs as they arrive."

    def items(self):
        return Run.objects.visible().select_related("benchmark", "kernel", "machine").order_by(
            "-created", "-id")[:ITEMS]

    def item_title(self, item):
        return f"{item.benchmark.slug} on {item.kernel.version} ({item.machine.name})"

    def item_description(self, item):
        params = ", ".join(f"{k}={v}" for k, v in sorted(item.params.items()))
        return f"policy {item.policy or '-'}; {params or 'no params'}; source {item.source}"

    def item_pubdate(self, item):
        return item.created
