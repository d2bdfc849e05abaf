"""Finding points whose message or worker was lost. This module only decides and flips rows;
tasks.py sends the messages and runs the checks, always inside a worker, never in a GET.

Two ways a point gets stuck:
- its worker died while running it: the point is `running` but its heartbeat is older than
  SIMULATION_STALE_SECONDS. It goes back to `queued` (or fails after SIMULATION_MAX_ATTEMPTS).
- its message was lost before any worker claimed it (Redis restarted without persistence, or a
  filesystem-broker worker killed between delivery and claim): the point stays `queued` forever.
  Once it has waited SIMULATION_RESEND_SECONDS and the broker's queue holds fewer messages than
  there are such waiting points, some messages are certainly gone, so the waiting points are sent
  again. A duplicate of a message that was not lost is harmless: the claim is a conditional
  UPDATE, so the second message finds the point taken and is skipped; nothing runs twice.
"""

import logging
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from . import points
from .models import ACTIVE, SimulationPoint, Status

log = logging.getLogger(__name__)
BATCH = 200


def stale_points_reclaim() -> list[int]:
    """Queue again the running points whose worker stopped reporting; returns their ids."""
    now = timezone.now()
    stale = SimulationPoint.objects.filter(status=Status.RUNNING,
                                           heartbeat__lt=points.stale_cutoff())
    resend, touched = [], set()
    for point in stale.only("pk", "job_id", "attempts", "heartbeat")[:BATCH]:
        touched.add(point.job_id)
        if point.attempts >= settings.SIMULATION_MAX_ATTEMPTS:
            points.point_fail(point_id=point.pk, error=(
                f"its worker stopped reporting {point.attempts} times (killed, out of memory, "
                "or the host went away); not retried again"))
        elif SimulationPoint.objects.filter(pk=point.pk, status=Status.RUNNING,
                                            heartbeat=point.heartbeat).update(
                status=Status.QUEUED, heartbeat=None, sent=now):
            resend.append(point.pk)
    for job in touched:
        points.job_refresh(job_id=job)
    return resend


def waiting_points():
    """Queued points of live jobs whose message went out more than SIMULATION_RESEND_SECONDS
    ago."""
    cutoff = timezone.now() - timedelta(seconds=settings.SIMULATION_RESEND_SECONDS)
    return SimulationPoint.objects.filter(status=Status.QUEUED, job__status__in=ACTIVE,
                                          sent__lt=cutoff)


def lost_points_reclaim(*, backlog: int | None) -> list[int]:
    """Mark for resending the waiting points when the broker's queue (`backlog` messages; None
    when the broker cannot say) is too short to still hold all of their messages."""
    waiting = list(waiting_points().order_by("sent", "pk").only("pk", "sent")[:BATCH])
    if not waiting or (backlog is not None and backlog >= len(waiting)):
        return []
    now, resend = timezone.now(), []
    for point in waiting:
        if SimulationPoint.objects.filter(pk=point.pk, status=Status.QUEUED,
                                          sent=point.sent).update(sent=now):
            resend.append(point.pk)
    return resend
