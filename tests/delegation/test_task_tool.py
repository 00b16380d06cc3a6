"""The task tool end to end, in-process, over real HTTP against the strict stand-in (every request
the parent and its children send is validated; the fixture fails the test on any refusal)."""

from __future__ import annotations

import json

from events import TaskFinished, TaskStarted
from messages import tool_uses
from storage import read_transcript
from standin.conversations import Conversations


def results_in(message: dict) -> list[dict]:
    return [b for b in message["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]


def task_call(prompt: str, description: str = "look", agent: str = "") -> dict:
    return {"name": "task", "input": {"description": description, "prompt": prompt, **({"agent": agent} if agent else {})}}


def log_records(app, kind: str) -> list[dict]:
    lines = app.messages.log.path.read_text().splitlines()
    return [r for r in map(json.loads, lines) if r.get("t") == kind]


def test_one_child_reads_and_reports(app_for, standin, workspace):
    (workspace / "notes.txt").write_text("the answer is 42\n")
    standin.brain = Conversations({
        "PARENT": [{"tool_calls": [task_call("CHILD: read notes.txt and report the answer", "read notes")]},
                   {"text": "The child says 42."}],
        "CHILD": [{"tool_calls": [{"name": "read_file", "input": {"path": "notes.txt"}}]},
                  {"text": "The answer in notes.txt is 42."}]})
    app, events = app_for()
    result = app.turn("PARENT: what is the answer?")
    assert result.ok and result.text == "The child says 42."
    # the parent saw one call and one result: the report and its trailer, none of the child's tool calls
    assert [m["role"] for m in app.messages] == ["user", "assistant", "user", "assistant"]
    report = results_in(app.messages[2])[0]
    assert not report.get("is_error")
    assert report["content"].startswith("The answer in notes.txt is 42.")
    assert "[task 1 general: done · read notes.txt · wrote — ·" in report["content"]
    assert "the answer is 42" not in json.dumps(list(app.messages))           # the file's text stayed in the child
    # the child's history: a fresh one, the task its first message, without the task tool
    child_requests = [r for r in standin.requests if "CHILD" in json.dumps(r["messages"][0])]
    assert child_requests and all("PARENT" not in json.dumps(r["messages"]) for r in child_requests)
    assert all("task" not in [t["name"] for t in r["tools"]] for r in child_requests)
    assert "You are a sub-agent" in json.dumps(child_requests[0]["system"])
    # its transcript is a session file, and the log says start and report
    started, = [e for e in events if isinstance(e, TaskStarted)]
    finished, = [e for e in events if isinstance(e, TaskFinished)]
    assert finished.status == "done" and finished.tokens > 0
    path = workspace / finished.transcript
    assert path.name.startswith(app.messages.log.id) and path.name.endswith("-task.jsonl")
    header, messages = read_transcript(path)
    assert header["kind"] == "task" and [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    records = log_records(app, "task")
    assert [r["e"] for r in records] == ["start", "report"]
    assert records[1]["read"] == ["notes.txt"] and records[1]["tokens"] == finished.tokens
    # the parent's work ledger knows the file the child read
    assert "notes.txt" in app.continuity.ledger.render(4000)


def test_three_children_run_at_the_same_time(app_for, standin, workspace):
    import threading
    all_three = threading.Barrier(3, timeout=20)

    def meet(reply):             # each child answers only when all three are in flight: they run at once
        def answer(body):
            all_three.wait()
            return reply
        return answer

    standin.brain = Conversations({
        "PARENT": [{"tool_calls": [task_call("CHILD-A: say a", "a"), task_call("CHILD-B: say b", "b"),
                                   task_call("CHILD-C: say c", "c", agent="explore")]},
                   {"text": "all done"}],
        **{f"CHILD-{x}": [meet({"text": f"report {x}"})] for x in "ABC"}})
    app, events = app_for()
    assert app.turn("PARENT: three at once").ok
    calls = tool_uses(app.messages[1])
    results = results_in(app.messages[2])
    assert [r["tool_use_id"] for r in results] == [c["id"] for c in calls]
    assert [r["content"].split("\n")[0] for r in results] == ["report A", "report B", "report C"]
    assert "[task 3 explore: done" in results[2]["content"]
    assert sorted(e.number for e in events if isinstance(e, TaskFinished)) == [1, 2, 3]


def test_a_failing_child_is_an_error_result_and_the_parent_goes_on(app_for, standin, workspace):
    standin.brain = Conversations({
        "PARENT": [{"tool_calls": [task_call("CHILD: fail")]}, {"text": "it failed, sorry"}],
        "CHILD": [{"error": 400, "message": "bad things"}]})
    app, events = app_for()
    assert app.turn("PARENT: try").ok
    result = results_in(app.messages[2])[0]
    assert result["is_error"] and result["content"].startswith("The sub-agent failed:")
    assert "[task 1 general: failed" in result["content"]


def test_unknown_agent_and_empty_prompt_are_readable_errors(app_for, standin):
    standin.brain = Conversations({
        "PARENT": [{"tool_calls": [task_call("CHILD: x", agent="nobody"), task_call("  ")]}, {"text": "ok"}]})
    app, events = app_for()
    assert app.turn("PARENT: go").ok
    first, second = results_in(app.messages[2])
    assert first["is_error"] and "no agent named 'nobody'" in first["content"] and "explore" in first["content"]
    assert second["is_error"] and "must not be empty" in second["content"]


def test_the_report_is_bounded_with_a_pointer_to_the_transcript(app_for, standin, workspace):
    long = " ".join(f"finding-{i}" for i in range(1500))
    standin.brain = Conversations({
        "PARENT": [{"tool_calls": [task_call("CHILD: report a lot")]}, {"text": "ok"}],
        "CHILD": [{"text": long}]})
    app, events = app_for(task_report_max=200)
    assert app.turn("PARENT: go").ok
    content = results_in(app.messages[2])[0]["content"]
    assert "the report was cut at TASK_REPORT_MAX=200 tokens" in content
    finished, = [e for e in events if isinstance(e, TaskFinished)]
    assert finished.transcript in content
    assert len(content) < len(long) / 5
    _, messages = read_transcript(workspace / finished.transcript)
    assert long in json.dumps(messages)            # the whole report is in the child's transcript


def test_cost_and_context_show_children_apart(app_for, standin, workspace):
    from events import ContextReport, CostReport
    from commands import dispatch
    standin.brain = Conversations({
        "PARENT": [{"tool_calls": [task_call("CHILD: look")]}, {"text": "done"}],
        "CHILD": [{"text": "found it"}]})
    app, events = app_for()
    assert app.turn("PARENT: go").ok
    dispatch(app, "/cost")
    dispatch(app, "/context")
    cost, = [e for e in events if isinstance(e, CostReport)]
    finished, = [e for e in events if isinstance(e, TaskFinished)]
    assert cost.children.calls == 1 and cost.tally.calls == 3            # two of the parent's, one child's
    assert cost.children.prompt_tokens == finished.tally.prompt_tokens > 0
    context, = [e for e in events if isinstance(e, ContextReport)]
    assert context.tasks.startswith("sub-agents: 1 ran in contexts of their own")
    from ui.reports import cost_report
    assert "of which sub-agents (task tool): 1 model call" in cost_report(cost).plain


def test_a_resumed_session_still_counts_its_children_apart(app_for, standin, workspace, tmp_path):
    from agent import App
    from session.replay import load_session
    from support.agents import base_env
    standin.brain = Conversations({
        "PARENT": [{"tool_calls": [task_call("CHILD: look")]}, {"text": "done"}],
        "CHILD": [{"text": "found it"}]})
    app, events = app_for()
    assert app.turn("PARENT: go").ok
    children, session = app.ledger.children, app.ledger.session
    path = app.messages.log.path
    app.close()
    with open(path, "a") as log:          # what a hostile log could add: refused, nothing else changes
        log.write(json.dumps({"t": "task", "n": 9, "e": "report", "usage": {"calls": True, "usd": {"output": 1e99}}}) + "\n")
        log.write('{"t": "task", "n": 9, "e": "report", "usage": {"calls": 1, "uncached": NaN}}\n')
    loaded = load_session(path)
    assert not loaded.notices                        # the task records are part of a sound log
    again = App(workspace, environ=base_env(tmp_path, standin), resume=loaded)
    assert again.ledger.children.calls == 1 and again.ledger.children.uncached == children.uncached
    assert again.ledger.session.calls == session.calls and again.ledger.children.cost == children.cost
    again.close()
