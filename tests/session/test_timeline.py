"""Files that explain themselves and the inspector: a session with every kind of compaction, against
the stand-in over real HTTP, read back by the inspector (timeline.py) and shown (ui/timeline_view.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from rich.console import Console

from compaction.window import CacheClock
from session.costs import TokenTally, price_of
from support.helpers import Model
from llm.usage import Usage
from standin import count_request_tokens
from storage import parse_name, read_transcript
from session.timeline import event_detail, read_timeline
from ui.timeline_view import event_view, timeline_view

SETTINGS = dict(context_limit=6000, snip_max_messages=12, snip_target_messages=8, micro_clear_at_least=0,
                keep_recent=1, persist_threshold=3000, round_budget=4000, preserve_result_tools="",
                background_compact="off")     # each kind as the blocking design does it, in its order
FAKE_NOW = [1000.0]


def records(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def bash_round(i: int, size: int = 300) -> dict:
    return {"tool_calls": [{"name": "bash", "input": {"command": f"seq 1 {size} # step {i}"}}]}


def every_kind_of_compaction(app_for, standin, workspace):
    """One session that snips, persists, clears, summarizes (auto, cold, manual) and recovers from
    "prompt is too long"; returns (app, log path)."""
    replies = [bash_round(0, 3000), {"text": "seen the big one"}]       # tool_result_budget
    for i in range(1, 9):                                              # micro_compact, snip_compact
        replies.append(bash_round(i))
    replies += [{"text": "many rounds done"}, {"text": "at length: " + "detail " * 5000},   # then over the limit:
                {"text": "short answer"}, {"text": "more: " + "word " * 1500},             # an auto summary
                {"text": "after the pause " + "word " * 1500}]                              # cold
    replies += [{"text": f"answer {i} " + "detail " * 250} for i in range(3)] + [{"text": "recovered"}]
    standin.brain = Model(*replies, summaries=[{"text": "SUMMARY: steps so far."}])
    app, events = app_for(**SETTINGS)
    app.agent.compactor.cache = CacheClock(lambda: FAKE_NOW[0])
    for text in ("run the steps", "go on with many rounds", "explain at length", "go on", "tell more"):
        assert app.turn(text).ok
    FAKE_NOW[0] += 3600                                                # the prompt cache expired
    assert app.turn("after a pause: go on").ok
    app.compact("the steps")                                          # manual
    for i in range(2):
        assert app.turn(f"question {i}").ok
    standin.context_window = count_request_tokens(standin.requests[-1]) + 50   # the next prompt won't fit
    assert app.turn("question 2").ok
    return app, app.messages.log.path


def test_a_session_with_every_kind_of_compaction_writes_files_whose_headers_match_its_log(app_for, standin, workspace):
    app, log = every_kind_of_compaction(app_for, standin, workspace)
    session = log.stem
    logged = records(log)
    compactions = {r["path"]: r for r in logged if r["t"] == "compaction" and r.get("path")}
    transcripts = sorted((workspace / ".transcripts").glob("*.jsonl"))
    kinds = set()
    for path in transcripts:
        name = parse_name(path.name)
        assert name is not None and name[0] == session, path.name
        header, messages = read_transcript(path)
        record = compactions[f".transcripts/{path.name}"]
        assert header["session"] == session and header["kind"] == name[2] == record["kind"]
        assert (header["trigger"], header["tokens_before"], header["tokens_after"], header["messages"], header["of"]) \
            == (record["trigger"], record["before"], record["after"], record["messages"], record["of"])
        first, end = header["messages"]
        if header["kind"] == "snip":
            assert len(messages) == end - first > 0                     # one snip, one file
        else:
            assert len(messages) == header["of"] and end <= header["of"] and header["tokens_after"] > 0
        kinds.add(header["kind"])
    assert {"snip", "summary", "cold", "manual", "reactive"} <= kinds
    ordinals = [parse_name(p.name)[1] for p in sorted(workspace.glob(".t*/*-*-*.*"))]
    assert len(ordinals) == len(set(ordinals))                          # one counter over both folders

    outputs = [r for r in logged if r["t"] == "output"]
    saved = sorted((workspace / ".task_outputs").glob("*.txt"))
    assert saved and {f".task_outputs/{p.name}" for p in saved} == {r["path"] for r in outputs}
    for r in outputs:
        assert r["tool"] == "bash" and r["command"].startswith("seq 1 3000") and r["exit_code"] == 0
        assert r["size"] == (workspace / r["path"]).stat().st_size and r["request"] >= 1
    text = json.dumps([m for m in app.messages])
    for path in re.findall(r"\.task_outputs/[\w.-]+\.txt", text):
        assert (workspace / path).is_file()                             # the model-visible path is the file
    assert {r["layer"] for r in logged if r["t"] == "compaction"} >= {"tool_result_budget", "micro_compact",
                                                                      "snip_compact", "compacted", "reactive_compact"}


def test_the_inspector_rows_match_the_stand_ins_request_log(app_for, standin, workspace):
    app, log = every_kind_of_compaction(app_for, standin, workspace)
    timeline = read_timeline(log, 6000)
    assert len(timeline.requests) == len(standin.usages)
    total = 0.0
    for row, usage in zip(timeline.requests, standin.usages):
        u = Usage.of(usage)
        assert row.context == usage["input_tokens"] + usage.get("cache_read_input_tokens", 0) + \
            usage.get("cache_creation_input_tokens", 0)
        assert (row.reads, row.writes, row.output) == (u.cache_read, u.cache_write, usage["output_tokens"])
        one = TokenTally()
        one.add(usage, price=price_of(app.settings.model_id))
        total += one.cost
        assert row.cost == pytest.approx(one.cost) and row.total == pytest.approx(total)
    assert timeline.cost == pytest.approx(app.ledger.session.cost)
    assert any(r.hit and r.hit > 0.5 for r in timeline.requests)
    # the events sit where they happened: the first summary right before the summary call's row
    summary = next(e for e in timeline.events if e.kind == "summary")
    assert timeline.requests[summary.after].purpose == "summary" and summary.summary.startswith("SUMMARY")
    assert {e.layer for e in timeline.events} >= {"snip_compact", "tool_result_budget", "micro_compact", "compacted",
                                                  "reactive_compact"}
    console = Console(record=True, width=160, color_system=None)
    timeline_view(console, timeline)
    shown = console.export_text()
    assert f"session {log.stem}" in shown and "snip_compact" in shown and "→" in shown
    snip = next(e for e in timeline.events if e.layer == "snip_compact")
    console = Console(record=True, width=160, color_system=None)
    event_view(console, event_detail(timeline, workspace, snip.n))
    shown = console.export_text()
    assert "kind: \"snip\"" in shown and "● bash  seq 1 300" in shown and '{"role"' not in shown


def test_a_crashed_session_with_a_torn_last_line_still_inspects(workspace):
    log = workspace / ".sessions" / "20261201-101010-abcdef.jsonl"
    log.parent.mkdir()
    usage = {"input_tokens": 100, "cache_read_input_tokens": 900, "output_tokens": 50}
    lines = [{"t": "session", "id": log.stem, "model": "claude-sonnet-4-6", "limit": 5000},
             {"t": "append", "m": {"role": "user", "content": "hi"}},
             {"t": "usage", "n": 1, "u": usage, "p": "answer"},
             {"t": "some_later_kind", "x": 1},
             {"t": "compaction", "layer": "snip_compact", "kind": "snip", "trigger": "t", "before": 900, "after": 300,
              "path": ".transcripts/x.jsonl", "request": 1},
             {"t": "usage", "n": 3, "u": usage, "p": "answer"}]
    log.write_text("".join(json.dumps(r) + "\n" for r in lines) + '{"t": "usage", "n": 4, "u": {"inp')
    t = read_timeline(log)
    assert [r.context for r in t.requests] == [1000, 1000] and t.limit == 5000
    assert [(e.layer, e.after, e.before, e.after_tokens) for e in t.events] == [("snip_compact", 1, 900, 300)]
    assert any("cut off" in n for n in t.notices)
    assert [type(i).__name__ for i in t.items()] == ["Request", "Event", "Request"]


def test_an_old_format_folder_still_inspects(workspace):
    """Before session-named files: no compaction records, transcripts named transcript_/snipped_…, no header."""
    (workspace / ".transcripts").mkdir()
    old_snip = ".transcripts/snipped_20261101_101010_ab12cd.jsonl"
    old_summary = ".transcripts/transcript_20261101_101500_ef34ab.jsonl"
    (workspace / old_snip).write_text(json.dumps({"role": "user", "content": "the snipped request"}) + "\n")
    (workspace / old_summary).write_text(json.dumps({"role": "assistant", "content": [
        {"type": "text", "text": "an old answer"}]}) + "\n")
    marker = {"role": "user", "content": [{"type": "text", "text": f"[snipped 4 messages → {old_snip}]"}]}
    summary = {"role": "user", "content": [
        {"type": "text", "text": f"[compacted] The conversation so far was summarized to save context; all of it is "
                                 f"in {old_summary} (read_file or grep it when you need exact details)."},
        {"type": "text", "text": "Summary of the conversation so far:\nOLD SUMMARY"}]}
    usage = {"input_tokens": 2000, "output_tokens": 10}
    log = workspace / ".sessions" / "20261101-101010-a1b2c3.jsonl"
    log.parent.mkdir()
    lines = [{"t": "session", "id": log.stem, "model": "claude-sonnet-4-6"},
             {"t": "usage", "n": 1, "u": usage, "p": "answer"},
             {"t": "replace", "keep": 3, "tail": [marker, {"role": "assistant", "content": "x"}]},
             {"t": "usage", "n": 5, "u": usage, "p": "answer"},
             {"t": "replace", "keep": 0, "tail": [summary]},
             {"t": "replace", "keep": 0, "tail": [summary, {"role": "assistant", "content": "y"}]},   # a snapshot
             {"t": "usage", "n": 2, "u": usage, "p": "answer"}]
    log.write_text("".join(json.dumps(r) + "\n" for r in lines))
    t = read_timeline(log)
    assert [(e.layer, e.after, e.path) for e in t.events] == [("snip_compact", 1, old_snip), ("compacted", 2, old_summary)]
    assert t.events[1].summary == "OLD SUMMARY"
    detail = event_detail(t, workspace, 1)
    assert detail.header is None and detail.messages == [{"role": "user", "content": "the snipped request"}]
    console = Console(record=True, width=120, color_system=None)
    event_view(console, event_detail(t, workspace, 2))
    shown = console.export_text()
    assert "OLD SUMMARY" in shown and "s08 › an old answer" in shown


def test_event_paths_outside_s08_folders_are_not_followed(workspace):
    (workspace / "secret.txt").write_text("do not show")
    log = workspace / ".sessions" / "20261201-101010-abcdef.jsonl"
    log.parent.mkdir()
    lines = [{"t": "session", "id": log.stem},
             {"t": "compaction", "layer": "snip_compact", "path": "secret.txt", "request": 0},
             {"t": "compaction", "layer": "snip_compact", "path": ".transcripts/../../etc/passwd", "request": 0}]
    log.write_text("".join(json.dumps(r) + "\n" for r in lines))
    t = read_timeline(log)
    for n in (1, 2):
        detail = event_detail(t, workspace, n)
        assert detail.problem and not detail.messages and not detail.text


def test_what_a_log_says_reaches_the_terminal_without_its_control_sequences(workspace):
    log = workspace / ".sessions" / "20261201-101010-abcdef.jsonl"
    log.parent.mkdir()
    evil = "\x1b]52;c;ZXZpbA==\x07\x1b[2J"
    lines = [{"t": "session", "id": log.stem, "model": evil},
             {"t": "usage", "n": 1, "u": {"input_tokens": 10, "output_tokens": 1}, "model": evil},
             {"t": "compaction", "layer": evil, "trigger": evil, "path": evil, "request": 1}]
    log.write_text("".join(json.dumps(r) + "\n" for r in lines))
    console = Console(record=True, width=200, color_system=None, force_terminal=True)
    timeline_view(console, read_timeline(log))
    shown = console.export_text()
    assert "\x1b" not in shown and "\x07" not in shown and "^[]52" in shown


def test_slash_timeline_shows_the_current_session_and_one_event(app_for, standin, workspace):
    from commands import dispatch
    from events import Notice, TimelineReport
    standin.brain = Model({"text": "a long answer " + "detail " * 400}, {"text": "ok"},
                          summaries=[{"text": "SUMMARY: one long answer."}])
    app, events = app_for()
    assert app.turn("explain").ok
    dispatch(app, "/timeline")
    report = events[-1]
    assert isinstance(report, TimelineReport) and report.detail is None and len(report.timeline.requests) == 1
    dispatch(app, "/timeline 1")
    assert isinstance(events[-1], Notice) and "no compaction events" in events[-1].text
    app.compact("")
    dispatch(app, "/timeline 1")
    detail = events[-1].detail
    assert detail.event.kind == "manual" and detail.header["kind"] == "manual"
    assert detail.messages[0] == {"role": "user", "content": "explain"}
    assert detail.event.summary == "SUMMARY: one long answer."
