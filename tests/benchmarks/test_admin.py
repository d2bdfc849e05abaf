import pytest
from django.contrib import admin
from django.urls import reverse

from benchmarks import models
from tests.factories import make_run

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("model", [
    models.Benchmark, models.Metric, models.Machine, models.Kernel, models.Run, models.Sample,
    models.MonitorSeries, models.Artifact, models.ApiToken, models.Comparison,
])
def test_every_model_has_a_working_admin_page(admin_client, model):
    assert admin.site.is_registered(model)
    make_run("2.6.24", [1.0, 2.0], series={"vmstat": {"columns": ["r"], "rows": [[1]]}})
    opts = model._meta
    response = admin_client.get(reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist"))
    assert response.status_code == 200
