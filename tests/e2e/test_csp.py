"""Pages carry a Content-Security-Policy and work under it: no violation reported by Chromium
while charts draw, the builder computes, the API docs load."""

import pytest

from benchmarks.comparisons.spec import parse_spec
from benchmarks.services.comparisons import comparison_create
from tests.factories import make_run

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

RECORD_VIOLATIONS = """
window.__csp = [];
document.addEventListener('securitypolicyviolation',
  e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI + ' ' + e.sourceFile));
"""


@pytest.fixture
def strict_page(browser, live_server, django_user_model):
    """A signed-in page recording every CSP violation the browser reports."""
    from django.conf import settings
    from django.test import Client

    context = browser.new_context(base_url=live_server.url, bypass_csp=False)
    user = django_user_model.objects.create_user("csp-user", password="a-long-test-password")
    client = Client()
    client.force_login(user)
    context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "url": live_server.url,
                          "value": client.cookies[settings.SESSION_COOKIE_NAME].value}])
    page = context.new_page()
    page.js_errors = []
    page.on("pageerror", lambda exc: page.js_errors.append(str(exc)))
    page.console_errors = []  # failed loads (a missing static file, the favicon) land here too
    page.on("console", lambda msg: msg.type == "error" and page.console_errors.append(
        f"{page.url}: {msg.text}"))
    page.add_init_script(RECORD_VIOLATIONS)
    yield page
    context.close()


@pytest.fixture
def comparison():
    runs = [make_run(kernel, [base + i for i in range(3)], params={"loops": loops})
            for kernel, base in (("2.6.22", 3300.0), ("2.6.24", 8900.0))
            for loops in (1000, 10000)]
    return comparison_create(spec=parse_spec({"title": "csp", "runs": [r.pk for r in runs],
                                              "x": "param.loops", "series": "kernel"}))


def visit(page, path: str, ready: str) -> list[str]:
    response = page.goto(path)
    assert "script-src 'self'" in response.headers["content-security-policy"]
    page.wait_for_selector(ready, timeout=20000)
    page.wait_for_timeout(300)  # late violations (a lazily compiled chart) are reported too
    return page.evaluate("window.__csp")


def test_pages_work_under_the_policy(strict_page, comparison):
    page = strict_page
    seen = {
        "comparison": visit(page, f"/c/{comparison.slug}/",
                            "#comparison-chart[data-rendered='1'] .main-svg"),
        "builder": visit(page, "/compare/?benchmark=threadtest",
                         "#builder-chart[data-rendered='1']"),
        "embed": visit(page, f"/c/{comparison.slug}/embed", "#comparison-chart .main-svg"),
        "upload": visit(page, "/upload/", "form"),
        "simulation form": visit(page, "/simulations/new/", "form"),
        "api docs": visit(page, "/api/docs/", ".swagger-ui .opblock"),
    }
    assert {name: found for name, found in seen.items() if found} == {}
    assert page.js_errors == []
    assert [e for e in page.console_errors if "Content Security Policy" not in e] == []


def test_the_policy_blocks_an_injected_inline_script(strict_page, comparison):
    page = strict_page
    page.goto(f"/c/{comparison.slug}/")
    page.evaluate("""() => { const s = document.createElement('script');
        s.textContent = 'window.__ran = 1'; document.body.appendChild(s); }""")
    assert page.evaluate("window.__ran") is None
    assert any(v.startswith("script-src") for v in page.evaluate("window.__csp"))
