"""Re-derive runs from stored raw artifacts with the current parser versions."""

from django.core.management.base import BaseCommand

from benchmarks.models import Artifact
from benchmarks.services.ingest import IngestError, artifact_needs_reparse, artifact_reparse


class Command(BaseCommand):
    help = (
        "Re-parse stored artifacts whose parser has a newer version (or all with --force) "
        "and re-derive their runs in place: a run the new parse continues keeps its id, one it "
        "no longer yields redirects to its successor. Each artifact is done atomically."
    )

    def add_arguments(self, parser):
        parser.add_argument("artifact_ids", nargs="*", type=int, help="only these artifacts")
        parser.add_argument("--force", action="store_true", help="even if the version is current")
        parser.add_argument("--dry-run", action="store_true", help="only list what would change")

    def handle(self, *args, artifact_ids, force, dry_run, **options):
        artifacts = Artifact.objects.order_by("id")
        if artifact_ids:
            artifacts = artifacts.filter(id__in=artifact_ids)
        todo = [a for a in artifacts.iterator() if force or artifact_needs_reparse(a)]
        failures = 0
        for number, artifact in enumerate(todo, 1):
            prefix = f"[{number}/{len(todo)}] artifact {artifact.pk} ({artifact.filename})"
            if dry_run:
                self.stdout.write(f"{prefix}: would reparse ({artifact.parser_name} "
                                  f"v{artifact.parser_version})")
                continue
            try:
                removed, runs = artifact_reparse(artifact=artifact)
            except IngestError as exc:
                failures += 1
                where = f" at line {exc.line}" if exc.line else ""
                self.stderr.write(f"{prefix}: kept as it was, parse failed{where}: {exc.message}")
                continue
            self.stdout.write(f"{prefix}: {len(runs)} runs ({len(removed)} removed, redirected "
                              f"to successors) ({artifact.parser_name} "
                              f"v{artifact.parser_version})")
        self.stdout.write(f"{len(todo) - failures} reparsed, {failures} failed")
