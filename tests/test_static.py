"""The production static storage: hashed names, gzip copies, far-future caching (the Plotly.js
bundle is 1.6 MB uncompressed; a first visit should not download that)."""

import gzip

import pytest
from django.core.management import call_command
from django.test import Client

pytestmark = pytest.mark.slow


PRODUCTION_STORAGE = {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"}


@pytest.fixture(scope="module")
def collected_root(tmp_path_factory):
    """collectstatic once for the module (it gzips every file: seconds)."""
    from django.conf import settings
    from django.test import override_settings

    root = tmp_path_factory.mktemp("static")
    storages = {**settings.STORAGES, "staticfiles": PRODUCTION_STORAGE}
    with override_settings(STATIC_ROOT=root, STORAGES=storages):
        call_command("collectstatic", interactive=False, verbosity=0)
    return root


@pytest.fixture
def collected(settings, collected_root):
    settings.STATIC_ROOT = collected_root
    settings.STORAGES = {**settings.STORAGES, "staticfiles": PRODUCTION_STORAGE}
    settings.DEBUG = False
    return collected_root


def test_plotly_is_served_hashed_compressed_and_cached_for_ever(collected):
    from django.contrib.staticfiles.storage import staticfiles_storage

    url = staticfiles_storage.url("vendor/plotly-portal.min.js")
    assert url.startswith("/static/vendor/plotly-portal.min.") and url.count(".") == 3
    original = (collected / "vendor" / "plotly-portal.min.js").read_bytes()
    response = Client().get(url, HTTP_ACCEPT_ENCODING="gzip, deflate")
    assert response.status_code == 200
    assert response["Content-Encoding"] == "gzip"
    body = b"".join(response.streaming_content)
    assert len(body) < len(original) / 3 and gzip.decompress(body) == original
    cache = response["Cache-Control"]
    assert "immutable" in cache and "max-age=315360000" in cache
    # an old link still works, briefly cached
    plain = Client().get("/static/vendor/plotly-portal.min.js")
    assert plain.status_code == 200 and "immutable" not in plain["Cache-Control"]


@pytest.mark.django_db
def test_pages_link_the_hashed_names(collected, client):
    from tests.factories import make_run

    make_run("2.6.24", [1.0])
    page = client.get("/").content.decode()
    assert "/static/css/schedbench." in page and "/static/css/schedbench.css" not in page
