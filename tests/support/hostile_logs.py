"""A session log and a transcript whose every field a prompt injection could have written (the inspector's
page must show them as text), and a parser of the tags a page holds."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

INJECTION = "</script><script>alert(1)</script><img src=x onerror=alert(2)>"


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
