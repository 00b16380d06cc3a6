"""The timeline page drawn by a real browser (headless Chromium): s08's script ran, the chart is there, no
injected script ran."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ui.session_commands import write_html
from session.timeline import read_timeline
from support.hostile_logs import Tags, hostile_session

BROWSER = next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)


def run_browser(profile: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                           "--disable-component-update", "--disable-sync", "--no-first-run",
                           f"--user-data-dir={profile}", *args], capture_output=True, timeout=120)


@pytest.mark.skipif(BROWSER is None, reason="no headless browser here (.ci/run installs Debian's chromium)")
def test_a_real_browser_draws_the_chart_and_runs_no_injected_script(workspace, tmp_path):
    log = hostile_session(workspace)
    page_path = tmp_path / "timeline.html"
    write_html(read_timeline(log), workspace, page_path)
    dom = run_browser(tmp_path / "profile", "--dump-dom", page_path.as_uri()).stdout.decode()
    parsed = Tags()
    parsed.feed(dom)
    by_tag: dict[str, list[dict]] = {}
    for tag, attrs in parsed.tags:
        by_tag.setdefault(tag, []).append(attrs)
    svg = by_tag["svg"][0]
    assert svg.get("data-rendered") == "1"                                  # s08's script ran
    assert len([c for c in by_tag["circle"] if "point" in c.get("class", "")]) == 6
    assert any(p.get("id") == "context" for p in by_tag["polyline"]) and any(p.get("id") == "cost" for p in by_tag["polyline"])
    assert any(line.get("id") == "limit" for line in by_tag["line"])
    markers = [g for g in by_tag["g"] if g.get("class") == "marker"]
    assert [m["data-layer"] for m in markers] == ["snip_compact", "compacted"]
    assert "6 requests · peak 9,200 tokens (92% of the limit) · 2 compaction events" in dom
    assert len(by_tag["script"]) == 1 and "img" not in by_tag and "alert(1)" in dom   # the injection stayed text
    assert len(by_tag["details"]) >= 3

    shot = tmp_path / "shot.png"
    run_browser(tmp_path / "profile", f"--screenshot={shot}", "--window-size=1000,700", page_path.as_uri())
    png = shot.read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 10_000
    import zlib  # not one colour: the rows of pixels differ
    chunks, at = [], 8
    while at < len(png):
        size = int.from_bytes(png[at:at + 4], "big")
        if png[at + 4:at + 8] == b"IDAT":
            chunks.append(png[at + 8:at + 8 + size])
        at += 12 + size
    raw = zlib.decompress(b"".join(chunks))
    assert len(set(raw[i:i + 64] for i in range(0, len(raw), 4096))) > 20


@pytest.mark.skipif(BROWSER is None, reason="no headless browser here (.ci/run installs Debian's chromium)")
def test_a_real_browser_draws_a_lane_per_sub_agent(app_for, standin, workspace, tmp_path):
    from standin.conversations import Conversations
    standin.brain = Conversations({
        "PARENT": [{"tool_calls": [{"name": "task", "input": {"description": "one", "prompt": "CHILD-A: go"}},
                                   {"name": "task", "input": {"description": "<img src=x onerror=alert(2)>",
                                                              "prompt": "CHILD-B: go"}}]},
                   {"text": "done"}],
        "CHILD-A": [{"text": "a"}], "CHILD-B": [{"text": "b"}]})
    app, _ = app_for()
    assert app.turn("PARENT: two").ok
    page_path = tmp_path / "timeline.html"
    write_html(read_timeline(app.messages.log.path), workspace, page_path)
    dom = run_browser(tmp_path / "profile", "--dump-dom", page_path.as_uri()).stdout.decode()
    parsed = Tags()
    parsed.feed(dom)
    lanes = [a for t, a in parsed.tags if t == "g" and a.get("class") == "lane"]
    assert [a["data-task"] for a in lanes] == ["1", "2"]
    assert [a for t, a in parsed.tags if t == "svg"][0].get("data-rendered") == "1"
    assert not any(t == "img" for t, _ in parsed.tags) and "task 2 general: <img src=x onerror=alert(2)>" in dom.replace("&lt;", "<").replace("&gt;", ">")
