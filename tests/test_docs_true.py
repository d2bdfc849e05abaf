"""The docs say what the code does: the figures they quote are the code's, every stored model
is described in docs/data-model.md, and nothing done is still listed as not done."""

import re
from pathlib import Path

import pytest
from django.apps import apps

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
APPS = ("benchmarks", "simulations", "discussions", "regressions", "traces", "bisect")


def not_done(name: str) -> str:
    text = (DOCS / name).read_text()
    return text.split("## Not done yet", 1)[1].split("\n## ", 1)[0] if "## Not done yet" in \
        text else ""


def test_the_quoted_limits_are_the_codes():
    from benchmarks.api.jsonbody import MAX_DEPTH
    from discussions.render import OPEN_QUOTE_LINES

    assert f"deeper than {MAX_DEPTH} levels" in (DOCS / "api.md").read_text()
    assert f"quotes of up to {OPEN_QUOTE_LINES} lines" in (DOCS / "discussions.md").read_text()
    assert "render.tag" in (DOCS / "discussions.md").read_text()


@pytest.mark.parametrize("label", APPS)
def test_every_model_is_in_the_data_model(label):
    text = (DOCS / "data-model.md").read_text()
    missing = [model.__name__ for model in apps.get_app_config(label).get_models()
               if f"**{model.__name__}**" not in text]
    assert missing == []


def test_every_run_field_is_in_the_data_model():
    from benchmarks.models import Run

    run = (DOCS / "data-model.md").read_text().split("**Run**", 1)[1].split("\n\n", 1)[0]
    fields = [f.name for f in Run._meta.get_fields() if f.concrete and f.name != "id"
              and f.name != "tags_text"]
    assert [name for name in fields if f"`{name}`" not in run] == []


@pytest.mark.parametrize("doc, done", [
    ("api.md", ["deeper than", "serializers", "one schema", "measured", "Summary-only",
                "202 job"]),
    ("data-model.md", ["Summary-only", "deleted while it is still"]),
    ("regressions.md", ["run page does not show", "joining sends no signal",
                        "no `measured` dimension"]),
])
def test_nothing_done_is_listed_as_not_done(doc, done):
    listed = not_done(doc)
    assert [phrase for phrase in done if phrase in listed] == []


def test_the_middleware_has_no_unused_framing_helper():
    from benchmarks.comparisons import views
    from portal import middleware

    assert not hasattr(middleware, "framable_anywhere")
    assert re.search(r"^def framable_anywhere", Path(views.__file__).read_text(), re.M)
