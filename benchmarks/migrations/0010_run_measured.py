from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("benchmarks", "0009_published_summary"),
    ]

    operations = [
        migrations.AddField(
            model_name="run",
            name="measured_at",
            field=models.DateTimeField(blank=True, db_index=True, null=True),
        ),
    ]
