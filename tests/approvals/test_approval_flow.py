"""Approval inside the loop: a call stopped at its question never started; the time shown is the
tool's own; the reason for a "no" is the person's words and survives compaction. In-process, against
the strict stand-in (real SDK, real HTTP)."""

from __future__ import annotations

import pytest

import os
import signal
import threading
import time

from approvals.policy import Answer
from compaction.micro import micro_compact
from events import ToolFinished
from messages import INTERRUPTED_RESULT, NOT_STARTED_RESULT


def bash(command: str) -> dict:
    return {"tool_calls": [{"name": "bash", "input": {"command": command}}]}


def results_of(request) -> list[dict]:
    return [b for m in request["messages"] if isinstance(m["content"], list) for b in m["content"]
            if b.get("type") == "tool_result"]


@pytest.mark.scripted
def test_ctrl_c_at_the_question_means_not_run(app_for, standin, workspace):
    standin.queue({"tool_calls": [{"name": "bash", "input": {"command": "touch one.txt"}},
                                  {"name": "bash", "input": {"command": "touch two.txt"}}]}, {"text": "NEXT"})
    app, events = app_for(approval_mode="default")

    def interrupted(request):
        raise KeyboardInterrupt
    app.set_asker(interrupted)
    assert app.turn("make them").interrupted
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert len(finished) == 1 and not finished[0].meta.get("interrupted")
    assert finished[0].meta["declined"].startswith("not run") and finished[0].content == NOT_STARTED_RESULT
    assert app.turn("carry on").text == "NEXT"
    assert [r["content"] for r in results_of(standin.requests[-1])] == [NOT_STARTED_RESULT, NOT_STARTED_RESULT]
    assert not (workspace / "one.txt").exists() and not (workspace / "two.txt").exists()


@pytest.mark.scripted
def test_the_time_shown_is_the_tools_not_the_questions(app_for, standin):
    standin.queue(bash("touch t.txt; sleep 30"), {"text": "NEXT"})
    app, events = app_for(approval_mode="default")
    answered, finished_at = [], []

    def slow_yes(request):
        time.sleep(1.0)                                   # the person thinks
        answered.append(time.monotonic())
        threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT)).start()    # then presses Ctrl-C
        return Answer(True)

    def emit(event):
        events.append(event)
        if isinstance(event, ToolFinished):
            finished_at.append(time.monotonic())
    app.set_emit(emit)
    app.set_asker(slow_yes)
    assert app.turn("wait").interrupted
    finished = [e for e in events if isinstance(e, ToolFinished)][0]
    assert finished.meta.get("interrupted")
    assert finished.seconds <= finished_at[0] - answered[0]             # counted from after the answer
    assert app.turn("and?").text == "NEXT"
    assert results_of(standin.requests[-1])[0]["content"].startswith(INTERRUPTED_RESULT)


@pytest.mark.scripted
def test_the_reason_for_no_is_the_persons_words_and_outlives_compaction(app_for, standin, workspace):
    reason = "use the staging folder, not build/"
    standin.queue(bash("rm -rf build"), {"text": "UNDERSTOOD"}, {"text": "LATER"})
    app, events = app_for(approval_mode="default")
    app.set_asker(lambda request: Answer(False, reason="  " + reason + "  "))
    assert app.turn("clean up").text == "UNDERSTOOD"
    continuity = app.agent.continuity
    assert [e.text for e in continuity.typed.entries] == ["clean up", reason]
    assert continuity.ledger.commands[-1][:2] == ("rm -rf build", "declined by you")
    assert "declined by you" in continuity.ledger.render(4000)
    sent = standin.requests[-1]["messages"][-1]["content"]           # results, then the person's words
    assert sent[0]["type"] == "tool_result" and sent[0]["content"].endswith("Their reason: " + reason)
    assert sent[-1]["type"] == "text" and sent[-1]["text"] == reason
    cleared = micro_compact(app.messages, keep_recent=0, min_chars=0, clear_at_least=0)
    assert cleared is not app.messages and any(b == {"type": "text", "text": reason}
                                               for m in cleared if isinstance(m["content"], list)
                                               for b in m["content"])
    assert "Their reason" not in str(cleared)                         # the result itself was cleared
    kept = app.messages[:1]                                           # a cut that keeps only the first message
    blocks, _ = continuity.blocks_for_cut(kept, ".transcripts/x.jsonl")
    assert reason in [b["text"] for b in blocks]
    assert app.turn("go on").text == "LATER"
