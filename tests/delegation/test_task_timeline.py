"""Sub-agents in the inspector: a session that really ran two children against the stand-in shows a
row per child in `s08 inspect` and a lane per child in the HTML page, what they said escaped; and any
task records a planted log holds show as text in both."""

from __future__ import annotations

import io
import json

from hypothesis import HealthCheck, given, settings, strategies as st
from rich.console import Console

from session.timeline import read_timeline
from standin.conversations import Conversations
from support.hostile_logs import Tags
from ui.session_commands import write_html
from ui.timeline_html import timeline_html
from ui.timeline_view import timeline_view

HOSTILE = "peek \x1b[2J<script>alert(1)</script>"


def two_children(app_for, standin, workspace):
    (workspace / "notes.txt").write_text("the answer is 42\n")
    standin.brain = Conversations({
        "PARENT": [{"tool_calls": [{"name": "task", "input": {"description": "read notes", "prompt": "CHILD-A: read"}},
                                   {"name": "task", "input": {"description": HOSTILE, "prompt": "CHILD-B: fail",
                                                              "agent": "explore"}}]},
                   {"text": "both came back"}],
        "CHILD-A": [{"tool_calls": [{"name": "read_file", "input": {"path": "notes.txt"}}]},
                    {"text": "42"}],
        "CHILD-B": [{"error": 400, "message": "bad things"}]})
    app, _events = app_for()
    assert app.turn("PARENT: ask two").ok
    return read_timeline(app.messages.log.path)


def test_the_terminal_view_has_a_row_per_child_where_it_started(app_for, standin, workspace):
    timeline = two_children(app_for, standin, workspace)
    assert [(c.n, c.after, c.status, c.requests) for c in timeline.children] == [(1, 1, "done", 2), (2, 1, "failed", 0)]
    assert timeline.children[0].peak and timeline.children[0].compactions == 0
    out = io.StringIO()
    timeline_view(Console(file=out, width=240), timeline)
    text = out.getvalue()
    lines = text.splitlines()
    rows = [i for i, line in enumerate(lines) if line.strip().startswith(("1 ", "2 "))]
    first = next(i for i, line in enumerate(lines) if "↳ task 1" in line)
    assert rows[0] < first < rows[1]                       # between request 1 (the task calls) and request 2
    assert "general  read notes  2 requests · peak" in lines[first] and "0 compactions" in lines[first]
    assert lines[first].rstrip().endswith("done  .transcripts/" + timeline.children[0].transcript.split("/")[-1])
    second = next(line for line in lines if "↳ task 2" in line)
    assert "explore" in second and "0 requests" in second and "failed" in second
    assert "\x1b" not in text and "peek ^[[2J<script>alert(1)</script>" in second    # shown, harmless
    assert "sub-agents 2" in lines[0]


def test_the_page_has_a_lane_per_child_and_their_text_stays_text(app_for, standin, workspace, tmp_path):
    timeline = two_children(app_for, standin, workspace)
    page_path = tmp_path / "timeline.html"
    write_html(timeline, workspace, page_path)
    page = page_path.read_text()
    parsed = Tags()
    parsed.feed(page)
    lanes = [a for t, a in parsed.tags if t == "g" and a.get("class", "").startswith("lane")]
    assert [(a["data-task"], a["data-after"], a["data-status"], a["class"]) for a in lanes] == [
        ("1", "1", "done", "lane"), ("2", "1", "failed", "lane bad")]
    assert [t for t, _ in parsed.tags].count("script") == 1 and "alert(1)</script>" not in page
    text = "".join(parsed.text)
    assert "task 1 general: read notes · 2 requests · peak" in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "\x1b" not in page.replace("\\u001b", "")
    assert "2 sub-agents" in text and parsed.tags.count(("table", {"id": "children"})) == 1

values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
                      lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                      max_leaves=6)
task_records = st.fixed_dictionaries({"t": st.just("task"), "n": st.integers(-2, 4) | values,
                                      "e": st.sampled_from(["start", "report", "other"]) | values},
                                     optional={k: values | st.text(alphabet="<>&\"'\x1b\x07\n\x9b a") for k in
                                               ("agent", "description", "transcript", "status", "usage", "requests",
                                                "peak", "compactions", "cost", "seconds")})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(task_records, max_size=8))
def test_any_task_records_in_a_log_show_as_text_in_both_views(tmp_path, records):
    log = tmp_path / "20261201-101010-abcdef.jsonl"
    usage = {"t": "usage", "n": 1, "u": {"input_tokens": 10, "output_tokens": 1}, "p": "answer"}
    log.write_text("".join(json.dumps(r) + "\n" for r in [{"t": "session", "id": log.stem}, usage, *records, usage]))
    timeline = read_timeline(log)
    out = io.StringIO()
    timeline_view(Console(file=out, width=200), timeline)
    assert "\x1b" not in out.getvalue() and "\x07" not in out.getvalue() and "\x9b" not in out.getvalue()
    page = timeline_html(timeline, [])
    parsed = Tags()
    parsed.feed(page)
    assert [t for t, _ in parsed.tags].count("script") == 1 and not any(t == "img" for t, _ in parsed.tags)
    assert "\x1b" not in page and "\x9b" not in page
    assert len([a for t, a in parsed.tags if t == "g" and a.get("class", "").startswith("lane")]) == len(timeline.children)
