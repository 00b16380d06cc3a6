"""The timeline page drawn by a real browser (headless Chromium): s08's script ran, the chart is there, no
injected script ran."""

from __future__ import annotations

import json
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from cli_sessions import write_html
from session.timeline import read_timeline

INJECTION = "</script><script>alert(1)</script><img src=x onerror=alert(2)>"
BROWSER = next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)


class Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def hostile_session(workspace: Path) -> Path:
    """A log whose every field a prompt injection could have written, and a transcript like it."""
    (workspace / ".sessions").mkdir()
    (workspace / ".transcripts").mkdir()
    session = "20261201-101010-abcdef"
    transcript = f".transcripts/{session}-002-summary.jsonl"
    header = {"t": "header", "session": session, "kind": "summary", "trigger": INJECTION, "tokens_before": 9000,
              "tokens_after": 1200, "messages": [0, 3], "of": 4, "time": "2026-12-01T10:10:10"}
    saved = [{"role": "user", "content": INJECTION},
             {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": INJECTION,
                                                "input": {"command": INJECTION}}]},
             {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": INJECTION}]}]
    (workspace / transcript).write_text("".join(json.dumps(r) + "\n" for r in [header, *saved]))
    summary = {"role": "user", "content": [
        {"type": "text", "text": f"[compacted] The conversation so far was summarized to save context; all of it is "
                                 f"in {transcript} (read_file or grep it)."},
        {"type": "text", "text": "Summary of the conversation so far:\n" + INJECTION}]}
    records = [{"t": "session", "id": session, "model": INJECTION, "limit": 10000}]
    for n in range(1, 7):
        records.append({"t": "usage", "n": n, "p": "answer", "model": "claude-sonnet-4-6",
                        "u": {"input_tokens": 200, "cache_read_input_tokens": 1500 * n, "output_tokens": 80}})
        if n == 4:
            records += [{"t": "compaction", "layer": "transcript", "kind": "summary", "trigger": INJECTION,
                         "before": 9000, "path": transcript, "request": 4},
                        {"t": "compaction", "layer": "compacted", "kind": "summary", "trigger": INJECTION,
                         "before": 9000, "after": 1200, "path": transcript, "messages": [0, 3], "of": 4,
                         "request": 4, "text": INJECTION},
                        {"t": "replace", "keep": 0, "tail": [summary]}]
        if n == 2:
            records.append({"t": "compaction", "layer": "snip_compact", "kind": "snip", "trigger": "13 > 12",
                            "before": 3000, "after": 1000, "path": ".transcripts/missing.jsonl", "request": 2})
    log = workspace / ".sessions" / f"{session}.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    return log


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
