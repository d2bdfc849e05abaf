import subprocess
import sys

import pytest
from django.core.management import call_command
from django.urls import reverse

from benchmarks.models import ApiToken
from benchmarks.services.tokens import token_user
from tests.conftest import ROOT

pytestmark = pytest.mark.django_db


def test_create_api_token_prints_only_a_working_token(capsys, django_user_model):
    call_command("create_api_token", "mingo", "--create-user")
    out = capsys.readouterr().out
    key = out.strip()
    assert out.count("\n") == 1 and key.startswith("sbt_") and " " not in key
    assert token_user(key=key).username == "mingo"
    assert not ApiToken.objects.filter(key_hash__contains=key).exists()


def test_create_api_token_refuses_unknown_user_without_flag():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="--create-user"):
        call_command("create_api_token", "nobody")


def test_settings_page_creates_shows_once_and_revokes_tokens(client, django_user_model):
    user = django_user_model.objects.create_user("peter", password="pw-for-tests-123")
    client.force_login(user)
    client.post(reverse("token-new"), {"name": "laptop"})
    first = client.get(reverse("account-settings")).content.decode()
    token = ApiToken.objects.get(user=user)
    assert token.prefix in first and 'id="new-token"' in first
    second = client.get(reverse("account-settings")).content.decode()
    assert 'id="new-token"' not in second  # shown once only
    client.post(reverse("token-revoke", args=[token.pk]))
    token.refresh_from_db()
    assert token.revoked is not None


def test_users_cannot_revoke_tokens_they_do_not_own(client, django_user_model):
    owner = django_user_model.objects.create_user("owner")
    other = django_user_model.objects.create_user("other")
    token = ApiToken.objects.create(user=owner, prefix="sbt_x", key_hash="0" * 64)
    client.force_login(other)
    assert client.post(reverse("token-revoke", args=[token.pk])).status_code == 404
    token.refresh_from_db()
    assert token.revoked is None


def test_settings_requires_login(client):
    response = client.get(reverse("account-settings"))
    assert response.status_code == 302 and reverse("login") in response["Location"]


def test_csrf_is_enforced_on_forms(django_user_model):
    from django.test import Client

    user = django_user_model.objects.create_user("csrf")
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(user)
    assert strict.post(reverse("token-new"), {"name": "x"}).status_code == 403


@pytest.mark.parametrize(
    "env, variable",
    [
        ({"DEBUG": "0"}, "SECRET_KEY"),
        ({"DEBUG": "perhaps"}, "DEBUG"),
        ({"DATABASE_URL": "nosuchdb://x"}, "DATABASE_URL"),
        ({"SCHEDBENCH_MAX_UPLOAD_MB": "lots"}, "SCHEDBENCH_MAX_UPLOAD_MB"),
        ({"SCHEDBENCH_MAX_UPLOAD_MB": "0"}, "SCHEDBENCH_MAX_UPLOAD_MB"),
    ],
)
def test_bad_settings_fail_loudly_naming_the_variable(env, variable):
    clean = {"PATH": "/usr/bin:/bin", "DJANGO_SETTINGS_MODULE": "portal.settings", **env}
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        env=clean, capture_output=True, text=True, timeout=60, cwd=ROOT,
    )
    assert result.returncode != 0
    last_line = result.stderr.strip().splitlines()[-1]
    assert "ImproperlyConfigured" in last_line and variable in last_line
