"""Runs get a result identity (one run per result set) and reparse successors; existing params
and tunables are rewritten in the one vocabulary of benchmarks/identity/vocabulary.py."""

from collections import defaultdict

from django.db import migrations, models

BATCH = 500


def _values_by_run(Sample, run_ids):
    values = defaultdict(lambda: defaultdict(list))
    rows = (Sample.objects.filter(run_id__in=run_ids).order_by("run_id", "metric_id", "index")
            .values_list("run_id", "metric__name", "value"))
    for run_id, metric, value in rows:
        values[run_id][metric].append(value)
    return values


def _canonicalise(run, slug, RunParam):
    from benchmarks.identity import vocabulary

    params = vocabulary.canonical_params(run.params, benchmark=slug)
    tunables = vocabulary.canonical_tunables(run.tunables)
    if params != run.params:
        from benchmarks.services.runs import _param_index_value

        RunParam.objects.filter(run_id=run.pk).delete()
        RunParam.objects.bulk_create(
            RunParam(run_id=run.pk, name=str(name)[:100], value=_param_index_value(value))
            for name, value in params.items())
    run.params, run.tunables = params, tunables


def forwards(apps, schema_editor):
    from benchmarks.services.runs import result_key

    Run = apps.get_model("benchmarks", "Run")
    RunParam = apps.get_model("benchmarks", "RunParam")
    Sample = apps.get_model("benchmarks", "Sample")
    Benchmark = apps.get_model("benchmarks", "Benchmark")
    slugs = dict(Benchmark.objects.values_list("pk", "slug"))
    ids = list(Run.objects.order_by("pk").values_list("pk", flat=True))
    for start in range(0, len(ids), BATCH):
        runs = list(Run.objects.filter(pk__in=ids[start:start + BATCH]))
        values = _values_by_run(Sample, [run.pk for run in runs])
        for run in runs:
            _canonicalise(run, slugs[run.benchmark_id], RunParam)
            by_metric = values.get(run.pk, {})
            run.result_key = result_key(run, {m: by_metric[m] for m in sorted(by_metric)})
        Run.objects.bulk_update(runs, ["params", "tunables", "result_key"])


class Migration(migrations.Migration):

    dependencies = [
        ("benchmarks", "0004_run_tombstone"),
    ]

    operations = [
        migrations.AddField(
            model_name="run",
            name="result_key",
            field=models.CharField(blank=True, db_index=True, editable=False, max_length=64),
        ),
        migrations.AddField(
            model_name="runtombstone",
            name="successor_id",
            field=models.BigIntegerField(blank=True, null=True),
        ),
        migrations.RunPython(forwards, migrations.RunPython.noop),
    ]
