from django.core.management.base import BaseCommand, CommandError

from benchmarks.models import Benchmark
from regressions.services import regressions_detect_all


class Command(BaseCommand):
    help = ("Re-run regression detection over every series (every finding keeps its id; "
            "changes no longer seen are marked so).")

    def add_arguments(self, parser):
        parser.add_argument("--benchmark", help="only this benchmark (slug)")

    def handle(self, *args, **options):
        benchmark = None
        if options["benchmark"]:
            benchmark = Benchmark.objects.filter(slug=options["benchmark"]).first()
            if benchmark is None:
                raise CommandError(f"no benchmark {options['benchmark']!r}")
        result = regressions_detect_all(benchmark=benchmark)
        self.stdout.write(f"{result['series']} series scanned, {result['created']} new "
                          f"finding(s), {result['not_seen']} no longer seen")
