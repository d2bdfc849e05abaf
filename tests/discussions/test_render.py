"""The one restricted renderer: quotes fold, attributions and signatures are marked, all escaped."""

import re

from discussions.quoting import attribution_author, quote_for_reply
from discussions.render import render_attachment_text, render_body

MAIL = ("""On Mon, 11 Feb 2008, Olof Example wrote:
> Loop to 1M:
> 2.6.22\t\ttime 4015 ms
> 2.6.24\t\ttime 10765 ms
> > older text
> > more older text
>
> see http://example.org/a?b=1&c=<2>.

Same here:

2.6.24-rc7      time 254 ms
2.6.24-rc7      time 293 ms

""" "-- \nJan  <jan@example.com>")


def test_quotes_fold_into_details_labelled_with_author_and_line_count():
    html = render_body(MAIL)
    outer = re.search(r'<details class="quote level-0"( open)?><summary>'
                      r'<span class="quote-who">([^<]*)</span> '
                      r'<span class="quote-lines">(\d+) lines</span>', html)
    assert outer and outer.group(2) == "Olof Example" and outer.group(3) == "7"
    assert outer.group(1) is None  # seven lines: folded until the reader opens it
    assert html.count("<details") == 2  # the nested `> >` block is its own fold
    assert '<span class="quote-lines">2 lines</span>' in html


def test_short_quotes_stay_open():
    assert "<details class=\"quote level-0\" open>" in render_body("> one line\n\nreply")


def test_only_long_quotes_fold_whatever_their_depth():
    two = "On Mon, 11 Feb 2008, Ingo Molnar wrote:\n> does 2.6.24 regress?\n> numbers?\n\nYes."
    assert '<details class="quote level-0" open>' in render_body(two)
    six = "\n".join(f"> line {i}" for i in range(6)) + "\n\nok"
    assert '<details class="quote level-0" open>' in render_body(six)
    seven = "\n".join(f"> line {i}" for i in range(7)) + "\n\nok"
    assert '<details class="quote level-0">' in render_body(seven)
    nested = "> > two nested\n> > lines\n> reply\n\nanswer"
    assert '<details class="quote level-1" open>' in render_body(nested)


def test_attribution_signature_and_fixed_width_text():
    html = render_body(MAIL)
    assert '<span class="attribution">On Mon, 11 Feb 2008, Olof Example wrote:</span>' in html
    assert re.search(r'<pre class="mail-signature">-- \nJan  &lt;jan@example.com&gt;</pre>',
                     html)
    assert "2.6.24-rc7      time 254 ms" in html  # spacing kept inside <pre>
    assert '<pre class="mail-text">' in html


def test_urls_link_escaped_and_nofollow_and_only_http():
    html = render_body("see http://example.org/a?b=1&c=<2>. and javascript:alert(1) x")
    assert ('<a href="http://example.org/a?b=1&amp;c=" rel="nofollow noopener noreferrer">'
            'http://example.org/a?b=1&amp;c=</a>&lt;2&gt;.') in html
    assert "href=\"javascript" not in html


def test_patches_are_monospaced_with_line_classes():
    html = render_body("Patch:\n\ndiff --git a/k b/k\n--- a/k\n+++ b/k\n@@ -1 +1 @@\n-old\n+new")
    assert '<pre class="patch">' in html
    assert '<span class="del">-old</span>' in html and '<span class="add">+new</span>' in html
    code = render_attachment_text("x.c", "text/x-csrc", "if (a < b && c) {}")
    assert code == '<pre class="code">if (a &lt; b &amp;&amp; c) {}</pre>'


def test_everything_is_escaped():
    hostile = ('<script>alert(1)</script>\n> <img src=x onerror=alert(2)>\n'
               'On x, <b onmouseover=alert(3)>Eve</b> wrote:\n> "quoted" & \'single\'')
    html = render_body(hostile)
    assert "<script" not in html and "<img" not in html and "<b " not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(2)&gt;" in html


def test_deep_nesting_is_capped_not_recursed_forever():
    html = render_body(">" * 500 + " deep")
    assert html.count("<details") <= 14 and "deep" in html


def test_attribution_lines_people_write():
    assert attribution_author("On Mon, Feb 11, 2008 at 10:00AM +0100, Ingo Molnar wrote:") \
        == "Ingo Molnar"
    assert attribution_author("* Ingo Molnar <mingo@elte.hu> wrote:") == "Ingo Molnar"
    assert attribution_author("Quoting Jan Kara (jack@suse.cz):") == "Jan Kara"
    assert attribution_author("time 254 ms") is None
    assert attribution_author("> On x, Y wrote:") is None


def test_reply_with_quote_prequotes_under_an_attribution_and_drops_the_signature():
    from datetime import UTC, datetime

    text = quote_for_reply(author="Olof Example", date=datetime(2008, 2, 11, 10, tzinfo=UTC),
                           body="time 5 ms\n\n> older\n-- \nOlof")
    assert text == ("On Mon, 11 Feb 2008 10:00, Olof Example wrote:\n"
                    "> time 5 ms\n>\n> > older\n\n")
    assert attribution_author(text.splitlines()[0]) == "Olof Example"


def test_stored_rendering_is_used_only_while_the_renderer_version_matches(db, poster):
    from discussions import services
    from discussions.models import Post
    from discussions.render import RENDER_VERSION, post_body_html

    services.thread_create(user=poster, subject="s", body="> q\nhello <b>")
    post = Post.objects.get()
    assert post.render_version == RENDER_VERSION and "<details" in post.body_html
    post.body_html = '<div class="mail-body">kept</div>'
    assert post_body_html(post) == '<div class="mail-body">kept</div>'
    post.render_version = RENDER_VERSION - 1  # an older renderer's output is never shown
    assert "hello &lt;b&gt;" in post_body_html(post) and "kept" not in post_body_html(post)
