"""Hostile text through the one renderer: whatever a mail or a post holds, the only markup in a
post's HTML is the renderer's own, and quotes still fold."""

import random
from datetime import UTC, datetime
from html.parser import HTMLParser

import pytest
from django.utils.safestring import SafeString

from discussions.boxes import post_box
from discussions.models import Attachment, Post, PostRun
from discussions.render import join, plain, render_body, tag
from discussions.selectors import MAX_INDENT

# Every element and attribute the renderer and the post box emit, and nothing else.
ALLOWED = {
    "article": {"class", "id", "data-depth"}, "header": {"class"}, "footer": {"class"},
    "a": {"class", "href", "rel"}, "span": {"class"}, "time": set(), "div": {"class"},
    "pre": {"class"}, "details": {"class", "open"}, "summary": set(), "p": {"class"},
    "figure": {"class"}, "figcaption": set(),
}
HREF_STARTS = ("http://", "https://", "/m/", "/runs/", "/compare/?runs=")


class MarkupCensus(HTMLParser):
    """What a browser would build from the HTML: elements with their attributes, and the text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.elements, self.text, self.open = [], [], []

    def handle_starttag(self, name, attrs):
        self.elements.append((name, dict(attrs)))
        self.open.append(name)

    def handle_endtag(self, name):
        assert self.open and self.open.pop() == name, f"</{name}> closes nothing it opened"

    def handle_data(self, data):
        self.text.append(data)

    def handle_comment(self, data):
        raise AssertionError(f"a comment in the output: {data!r}")

    def handle_decl(self, decl):
        raise AssertionError(f"a declaration in the output: {decl!r}")


def census(html: str) -> MarkupCensus:
    parser = MarkupCensus()
    parser.feed(html)
    parser.close()
    assert parser.open == [], f"left open: {parser.open}"
    for name, attrs in parser.elements:
        assert name in ALLOWED, f"<{name}> is not the renderer's markup"
        assert set(attrs) <= ALLOWED[name], f"<{name} {attrs}> has a foreign attribute"
        if "href" in attrs:
            assert attrs["href"].startswith(HREF_STARTS), attrs["href"]
    assert "\x00" not in html
    return parser


HOSTILE_LINES = [
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(2)>',
    "' onmouseover='alert(3)",
    "On Mon, <b onmouseover=alert(4)>Eve</b> <eve@x\"y> wrote:",
    "> <svg/onload=alert(5)>",
    "> > <iframe src=javascript:alert(6)>",
    "see http://example.org/?a=1&b=2\"onmouseover=\"alert(7) and https://x.org/<script>",
    "javascript:alert(8) data:text/html,<script>alert(9)</script>",
    "nul\x00byte and \x1b[31mcolour\x1b[0m and \x7f and \x0b",
    "<!-- comment --> <![CDATA[ x ]]> <!DOCTYPE html> &amp; &lt;script&gt; &#60;b&#62;",
    "diff --git a/<x> b/<x>",
    "+<script>added</script>",
    "-- ",
    "</pre></div></details><script>alert(10)</script>",
]


def test_hostile_body_keeps_only_the_renderers_markup_and_its_text_survives():
    body = "\n".join(["Hello", *HOSTILE_LINES[:10]])
    html = render_body(body)
    seen = census(html)
    text = "".join(seen.text)
    for needle in ("<script>alert(1)</script>", '"><img src=x onerror=alert(2)>',
                   "<svg/onload=alert(5)>", "<iframe src=javascript:alert(6)>",
                   "&amp; &lt;script&gt; &#60;b&#62;"):
        assert needle in text  # shown to the reader as written, never run
    assert "nul\ufffdbyte" in text and "\ufffd[31mcolour" in text
    links = [attrs["href"] for name, attrs in seen.elements if name == "a"]
    assert links == ["http://example.org/?a=1&b=2", "https://x.org/"]  # a link ends at a quote
    assert 'href="http://example.org/?a=1&amp;b=2"' in html


def test_quotes_still_fold_around_hostile_text():
    attribution = 'On Mon, 11 Feb 2008, Eve" onmouseover="alert(1) & <b wrote:'
    unquoted = [line for line in HOSTILE_LINES if not line.startswith(">")]
    # the nested quote comes first: inside the quote, the `-- ` line starts a signature
    quoted = ["> > nested <b>", "> > again"] + [f"> {line}" for line in unquoted]
    html = render_body("\n".join([attribution, *quoted, "", "my answer <i>"]))
    seen = census(html)
    details = [attrs for name, attrs in seen.elements if name == "details"]
    assert [d["class"] for d in details] == ["quote level-0", "quote level-1"]
    assert "open" not in details[0] and "open" in details[1]  # 14 lines fold, 2 stay open
    who = html.split('<span class="quote-who">', 1)[1].split("</span>", 1)[0]
    assert who == "Eve&quot; onmouseover=&quot;alert(1) &amp; &lt;b"  # the author, escaped
    assert f"{len(quoted)} lines" in html and "my answer &lt;i&gt;" in html


def test_long_lines_and_deep_quotes_stay_escaped_and_bounded():
    long_line = "<a" * 50_000 + " http://example.org/" + "x" * 50_000
    html = render_body(f"On x, y wrote:\n> {long_line}\n" + ">" * 400 + " <b>deep</b>")
    seen = census(html)
    assert sum(name == "details" for name, _ in seen.elements) <= 14
    assert "".join(seen.text).count("<a") == 50_000
    assert "&lt;b&gt;deep&lt;/b&gt;" in html


def test_random_hostile_text_never_escapes_the_renderer():
    alphabet = ["<", ">", "&", '"', "'", "=", "/", " ", "\n", "\x00", "\r", "-- ", "> ",
                "script", "onerror", "http://a.b/", "wrote:", "On x, ", "diff --git a b",
                "+", "-", "@@", "`", "\t", "\u202e", "&#x3c;"]
    rng = random.Random(22)
    for _ in range(300):
        body = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 80)))
        census(render_body(body))


def test_a_body_without_quotes_comes_back_as_its_own_text():
    body = "a <b> & \"c\" 'd'\nhttp://e.org/?f=1&g=<2>\x00\n\n  indented\ttab"
    seen = census(render_body(body))
    assert "".join(seen.text) == body.replace("\x00", "\ufffd")


def test_tag_escapes_values_and_children_it_did_not_make():
    made = tag("a", "<b>", plain("&"), join(["<i>", tag("span", "x")], " "),
               href='/m/"><script>/', class_=SafeString('x" onclick="y'), data_depth=3,
               open=True, rel=None, id=False)
    assert made == ('<a href="/m/&quot;&gt;&lt;script&gt;/" class="x&quot; onclick=&quot;y" '
                    'data-depth="3" open>&lt;b&gt;&amp;&lt;i&gt; <span>x</span></a>')
    for name, attrs in [("a b", {}), ("script>", {}), ("a", {"on click": 1}),
                        ("a", {'x"': 1})]:
        with pytest.raises(ValueError):
            tag(name, **attrs)


def hostile_post(**extra) -> Post:
    payload = '"><script>alert(1)</script>'
    post = Post(pk=5, message_id=f"id{payload}@evil", author=f"Eve {payload}",
                subject=f"Re: {payload}", body="\n".join(HOSTILE_LINES),
                date=datetime(2008, 2, 11, 10, tzinfo=UTC), depth=20, source="mail",
                edited=datetime(2008, 2, 12, tzinfo=UTC), **extra)
    post.__dict__["attachment_list"] = [
        Attachment(position=1, filename=f"{payload}.c", content_type=f'text/x-c"{payload}',
                   size=2048, text="int main() { return 1 < 2; } </pre><script>x</script>"),
        Attachment(position=2, filename="", content_type="application/octet-stream", size=9),
    ]
    post.__dict__["run_link_list"] = [
        PostRun(run_id=7), PostRun(run_id=8, reported_in="upload"),
        PostRun(run_id=9, reported_in=f"first{payload}@evil"),
    ]
    return post


def test_a_hostile_post_box_holds_only_the_renderers_markup():
    html = post_box(hostile_post())
    seen = census(html)
    text = "".join(seen.text)
    assert "Re: \"><script>alert(1)</script>" in text and "Eve \"><script>" in text
    assert "\"><script>alert(1)</script>.c" in text and "</pre><script>x</script>" in text
    assert "(already reported in <first\"><script>alert(1)</script>@evil>)" in text
    hrefs = [attrs["href"] for name, attrs in seen.elements if name == "a" and "href" in attrs]
    assert "/m/id%22%3E%3Cscript%3Ealert(1)%3C/script%3E@evil/" in hrefs
    assert "/m/first%22%3E%3Cscript%3Ealert(1)%3C/script%3E@evil/" in hrefs
    assert "/compare/?runs=7,8,9" in hrefs and "/runs/9/" in hrefs
    article = seen.elements[0]
    assert article == ("article", {"class": f"post indent-{MAX_INDENT}", "id": "m-5",
                                   "data-depth": "20"})
    assert "(depth 20)" in text and "unnamed attachment" in text


def test_a_deleted_hostile_post_shows_neither_its_text_nor_its_attachments():
    seen = census(post_box(hostile_post(deleted=True)))
    text = "".join(seen.text)
    assert "This message was deleted." in text and "alert(2)" not in text
    assert not [name for name, _ in seen.elements if name in ("figure", "pre", "details")]
    assert "edited" not in text
