"""Every setting is read once, in portal/settings.py, through envconfig, and documented."""

import re
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from portal import envconfig

ROOT = Path(__file__).resolve().parent.parent
ENV_READ = re.compile(r"""(?:env_\w+|database_from_url)\(\s*["']([A-Z][A-Z0-9_]+)["']""")


def settings_variables() -> set[str]:
    return set(ENV_READ.findall((ROOT / "portal" / "settings.py").read_text()))


def test_every_variable_is_in_the_readme_table():
    names = settings_variables()
    assert {"DATABASE_URL", "SECURE_HSTS_SECONDS", "SCHEDBENCH_SIMULATION_RESEND"} <= names
    table = (ROOT / "README.md").read_text()
    missing = sorted(name for name in names if f"`{name}`" not in table)
    assert missing == []


def test_the_code_reads_settings_declared_in_settings_py():
    offenders = []
    for path in (ROOT / "benchmarks").rglob("*.py"):
        text = path.read_text()
        if "getattr(settings" in text or "os.environ" in text:
            offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


def test_the_proxy_ssl_header_is_parsed_from_the_environment(monkeypatch):
    monkeypatch.setenv("SECURE_PROXY_SSL_HEADER", "X-Forwarded-Proto=https")
    assert envconfig.env_header("SECURE_PROXY_SSL_HEADER") == ("HTTP_X_FORWARDED_PROTO", "https")
    monkeypatch.setenv("SECURE_PROXY_SSL_HEADER", "https")
    with pytest.raises(ImproperlyConfigured, match="SECURE_PROXY_SSL_HEADER"):
        envconfig.env_header("SECURE_PROXY_SSL_HEADER")
    monkeypatch.delenv("SECURE_PROXY_SSL_HEADER")
    assert envconfig.env_header("SECURE_PROXY_SSL_HEADER") is None


def test_tls_settings_follow_the_environment(tmp_path):
    import os
    import subprocess
    import sys

    env = {**os.environ, "DEBUG": "0", "SECRET_KEY": "x" * 50, "ALLOWED_HOSTS": "example.org",
           "SECURE_SSL_REDIRECT": "1", "SECURE_HSTS_SECONDS": "31536000",
           "SECURE_PROXY_SSL_HEADER": "X-Forwarded-Proto=https",
           "SCHEDBENCH_DATA_DIR": str(tmp_path), "DJANGO_SETTINGS_MODULE": "portal.settings"}
    script = ("from django.conf import settings as s; print(s.SECURE_SSL_REDIRECT, "
              "s.SECURE_HSTS_SECONDS, s.SECURE_PROXY_SSL_HEADER, s.SESSION_COOKIE_SECURE)")
    out = subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT, text=True,
                         capture_output=True, check=True).stdout
    assert out.split("\n")[0] == "True 31536000 ('HTTP_X_FORWARDED_PROTO', 'https') True"


def test_the_embedded_broker_hands_out_queued_messages_without_a_second_each(tmp_path):
    """kombu's filesystem transport waits its polling interval before each next message once
    the worker is free again: at its default of 1 s a sweep's points ran 1 s apart, and the
    demo's 57 detection tasks held a new user's first simulation for a minute."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "CELERY_BROKER_URL"}
    env.update({"SCHEDBENCH_DATA_DIR": str(tmp_path), "DJANGO_SETTINGS_MODULE": "portal.settings"})
    script = ("from django.conf import settings as s; print(s.CELERY_BROKER_URL, "
              "s.CELERY_BROKER_TRANSPORT_OPTIONS['polling_interval'])")
    out = subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT, text=True,
                         capture_output=True, check=True).stdout.split()
    assert out[0] == "filesystem://"
    assert float(out[1]) <= 0.1


def test_regression_and_trace_settings_come_from_the_environment(tmp_path):
    """REGRESSION_* (regressions.jobs) and TRACE_INLINE_KB (traces.jobs) are declared in
    settings.py from SCHEDBENCH_*; after django.setup() every worker's sweep and watchdog are
    connected and every app's tasks are registered by name."""
    import json
    import os
    import subprocess
    import sys

    env = {**os.environ, "SCHEDBENCH_DATA_DIR": str(tmp_path),
           "DJANGO_SETTINGS_MODULE": "portal.settings",
           "SCHEDBENCH_REGRESSION_MAX_ATTEMPTS": "7", "SCHEDBENCH_REGRESSION_RETRY_SECONDS": "5",
           "SCHEDBENCH_REGRESSION_RESEND_SECONDS": "9999", "SCHEDBENCH_TRACE_INLINE_KB": "3"}
    script = """if True:
        import json, django
        django.setup()
        from celery.signals import worker_ready
        from portal.celery import app
        from regressions import jobs
        from traces.jobs import INGEST_TASK, inline_limit_bytes
        print(json.dumps({
            "attempts": jobs.max_attempts(), "retry": [jobs.retry_delay(n) for n in (1, 3)],
            "resend": jobs.resend_seconds(), "sweep": jobs.sweep_seconds(),
            "stale": jobs.stale_seconds(), "inline": inline_limit_bytes(),
            "sweeps": sorted(key[0] for key, _ in worker_ready.receivers
                             if isinstance(key[0], str)),  # (dispatch_uid, sender) keys
            "trace_task": INGEST_TASK in app.tasks}))
    """
    out = subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT, text=True,
                         capture_output=True, check=True).stdout
    found = json.loads(out.strip().splitlines()[-1])
    assert found["attempts"] == 7 and found["retry"] == [5, 20] and found["resend"] == 9999
    assert (found["sweep"], found["stale"]) == (60, 900)
    assert found["inline"] == 3 * 1024 and found["trace_task"]
    assert {"regression-sweep", "simulation-watchdog"} <= set(found["sweeps"])
