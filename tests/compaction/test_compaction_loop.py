"""Compaction inside the running agent, in-process against the strict stand-in (real SDK, real HTTP)."""

from __future__ import annotations

import pytest

import json

from compaction.markers import COMPACTED_PREFIX
from events import Compaction, Notice
from standin import count_request_tokens
from storage import PERSISTED_OPEN, read_transcript
from support.helpers import Model, is_summary_request, user_texts


def messages_of(events, layer=None):
    return [e.message for e in events if isinstance(e, Compaction) and (layer is None or e.layer == layer)]


def warnings(events):
    return [e.text for e in events if isinstance(e, Notice) and e.kind in ("warning", "error")]


@pytest.mark.scripted
def test_compact_tool_runs_after_the_whole_batch_and_the_turn_continues(app_for, standin, workspace):
    standin.brain = Model({"text": "A long explanation. " * 300},
                          {"text": "Saving notes, then compacting.", "tool_calls": [
                              {"name": "write_file", "input": {"path": "notes.md", "content": "decisions"}},
                              {"name": "compact", "input": {"focus": "the notes file"}}]},
                          {"tool_calls": [{"name": "compact", "input": {}}]},
                          {"text": "Continuing from the summary."},
                          summaries=[{"text": "SUMMARY: explained, then wrote notes.md"}])
    app, events = app_for()
    app.turn("explain the project")
    result = app.turn("write notes.md and compact")
    assert result.ok and result.text == "Continuing from the summary."
    assert (workspace / "notes.md").read_text() == "decisions"
    summary_call = standin.requests[2]
    assert is_summary_request(summary_call) and "tool_choice" not in summary_call   # it would break the cache
    assert "Pay special attention to: the notes file" in json.dumps(summary_call["messages"][-1])
    after = standin.requests[3]["messages"]
    assert "Created notes.md" in json.dumps(after)          # the batch's results were in before compacting
    assert after[0]["content"][0]["text"].startswith(COMPACTED_PREFIX)
    assert "write notes.md and compact" in user_texts(after)
    assert "A long explanation" not in json.dumps(after)
    assert messages_of(events)[0] == "[manual compact] focus: the notes file"
    second = [b for b in standin.requests[4]["messages"][-1]["content"] if b["type"] == "tool_result"]
    assert "already compacted during this turn" in second[0]["content"]     # at most once per turn
    assert len(standin.requests) == 5


@pytest.mark.scripted
def test_auto_compact_triggers_over_the_limit(app_for, standin, workspace):
    for i in range(6):
        (workspace / f"f{i}.py").write_text(f"# file {i}\n" + "value = 'some python code here'\n" * 120)
    standin.brain = Model(*[{"tool_calls": [{"name": "read_file", "input": {"path": f"f{i}.py"}}]}
                            for i in range(6)], {"text": "All read."})
    app, events = app_for(context_limit=5500, background_compact="off")    # the blocking summary (as before it); the
    # limit leaves the history about 3,500 tokens beside the system prompt and the tools (task among them)
    assert app.turn("read all the files").text == "All read."
    triggered = messages_of(events, "auto_compact")
    assert triggered and triggered[0].startswith("[auto_compact triggered]") and "> 5,500 tokens" in triggered[0]
    saved = messages_of(events, "transcript")[0]
    path = saved.removeprefix("[transcript saved: ").removesuffix("]")
    header, lines = read_transcript(workspace / path)
    assert lines[0] == {"role": "user", "content": "read all the files"} and len(lines) >= 8
    assert header["kind"] == "summary" and "> 5,500 tokens" in header["trigger"] and header["tokens_after"]
    assert messages_of(events, "compacted")[0].startswith(f"{COMPACTED_PREFIX} ")
    sizes = [len(json.dumps(r["messages"])) for r in standin.requests if not is_summary_request(r)]
    assert any(b < a / 2 for a, b in zip(sizes, sizes[1:]))      # the prompt shrank after the compaction


@pytest.mark.scripted
def test_failed_summaries_keep_history_fall_back_and_stop_after_three_turns(app_for, standin, workspace):
    turns = []
    for turn in range(7):
        turns += [{"tool_calls": [{"name": "bash", "input": {"command": f"echo {turn}"}}]},
                  {"text": f"answer {turn} " + "words " * 400}]
    model = standin.brain = Model(*turns, summaries=[{"error": 500}])
    app, events = app_for(context_limit=1500, api_max_retries=0)
    turn = 0
    while not any("auto_compact is off" in w for w in warnings(events)):
        assert app.turn(f"request {turn}").ok and turn < 6
        turn += 1
    failing_turns = {i for i in range(turn)}
    assert 3 <= len(failing_turns) <= 5      # three turns with failures (early ones may be too small to try)
    failed = [w for w in warnings(events) if "auto_compact failed" in w]
    assert len(failed) == model.summary_calls and "API error (500)" in failed[0] and "history was kept" in failed[0]
    assert messages_of(events, "fallback")
    calls = model.summary_calls
    for more in range(2):
        assert app.turn(f"more {more}").ok
    assert model.summary_calls == calls                    # no more attempts once it is off
    assert sum("auto_compact is off" in w for w in warnings(events)) <= 3   # at most once per turn
    model.summaries = [{"text": "SUMMARY after /compact"}]
    app.compact("")
    assert app.messages[0]["content"][0]["text"].startswith(COMPACTED_PREFIX)
    assert app.agent.compactor.breaker.auto_enabled


