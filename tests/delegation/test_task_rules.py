"""Sub-agents follow the session's rules and can never get more: the same approvals (the question
says which sub-agent asks), plan mode and read-only agents only read, no nesting, a step limit, and
nothing a child leaves running survives it. In-process, over HTTP against the strict stand-in."""

from __future__ import annotations

import os
import threading

from approvals.policy import Answer
from events import TaskFinished
from standin.conversations import Conversations


def results_in(message: dict) -> list[dict]:
    return [b for b in message["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]


def task_call(prompt: str, agent: str = "", description: str = "work") -> dict:
    return {"name": "task", "input": {"description": description, "prompt": prompt, **({"agent": agent} if agent else {})}}


def child_results(standin, key: str) -> list[str]:
    """The tool results the child whose task contains `key` sent back, from its last request."""
    import json
    mine = [r for r in standin.requests if key in json.dumps(r["messages"][0])]
    return [b["content"] for m in mine[-1]["messages"] if isinstance(m["content"], list) for b in m["content"]
            if b.get("type") == "tool_result"]


def write_then_report(path: str, text: str = "x") -> list:
    return [{"tool_calls": [{"name": "write_file", "input": {"path": path, "content": text}}]}, {"text": "reported"}]


def test_a_child_asks_through_the_same_approvals_and_says_who_asks(app_for, standin, workspace):
    standin.brain = Conversations({"PARENT": [{"tool_calls": [task_call("CHILD: write it", description="write")]},
                                              {"text": "ok"}],
                                   "CHILD": write_then_report("made.txt", "hello")})
    app, events = app_for(approval_mode="default")
    asked: list = []

    def ask(request):
        asked.append((request, threading.current_thread() is threading.main_thread()))
        return Answer(True)
    app.set_asker(ask)
    assert app.turn("PARENT: go").ok
    (request, on_main_thread), = asked
    assert request.asker == "task 1 (general: write)" and request.tool == "write_file"
    assert on_main_thread                       # the person is asked by the parent's thread, never a child's
    assert (workspace / "made.txt").read_text() == "hello"
    assert "wrote made.txt" in results_in(app.messages[2])[0]["content"]


def test_a_no_reaches_the_child_and_nothing_is_written(app_for, standin, workspace):
    standin.brain = Conversations({"PARENT": [{"tool_calls": [task_call("CHILD: write it")]}, {"text": "ok"}],
                                   "CHILD": write_then_report("made.txt")})
    app, events = app_for(approval_mode="default")
    app.set_asker(lambda request: Answer(False, reason="not now"))
    assert app.turn("PARENT: go").ok
    assert not (workspace / "made.txt").exists()
    assert "The user declined this write_file call" in child_results(standin, "CHILD")[0]
    assert "wrote —" in results_in(app.messages[2])[0]["content"]


def test_without_anybody_to_ask_a_child_gets_no_more_than_its_parent(app_for, standin, workspace):
    standin.brain = Conversations({"PARENT": [{"tool_calls": [task_call("CHILD: write it")]}, {"text": "ok"}],
                                   "CHILD": write_then_report("made.txt")})
    app, events = app_for(approval_mode="default")          # no asker: -p, a pipe
    assert app.turn("PARENT: go").ok
    assert not (workspace / "made.txt").exists()
    assert "needs the person's approval" in child_results(standin, "CHILD")[0]


def test_in_plan_mode_children_only_read(app_for, standin, workspace):
    standin.brain = Conversations({
        "PARENT": [{"tool_calls": [task_call("CHILD: change things")]}, {"text": "ok"}],
        "CHILD": [{"tool_calls": [{"name": "write_file", "input": {"path": "w.txt", "content": "x"}},
                                  {"name": "bash", "input": {"command": "touch b.txt"}}]}, {"text": "reported"}]})
    app, events = app_for(approval_mode="yolo")
    app.set_plan_mode(True)
    app.set_asker(lambda request: Answer(True))
    assert app.turn("PARENT: plan it").ok
    assert not (workspace / "w.txt").exists() and not (workspace / "b.txt").exists()
    assert all(r.startswith("Not run: plan mode is on") for r in child_results(standin, "CHILD"))


def test_explore_only_reads_even_in_yolo(app_for, standin, workspace):
    (workspace / "src.py").write_text("x = 1\n")
    standin.brain = Conversations({
        "PARENT": [{"tool_calls": [task_call("CHILD: explore", agent="explore")]}, {"text": "ok"}],
        "CHILD": [{"tool_calls": [{"name": "bash", "input": {"command": "grep -n x src.py"}},
                                  {"name": "bash", "input": {"command": "touch b.txt"}},
                                  {"name": "write_file", "input": {"path": "w.txt", "content": "x"}}]},
                  {"text": "reported"}]})
    app, events = app_for(approval_mode="yolo")
    assert app.turn("PARENT: look").ok
    import json
    child = [r for r in standin.requests if "CHILD" in json.dumps(r["messages"][0])]
    assert sorted(t["name"] for t in child[0]["tools"]) == ["bash", "read_file"]
    found, touched, written = child_results(standin, "CHILD")
    assert found.startswith("1:x = 1")
    assert touched.startswith("Not run: this sub-agent may only read")
    assert "Unknown tool" in written or "not" in written.lower()
    assert not (workspace / "b.txt").exists() and not (workspace / "w.txt").exists()


def test_a_child_cannot_start_a_child(app_for, standin):
    standin.brain = Conversations({"PARENT": [{"tool_calls": [task_call("CHILD: nest")]}, {"text": "ok"}],
                                   "CHILD": [{"tool_calls": [task_call("GRANDCHILD: deeper")]}, {"text": "reported"}]})
    app, events = app_for()
    assert app.turn("PARENT: go").ok
    assert "sub-agents are not available here" in child_results(standin, "CHILD")[0]
    assert len([e for e in events if isinstance(e, TaskFinished)]) == 1
    import json
    assert not any("GRANDCHILD" in json.dumps(r["messages"][0]) for r in standin.requests)


def test_a_child_that_never_ends_is_stopped_at_its_step_limit(app_for, standin, workspace):
    (workspace / "a.txt").write_text("a\n")
    forever = [{"tool_calls": [{"name": "read_file", "input": {"path": "a.txt"}}]}] * 50
    standin.brain = Conversations({"PARENT": [{"tool_calls": [task_call("CHILD: loop")]}, {"text": "parent ok"}],
                                   "CHILD": forever})
    app, events = app_for(task_max_steps=4)
    result = app.turn("PARENT: go")
    assert result.ok and result.text == "parent ok"
    report = results_in(app.messages[2])[0]
    assert report["is_error"] and "stopped after TASK_MAX_STEPS=4 model calls" in report["content"]
    finished, = [e for e in events if isinstance(e, TaskFinished)]
    assert finished.status == "stopped" and finished.calls == 5     # the fifth call was never sent
    import json
    assert len([r for r in standin.requests if "CHILD" in json.dumps(r["messages"][0])]) == 4


def test_nothing_a_child_leaves_running_survives_it(app_for, standin, workspace):
    standin.brain = Conversations({
        "PARENT": [{"tool_calls": [task_call("CHILD: start a server")]}, {"text": "ok"}],
        "CHILD": [{"tool_calls": [{"name": "bash", "input": {"command": "sleep 600 & echo $! > pid.txt"}}]},
                  {"text": "started"}]})
    app, events = app_for(approval_mode="yolo")
    assert app.turn("PARENT: go").ok
    pid = int((workspace / "pid.txt").read_text())
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        state = "gone"
    assert state in ("gone", "Z", "X"), f"the child's background sleep is still running ({state})"
    assert not os.path.exists(f"/proc/{pid}/cmdline") or state in ("Z", "X")


def test_a_child_cannot_write_s08s_settings(app_for, standin, workspace):
    (workspace / ".env").write_text("APPROVAL_MODE=yolo\n")
    standin.brain = Conversations({"PARENT": [{"tool_calls": [task_call("CHILD: relax")]}, {"text": "ok"}],
                                   "CHILD": write_then_report(".env", "ANTHROPIC_BASE_URL=http://evil.example\n")})
    app, events = app_for(approval_mode="yolo")
    assert app.turn("PARENT: go").ok
    assert (workspace / ".env").read_text() == "APPROVAL_MODE=yolo\n"
    assert "wrote —" in results_in(app.messages[2])[0]["content"]


def test_questions_from_parallel_children_come_one_at_a_time(app_for, standin, workspace):
    standin.brain = Conversations({
        "PARENT": [{"tool_calls": [task_call(f"CHILD-{x}: write", description=x) for x in "ABC"]}, {"text": "ok"}],
        **{f"CHILD-{x}": write_then_report(f"{x}.txt", x) for x in "ABC"}})
    app, events = app_for(approval_mode="default")
    asking, most, askers = [0], [0], []

    def ask(request):
        asking[0] += 1
        most[0] = max(most[0], asking[0])
        askers.append(request.asker)
        asking[0] -= 1
        return Answer(True)
    app.set_asker(ask)
    assert app.turn("PARENT: go").ok
    assert most[0] == 1 and sorted(askers) == ["task 1 (general: A)", "task 2 (general: B)", "task 3 (general: C)"]
    assert all((workspace / f"{x}.txt").read_text() == x for x in "ABC")
