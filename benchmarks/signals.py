from django.db.models.signals import post_delete
from django.dispatch import Signal, receiver

from benchmarks.models import Run, RunTombstone


@receiver(post_delete, sender=Run, dispatch_uid="run-tombstone")
def remember_deleted_run(sender, instance, **kwargs):
    from benchmarks.comparisons.pagecache import frozen_pages

    RunTombstone.objects.create(run_id=instance.pk)
    frozen_pages.forget_version()


# Sent after runs and their samples are written (new runs, and runs a reparse rewrote), with
# `run_ids`. Receivers (regression detection) queue their work with transaction.on_commit.
runs_stored = Signal()

# Sent when runs leave or rejoin their series without being rewritten (a withdrawal or a
# restore), with `run_ids`: what was computed from the series (regressions) is redone.
runs_visibility_changed = Signal()