@pytest.mark.scripted
def test_prompt_too_long_is_recovered_by_reactive_compaction(app_for, standin):
    standin.brain = Model(*[{"text": f"answer {i} " + "detail " * 400} for i in range(3)], {"text": "recovered"},
                          summaries=[{"text": "SUMMARY of three questions"}])
    app, events = app_for()
    for i in range(3):
        assert app.turn(f"question {i}").ok
    standin.context_window = count_request_tokens(standin.requests[-1]) + 50   # the next prompt won't fit
    result = app.turn("question 3")
    assert result.ok and result.text == "recovered"
    assert "prompt is too long" in standin.answers[-3]
    reactive = messages_of(events, "reactive_compact")
    assert reactive[0].startswith("[reactive_compact] the API says the prompt is too long (")
    assert reactive[-1].startswith("[reactive_compact] ") and "→" in reactive[-1]
    retried = standin.requests[-1]
    assert "question 3" in user_texts(retried["messages"]) and "SUMMARY of three" in json.dumps(retried)
    assert count_request_tokens(retried) <= standin.context_window


@pytest.mark.scripted
def test_context_window_exceeded_stop_reason_is_recovered(app_for, standin):
    standin.brain = Model({"text": "first answer " + "detail " * 300},
                          {"text": "partial", "stop_reason": "model_context_window_exceeded"},
                          {"text": "complete answer"})
    app, events = app_for()
    assert app.turn("first").ok
    assert app.turn("second").text == "complete answer"
    assert "partial" not in json.dumps(list(app.messages))          # the cut answer was dropped
    assert messages_of(events, "reactive_compact")


@pytest.mark.scripted
def test_slash_compact_with_focus_and_the_meter(app_for, standin):
    app, events = app_for()
    standin.queue({"text": "long answer " * 200})
    app.turn("explain the code")
    sent = standin.requests[-1]
    anchored = app.agent.compactor.measure(app.messages)
    assert anchored >= count_request_tokens(sent)            # usage-anchored: at least what was sent
    standin.queue({"text": "SUMMARY: explained the code"})
    app.compact("error handling")
    assert "Pay special attention to: error handling" in json.dumps(standin.requests[-1]["messages"][-1])
    assert messages_of(events)[0] == "[manual compact] focus: error handling"
    assert any("explain the code" in t for t in user_texts(app.messages))


@pytest.mark.scripted
def test_one_round_bigger_than_the_window_is_recovered(app_for, standin, workspace):
    """Several read_file results in one reply, together over a window s08 did not know: no summary can
    help (they are unseen and kept verbatim), so the fallback persists them and the retry fits — and
    from then on the window the API stated is the one in use."""
    for i in range(4):
        (workspace / f"big{i}.py").write_text("".join(f"def f{i}_{n}(x): return x + {n}\n" for n in range(900)))
    standin.context_window = 12_000
    standin.brain = Model({"tool_calls": [{"name": "read_file", "input": {"path": f"big{i}.py"}} for i in range(4)]},
                          {"text": "read them all"})
    app, events = app_for()
    result = app.turn("read the four big files at once")
    assert result.ok and result.text == "read them all"
    assert sum(a.startswith("400 prompt is too long") for a in standin.answers) == 1
    last = standin.requests[-1]
    assert count_request_tokens(last) <= 12_000
    assert sum(PERSISTED_OPEN in json.dumps(b) for b in last["messages"][-1]["content"]) >= 2
    assert "[context window is 12,000 tokens for this model; compacting at 9,000]" in [
        e.text for e in events if isinstance(e, Notice)]
    assert app.agent.compactor.limit == 9_000 and app.agent.compactor.window.tokens == 12_000


@pytest.mark.scripted
def test_a_known_small_window_keeps_big_outputs_out_of_the_context(app_for, standin, workspace):
    """CONTEXT_WINDOW set to a small model's window: outputs are sized for it before anything is sent."""
    for i in range(4):
        (workspace / f"big{i}.py").write_text("".join(f"def f{i}_{n}(x): return x + {n}\n" for n in range(900)))
    standin.context_window = 12_000
    standin.brain = Model({"tool_calls": [{"name": "read_file", "input": {"path": f"big{i}.py"}} for i in range(4)]},
                          {"text": "read them all"})
    app, events = app_for(context_window=12_000, context_limit=9_000)
    assert app.turn("read the four big files at once").ok
    assert not any(a.startswith("400") for a in standin.answers)


@pytest.mark.scripted
def test_reactive_compaction_sizes_its_summary_in_the_api_s_tokens(app_for, standin, workspace):
    """Code counts more tokens at the API than our estimate; the error's count must size the summary
    request, so the summary call itself is never too long."""
    for i in range(8):
        (workspace / f"m{i}.py").write_text("".join(f"x{n} = f({n}, [{n}, {n + 1}])  # {n}\n" for n in range(500)))
    standin.context_window = 16_000
    standin.brain = Model(*[{"tool_calls": [{"name": "read_file", "input": {"path": f"m{i}.py"}}]} for i in range(8)],
                          {"text": "done reading"})
    app, events = app_for()                      # the window is learned from the API's refusal
    assert app.turn("read the modules one by one").text == "done reading"
    summaries = [r for r in standin.requests if is_summary_request(r)]
    assert summaries and all(count_request_tokens(r) <= 16_000 for r in summaries)
    assert not any("summary call failed" in w for w in warnings(events))
