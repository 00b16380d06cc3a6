"""`s08 inspect ID --html FILE`: one self-contained page; what the logs say is text, never markup; and
the page drawn by a real browser (headless Chromium, in the slow lane)."""

from __future__ import annotations



from ui.session_commands import write_html
from session.timeline import read_timeline
from support.hostile_logs import INJECTION, Tags, hostile_session


def test_what_the_logs_say_is_text_in_the_page_never_markup(workspace, tmp_path):
    log = hostile_session(workspace)
    page_path = tmp_path / "timeline.html"
    write_html(read_timeline(log), workspace, page_path)
    page = page_path.read_text()
    parsed = Tags()
    parsed.feed(page)
    tags = [t for t, _ in parsed.tags]
    assert tags.count("script") == 1 and "img" not in tags                  # only s08's own script
    assert not any(k.startswith("on") for _, attrs in parsed.tags for k in attrs)
    assert "".join(parsed.text).count(INJECTION) >= 5                       # shown, as text
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "") and "https://" not in page
    script = page[page.index("<script>"):page.index("</script>")]
    assert "alert" not in script and "abcdef" not in script                 # no log text in the script
    assert "Content-Security-Policy" in page and "default-src 'none'" in page


