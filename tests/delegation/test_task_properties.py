"""Properties of sub-agents: whatever order the children's steps interleave in, and however each one
ends (a report, a file read or written, a failed request), the parent's history stays valid for the
stand-in's validator, its results answer its calls in order, and every child's transcript is valid
too. A child whose own window overflows compacts and still reports."""

from __future__ import annotations

import json
import threading

from hypothesis import given, settings, strategies as st

from agent import App
from events import Compaction, TaskFinished
from standin import StandIn
from standin.validate import validate_request
from storage import read_transcript
from support.agents import TEST_KEY, base_env
from standin.conversations import Conversations

STEPS = {"read": {"tool_calls": [{"name": "read_file", "input": {"path": "shared.txt"}}]},
         "write": None,      # filled per child: its own file
         "fail": {"error": 400, "message": "the child's request failed"},
         "report": {"text": "a report"}}


class Sequencer:
    """Lets the children's model calls through in one drawn order: (child, step) after (child, step)."""

    def __init__(self, order: list[int]):
        self.order, self.at = order, 0
        self.turn = threading.Condition()

    def gate(self, child: int, reply: dict):
        def answer(body):
            with self.turn:
                self.turn.wait_for(lambda: self.at >= len(self.order) or self.order[self.at] == child, timeout=20)
                self.at += 1
                self.turn.notify_all()
            return reply
        return answer


@st.composite
def plans(draw):
    children = draw(st.integers(1, 3))
    plans = []
    for _ in range(children):
        middle = draw(st.lists(st.sampled_from(["read", "write"]), max_size=2))
        plans.append(middle + [draw(st.sampled_from(["report", "fail"]))])
    left = [len(p) for p in plans]
    order = []
    while any(left):
        child = draw(st.sampled_from([i for i, n in enumerate(left) if n]))
        order.append(child)
        left[child] -= 1
    return plans, order


def valid(messages: list[dict]) -> None:
    validate_request({"model": "m", "max_tokens": 10, "messages": messages})


@settings(max_examples=12)
@given(plans())
def test_any_interleaving_of_children_keeps_every_history_valid(tmp_path_factory, plan):
    plans, order = plan
    tmp = tmp_path_factory.mktemp("p")
    workspace = tmp / "ws"
    workspace.mkdir()
    (workspace / "shared.txt").write_text("shared\n")
    sequencer = Sequencer(order)
    scripts = {}
    for i, steps in enumerate(plans):
        replies = []
        for step in steps:
            reply = STEPS[step] or {"tool_calls": [{"name": "write_file", "input": {"path": f"out{i}.txt",
                                                                                       "content": str(i)}}]}
            replies.append(sequencer.gate(i, reply))
        scripts[f"CHILD-{i}:"] = replies
    calls = [{"name": "task", "input": {"description": f"c{i}", "prompt": f"CHILD-{i}: work"}} for i in range(len(plans))]
    scripts["PARENT"] = [{"tool_calls": calls}, {"text": "all reported"}]
    with StandIn(api_key=TEST_KEY, brain=Conversations(scripts)) as server:
        app = App(workspace, environ=base_env(tmp, server))
        events: list = []
        app.set_emit(events.append)
        result = app.turn("PARENT: go")
        assert not server.rejections, server.rejections
    app.close()
    assert result.ok and result.text == "all reported"
    messages = list(app.messages)
    valid(messages)
    ids = [b["id"] for b in messages[1]["content"] if b["type"] == "tool_use"]
    results = [b for b in messages[2]["content"] if b["type"] == "tool_result"]
    assert [r["tool_use_id"] for r in results] == ids
    for i, (steps, r) in enumerate(zip(plans, results)):
        assert bool(r.get("is_error")) == (steps[-1] == "fail")
        assert (workspace / f"out{i}.txt").exists() == ("write" in steps)
    finished = {e.number: e for e in events if isinstance(e, TaskFinished)}
    assert sorted(finished) == list(range(1, len(plans) + 1))
    for e in finished.values():
        header, child_messages = read_transcript(workspace / e.transcript)
        assert header["kind"] == "task"
        if child_messages and child_messages[-1]["role"] == "assistant":
            valid(child_messages + [{"role": "user", "content": "next"}])
        else:
            valid(child_messages)


def test_a_child_that_overflows_its_own_window_compacts_and_still_reports(app_for, standin, workspace):
    for n in range(8):
        (workspace / f"big{n}.txt").write_text(f"file {n} " + "lorem ipsum dolor sit amet\n" * 500)
    reads = [{"tool_calls": [{"name": "read_file", "input": {"path": f"big{n}.txt"}}]} for n in range(8)]
    standin.brain = Conversations({
        "PARENT": [{"tool_calls": [{"name": "task", "input": {"description": "read all", "prompt": "CHILD: read"}}]},
                   {"text": "parent done"}],
        "CHILD": reads + [{"text": "CHILD REPORT: read eight files"}]})
    app, events = app_for(context_limit=8000, keep_recent=1, preserve_result_tools="")
    assert app.turn("PARENT: go").text == "parent done"
    report = [b for b in app.messages[2]["content"] if b["type"] == "tool_result"][0]
    assert report["content"].startswith("CHILD REPORT: read eight files") and not report.get("is_error")
    finished, = [e for e in events if isinstance(e, TaskFinished)]
    assert finished.status == "done"
    child_requests = [r for r in standin.requests if "CHILD: read" in json.dumps(r["messages"][0])]
    sizes = [len(json.dumps(r["messages"])) for r in child_requests]
    assert any("compact" in step for _, step in app.delegator.children[0].steps), app.delegator.children[0].steps
    assert max(sizes) < sum((workspace / f"big{n}.txt").stat().st_size for n in range(8))   # it compacted
    assert [e.message for e in events if isinstance(e, Compaction)] == []     # the parent's context did not
    assert "lorem" not in json.dumps(list(app.messages))
