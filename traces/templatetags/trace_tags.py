from django import template

register = template.Library()


@register.filter
def ms(nanoseconds) -> str:
    """Nanoseconds as milliseconds with three decimals (microsecond resolution)."""
    try:
        return f"{float(nanoseconds) / 1e6:.3f}"
    except (TypeError, ValueError):
        return "–"
