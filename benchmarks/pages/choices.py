"""The run list's filter choices as <option> elements."""

from django.utils.html import format_html_join
from django.utils.safestring import SafeString


def options_html(choices, chosen: str | None) -> SafeString:
    """One escaped <option> per (value, label) pair, the one whose value is `chosen` selected.
    Built here rather than in a template loop: every kernel is a choice, and a template costs
    several variable lookups per option (hundreds of kernels: a quarter of the page's time)."""
    chosen = "" if chosen is None else str(chosen)
    return format_html_join("", '<option value="{}"{}>{}</option>', (
        (value, " selected" if str(value) == chosen else "", label) for value, label in choices))
