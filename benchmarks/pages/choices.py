"""The run list's filter choices as <option> elements."""

from html import escape

from django.utils.html import conditional_escape
from django.utils.safestring import SafeString, mark_safe


def _escaped(value) -> str:
    """conditional_escape(value), without its checks for the plain strings names are."""
    return escape(value) if type(value) is str else conditional_escape(value)


def options_html(choices, chosen: str | None) -> SafeString:
    """One escaped <option> per (value, label) pair, the one whose value is `chosen` selected.
    Built here rather than in a template loop: every kernel is a choice, and a template costs
    several variable lookups per option (hundreds of kernels: a quarter of the page's time);
    and with an f-string rather than format_html, whose per-call argument handling cost as much
    as the run list's SQL at 400 choices. Escaped as format_html escapes its arguments
    (conditional_escape): tests/benchmarks/test_page_rows.py compares it with format_html_join.
    """
    chosen = "" if chosen is None else str(chosen)
    parts = []
    for value, label in choices:
        value = str(value)
        selected = " selected" if value == chosen else ""
        parts.append(f'<option value="{_escaped(value)}"{selected}>{_escaped(label)}</option>')
    return mark_safe("".join(parts))  # noqa: S308 (both parts escaped above)
