from django.db.models.signals import post_delete
from django.dispatch import receiver

from benchmarks.models import Run, RunTombstone


@receiver(post_delete, sender=Run, dispatch_uid="run-tombstone")
def remember_deleted_run(sender, instance, **kwargs):
    from benchmarks.comparisons.pagecache import frozen_pages

    RunTombstone.objects.create(run_id=instance.pk)
    frozen_pages.forget_version()
