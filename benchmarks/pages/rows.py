"""The run list's rows and a run's samples table written in Python, not in a template loop.

Fifty runs through templates/benchmarks/_run_rows.html cost more than all of the run list's SQL
at 100,000 runs (several variable lookups, a localize and an escape per cell, a context pushed
per row and per summary: ~10 ms of CPU where this takes ~1 ms), and so did reading them as
model instances with prefetched summaries (~8 ms; plain rows, selectors.runs_listed(): ~2 ms);
a run's samples table likewise costs a localize per value. These give the same markup,
escaped the way the template escapes it (every name, kernel string, policy, param and tag is
user-supplied): tests/benchmarks/test_page_rows.py renders both ways over varied and hostile
runs and compares the exact HTML (tests/benchmarks/test_home_rows.py the home page's recent
runs). The template stays as the reference those tests render.
"""

from html import escape

from django.urls import reverse
from django.utils.formats import localize
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString, mark_safe

from benchmarks.selectors import ListedRun
from benchmarks.templatetags.schedbench import num, pairs

# A run id no page shows, to cut the run link into what comes before and after the id (the
# site may be mounted under a prefix).
_PK_MARK = 918273645

_HEAD = ('\n<table class="data runs">\n  <thead><tr>\n    {select}<th>run</th><th>benchmark</th>'
         '<th>kernel</th><th>machine</th><th>policy</th>\n    <th>params</th>'
         '<th>results (median ± stdev, n)</th><th>source</th>\n  </tr></thead>\n  <tbody>\n  ')
_SELECT_HEAD = '<th><span class="sr-only">select</span></th>'
_SELECT_CELL = ('<td><input type="checkbox" name="runs" value="{pk}" form="compare-selected" '
                'aria-label="select run #{pk}"></td>')
_ROW = ('\n    <tr>\n      {select}\n      <td class="num"><a href="{link}">#{pk}</a></td>\n'
        '      <td>{benchmark}</td>\n      <td class="mono kernel">{kernel}</td>\n'
        '      <td>{machine}</td>\n      <td>{policy}</td>\n'
        '      <td class="params">{params}</td>\n'
        '      <td class="mono">{results}</td>\n'
        '      <td><span class="tag source-{source}">{source}</span></td>\n    </tr>\n  ')
_TAIL = "\n  </tbody>\n</table>\n"


class TemplateText:
    """What a template's autoescaped {{ value }} prints, for the values rows hold: text, JSON
    values and numbers. Numbers take a shortcut only when the active format prints them as
    Python does (no thousands separator, a "." for decimals); otherwise, and for floats Python
    prints with an exponent (Django writes those out in full), Django's localize does it."""

    def __init__(self):
        self.plain_numbers = localize(-1234567) == "-1234567" and localize(-1234.5) == "-1234.5"

    def __call__(self, value) -> str:
        kind = type(value)
        if kind is str:
            return escape(value)
        if self.plain_numbers and kind is int:
            return str(value)
        if self.plain_numbers and kind is float:
            text = repr(value)
            if "e" not in text and text[-1].isdigit():  # not 1e-07, inf or nan
                return text
        shown = localize(value)
        return conditional_escape(shown if isinstance(shown, str) else str(shown))


def _results(summaries, text: TemplateText) -> str:
    """The summaries cell: each metric's median ± stdev and n, one per line."""
    parts = []
    for name, median, stdev, n in summaries:
        spread = "" if stdev is None else f" ± {text(num(stdev, 3))}"
        parts.append(f'{text(name)} {text(num(median))}{spread} <span class="muted">(n={text(n)})'
                     "</span>")
    return "<br>".join(parts)


def run_rows_html(runs: list[ListedRun], *, selectable: bool = False) -> SafeString:
    """The table of templates/benchmarks/_run_rows.html for runs read by
    selectors.runs_listed()."""
    text = TemplateText()
    link_before, link_after = (conditional_escape(part) for part in
                               reverse("run-detail", args=[_PK_MARK]).rsplit(str(_PK_MARK), 1))
    rows = [_HEAD.format(select=_SELECT_HEAD if selectable else "")]
    for run in runs:
        pk = text(run.pk)
        params = "".join(f'<span class="tag">{text(key)}={text(value)}</span>'
                         for key, value in pairs(run.params))
        rows.append(_ROW.format(
            select=_SELECT_CELL.format(pk=pk) if selectable else "",
            link=f"{link_before}{pk}{link_after}", pk=pk, benchmark=text(run.benchmark_slug),
            kernel=text(run.kernel_version), machine=text(run.machine_name),
            policy=text(run.policy or "–"), params=params,
            results=_results(run.summaries, text), source=text(run.source)))
    rows.append(_TAIL)
    return mark_safe("".join(rows))  # noqa: S308 (every value above went through text())


def sample_rows_html(values) -> SafeString:
    """The rows of a run's samples table: repeat number and value."""
    text = TemplateText()
    return mark_safe("".join(  # noqa: S308 (values through text())
        f'<tr><td class="num">{text(repeat)}</td><td class="num">{text(value)}</td></tr>'
        for repeat, value in enumerate(values, start=1)))
