"""A GIN index on the posts' full-text vector (benchmarks.search.POST_VECTOR), PostgreSQL only:
SQLite searches with LIKE and has no such index. Built with the same SearchVector expression
the search uses, so the planner can match it."""

from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector
from django.db import migrations

INDEX = GinIndex(SearchVector("subject", "author", "author_email", "body", config="simple"),
                 name="post_search_vector")


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.add_index(apps.get_model("discussions", "Post"), INDEX)


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.remove_index(apps.get_model("discussions", "Post"), INDEX)


class Migration(migrations.Migration):

    dependencies = [
        ("discussions", "0004_merge_0003_import_job_0003_repeated_results"),
    ]

    operations = [migrations.RunPython(create, drop, elidable=False)]
