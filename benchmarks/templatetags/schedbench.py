import math

from django import template

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
