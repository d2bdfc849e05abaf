import math
import re

from django import template
from django.utils.html import conditional_escape
from django.utils.safestring import mark_safe

from benchmarks.analysis import envdiff

register = template.Library()


@register.filter
def num(value, digits: int = 4):
    """A measurement shown with `digits` significant figures, never in scientific notation."""
    if value is None or value == "":
        return "–"
    try:
        number = float(value)
    except (TypeError, ValueError):
        return value
    if not math.isfinite(number):
        return str(number)
    if number == 0 or abs(number) >= 10 ** (digits - 1):
        return f"{number:,.0f}" if number.is_integer() or abs(number) >= 1e3 else f"{number:g}"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(number))))
    return f"{number:,.{decimals}f}"


@register.filter
def percent(value):
    if value is None:
        return "–"
    return f"{100 * float(value):.1f}%"


@register.filter
def pairs(mapping):
    """Sorted (key, value) pairs of a dict, for params and tunables."""
    if not isinstance(mapping, dict):
        return []
    return sorted(mapping.items())


@register.filter
def change(ratio):
    """A ratio against a baseline as a signed percentage: 0.955 -> -4.5%."""
    if ratio is None:
        return "–"
    return f"{100 * (float(ratio) - 1):+.1f}%"


def _flatten(prefix: str, mapping: dict, out: dict) -> dict:
    for key, value in mapping.items():
        if isinstance(value, dict) and value:
            _flatten(f"{prefix}{key}.", value, out)
        else:
            out[f"{prefix}{key}"] = value
    return out


@register.filter
def flat_pairs(mapping):
    """Sorted (dotted key, value) pairs of a nested dict: {"topology": {"cpus": 2}} gives
    ("topology.cpus", 2). Environments are shown as tables of these, never as a dict's repr."""
    if not isinstance(mapping, dict):
        return []
    return sorted(_flatten("", mapping, {}).items())


@register.filter
def plain(value):
    """A stored JSON value as a person reads it (see benchmarks.analysis.envdiff.plain)."""
    return envdiff.plain(value)


FOLD_OPEN_UP_TO = 8  # a group of at most this many differing settings is shown unfolded


@register.filter
def diff_groups(rows):
    """The rows of "What else differs", grouped by section and key prefix
    (environment: simulator.counters), each group with its size and whether it starts open."""
    groups: dict[str, list] = {}
    for row in rows or []:
        section = row["section"] if isinstance(row, dict) else row.section
        key = row["key"] if isinstance(row, dict) else row.key
        prefix = key.rsplit(".", 1)[0] if "." in key else ""
        groups.setdefault(f"{section}: {prefix}" if prefix else section, []).append(row)
    return [(title, members, len(members) <= FOLD_OPEN_UP_TO)
            for title, members in groups.items()]


@register.filter
def breakable(value):
    """An identifier (`tunable.sched_child_runs_first`, a mail address) that may wrap after its
    dots, underscores, slashes and @ rather than between two letters: a <wbr> after each."""
    text = conditional_escape(value)
    return mark_safe(re.sub(r"([._/@])", r"\1<wbr>", str(text)))  # noqa: S308 (escaped above)
