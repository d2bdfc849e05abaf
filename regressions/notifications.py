"""Mail to the people following a finding's benchmark or machine (sent by a Celery task)."""

from django.conf import settings
from django.core.mail import get_connection, send_mass_mail
from django.db.models import Q

from .models import Follow, Regression


def _recipients(regression: Regression) -> list[str]:
    follows = Follow.objects.filter(
        Q(benchmark_id=regression.benchmark_id) | Q(machine_id=regression.machine_id),
        user__is_active=True).exclude(user__email="").select_related("user")
    return sorted({follow.user.email for follow in follows})


def _body(regression: Regression, link: str) -> str:
    pct = (regression.change - 1) * 100
    p = "n/a" if regression.p_value is None else f"{regression.p_value:.3g}"
    lines = [
        f"A change ({regression.verdict}) was found in {regression.benchmark.slug} on "
        f"{regression.machine.name}:",
        "",
        f"  metric   {regression.metric.name}",
        f"  kernels  {regression.good.version} -> {regression.bad.version}",
        f"  change   {pct:+.1f}% (p={p})",
        f"  params   {regression.params or '-'}",
        f"  policy   {regression.policy or '-'}",
    ]
    if regression.needs_repeats:
        lines.append("  note     a kernel has a single value here: needs repeats to confirm")
    lines += ["", "-- ", link,
              "You get this because you follow this benchmark or machine on schedbench."]
    return "\n".join(lines)


def new_findings_mail(*, regression_ids: list[int]) -> int:
    """One mail per follower per new finding still there; returns how many were sent."""
    site = settings.SCHEDBENCH_SITE_URL
    findings = Regression.objects.with_list_relations().filter(pk__in=regression_ids)
    messages = []
    for regression in findings:
        link = f"{site}{regression.get_absolute_url()}"
        subject = f"[schedbench] {regression}"
        body = _body(regression, link)
        messages += [(subject, body, None, [to]) for to in _recipients(regression)]
    if messages:
        send_mass_mail(messages, fail_silently=True, connection=get_connection())
    return len(messages)
