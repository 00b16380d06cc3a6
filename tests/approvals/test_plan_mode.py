"""Plan mode (approvals.py's policy, plan_mode.py's notes): nothing changes — file tools and commands
that do not only read are refused without asking, reads run — and the model is told it is planning,
with every message, through a compaction and a resume; when plan mode goes off it is told that too.
In-process against the scripted model; the history stays valid for the API whatever happens."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from approvals.policy import PLAN_REFUSAL, Approvals
from support.agents import base_env
from support.helpers import make_app
from messages import add_user_text
from approvals.plan_mode import PLAN_OFF, PLAN_ON, told_planning
from session.file import list_sessions
from session.replay import load_session
from standin.validate import validate_request

pytestmark = pytest.mark.scripted


def never_asked(request):
    raise AssertionError(f"plan mode asked the person: {request}")


def last_user_texts(request) -> list[str]:
    content = request["messages"][-1]["content"]
    return [content] if isinstance(content, str) else [b["text"] for b in content if b.get("type") == "text"]


def first_user_texts(request, typed: str) -> list[str]:
    """The text blocks of the user message that holds `typed`, up to it and without what a compaction
    put before them (its summary, the person's earlier messages): the plan note, if any, and `typed`."""
    for message in request["messages"]:
        content = message["content"]
        texts = [content] if isinstance(content, str) else [b.get("text") for b in content if b.get("type") == "text"]
        if typed in texts:
            texts = texts[:texts.index(typed) + 1]
            return texts[-2:] if len(texts) > 1 and texts[-2].startswith("[Plan mode is ") else [typed]
    raise AssertionError(f"{typed!r} not sent")


def results_of(request) -> list[dict]:
    return [b for m in request["messages"] if isinstance(m["content"], list) for b in m["content"]
            if b.get("type") == "tool_result"]


def test_the_policy_in_plan_mode():
    plan = Approvals("plan")
    assert plan.review("read_file", {"path": "a"}, None, never_asked) is None
    assert plan.review("bash", {"command": "ls -la && git status | head"}, None, never_asked) is None
    for name, args in [("write_file", {"path": "a", "content": "x"}), ("edit_file", {"path": "a"}),
                       ("bash", {"command": "touch a"}), ("bash", {"command": "ls > out.txt"}),
                       ("bash", {"command": "cat a; rm -rf b"}), ("bash", {"command": "echo $(rm x)"})]:
        refusal = plan.review(name, args, None, never_asked)
        assert refusal is not None and refusal.result == PLAN_REFUSAL and "plan mode" in refusal.shown, args
    assert plan.decide("bash", {"command": "ls"}, None, never_asked) == (None, "read-only")   # in the sandbox
    plan.all_commands = plan.all_edits = True                # what was allowed before does not apply
    plan.prefixes.add("touch")
    assert plan.review("bash", {"command": "touch a"}, None, never_asked) is not None
    assert plan.decide("bash", {"command": "ls"}, None, never_asked) == (None, "read-only")   # still sandboxed
    assert plan.review("write_file", {"path": "a"}, None, None).notice.startswith("[plan mode]")   # -p says so


def test_plan_mode_refuses_changes_runs_reads_and_tells_the_model(tmp_path, workspace, standin):
    (workspace / "notes.txt").write_text("old\n")
    standin.queue({"tool_calls": [{"name": "write_file", "input": {"path": "new.txt", "content": "x"}},
                                  {"name": "bash", "input": {"command": "touch made.txt"}},
                                  {"name": "bash", "input": {"command": "cat notes.txt"}}]},
                  {"text": "PLAN: edit notes.txt"}, {"text": "DONE"}, {"text": "AFTER"})
    app, events = make_app(workspace, base_env(tmp_path, standin, approval_mode="plan"), ask=None)
    app.set_asker(never_asked)
    result = app.turn("plan the change")
    assert result.text == "PLAN: edit notes.txt"
    assert not (workspace / "new.txt").exists() and not (workspace / "made.txt").exists()
    first = standin.requests[0]
    assert last_user_texts(first) == [PLAN_ON, "plan the change"]      # the note first, then the person's words
    results = results_of(standin.requests[1])
    assert [r["content"] == PLAN_REFUSAL for r in results] == [True, True, False]
    assert "old" in results[2]["content"]                                 # the read ran
    app.approvals.cycle()                                                  # Shift-Tab: plan → default
    assert app.approvals.mode == "default"
    app.turn("go ahead")
    assert first_user_texts(standin.requests[-1], "go ahead") == [PLAN_OFF, "go ahead"]
    app.turn("and then")
    assert first_user_texts(standin.requests[-1], "and then") == ["and then"]     # said once
    assert [e.text for e in app.continuity.typed.entries] == ["plan the change", "go ahead", "and then"]
    app.close()


def test_the_note_survives_a_compaction_and_a_resume(tmp_path, workspace, standin):
    standin.queue({"text": "PLAN ONE"}, {"text": "PLAN TWO"}, {"text": "RESUMED"},   # (the summary is the stand-in's)
                  {"text": "RESUMED-PLAN"})
    env = base_env(tmp_path, standin, approval_mode="plan")
    app, _ = make_app(workspace, env)
    app.turn("plan the parser")
    app.compact("")                                                        # the summary replaces the history
    app.turn("more detail")
    assert first_user_texts(standin.requests[-1], "more detail") == [PLAN_ON, "more detail"]
    app.close()
    loaded = load_session(list_sessions(workspace)[0])
    assert told_planning(loaded.messages)
    # resumed in the default mode (the mode is not kept in the session, like every approval mode)
    resumed, _ = make_app(workspace, base_env(tmp_path, standin, approval_mode="default"), resume=loaded)
    resumed.turn("now do it")
    assert first_user_texts(standin.requests[-1], "now do it") == [PLAN_OFF, "now do it"]
    resumed.close()
    again, _ = make_app(workspace, env, resume=load_session(list_sessions(workspace)[0]))
    again.turn("plan again")
    assert first_user_texts(standin.requests[-1], "plan again") == [PLAN_ON, "plan again"]
    again.close()


calls = st.sampled_from([("write_file", {"path": "w.txt", "content": "x"}), ("bash", {"command": "touch t.txt"}),
                         ("bash", {"command": "ls"}), ("read_file", {"path": "r.txt"}),
                         ("edit_file", {"path": "r.txt", "old_text": "r", "new_text": "s"})])
turns = st.lists(st.tuples(st.sampled_from(["plan", "default", "auto_edit"]), st.lists(calls, max_size=3),
                           st.booleans()), min_size=1, max_size=5)


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(turns)
def test_whatever_the_modes_and_calls_the_history_stays_valid_and_plan_mode_changes_nothing(
        tmp_path_factory, standin, script):
    base = tmp_path_factory.mktemp("plan")
    workspace = base / "ws"
    workspace.mkdir()
    (workspace / "r.txt").write_text("r\n")
    standin.replies.clear()
    app, _ = make_app(workspace, base_env(base, standin, approval_mode="yolo"))
    told = False
    for n, (mode, tool_calls, compact) in enumerate(script):
        app.approvals.mode = mode
        before = {p.name: p.read_text() for p in workspace.iterdir() if p.is_file()}
        if tool_calls:
            standin.queue({"tool_calls": [{"name": name, "input": args} for name, args in tool_calls]})
        standin.queue({"text": f"answer {n}"})
        sent = len(standin.requests)
        assert app.turn(f"turn {n}").text == f"answer {n}"
        texts = first_user_texts(standin.requests[sent], f"turn {n}")
        expected_note = PLAN_ON if mode == "plan" else PLAN_OFF if told else None
        assert texts == ([expected_note] if expected_note else []) + [f"turn {n}"]
        told = mode == "plan"
        if mode == "plan":
            assert {p.name: p.read_text() for p in workspace.iterdir() if p.is_file()} == before
        for request in standin.requests[sent:]:
            validate_request(request)
        if compact:
            app.compact("")                                   # (the stand-in writes the summary itself)
        history = list(app.messages)
        add_user_text(history, "next")
        validate_request({"model": "m", "max_tokens": 10, "messages": history})
    app.close()


def test_print_mode_plans_with_approval_mode_plan(tmp_path, workspace, standin, monkeypatch, capsys):
    from support.helpers import run_main
    standin.queue({"tool_calls": [{"name": "write_file", "input": {"path": "w.txt", "content": "x"}}]},
                  {"text": "THE PLAN"})
    env = base_env(tmp_path, standin)
    code, out, err = run_main(["-p", "plan it", "--approval-mode", "plan"], env, workspace, monkeypatch, capsys)
    assert code == 0 and out == "THE PLAN\n" and not (workspace / "w.txt").exists()
    assert "[plan mode] write_file was not run" in err
    assert last_user_texts(standin.requests[0]) == [PLAN_ON, "plan it"]


def test_after_the_sandbox_refused_a_command_plan_mode_refuses_it_and_asks_nothing(tmp_path, workspace, standin):
    # the repository's own file makes a read look refused by the sandbox ("Permission denied", exit 1): the model's
    # retry would have asked "run it outside the sandbox?", and a yes ran it there
    (workspace / "notes.txt").write_text("touch: cannot touch 'x': Permission denied\n")
    command = "cat notes.txt; false"
    standin.queue({"tool_calls": [{"name": "bash", "input": {"command": command}}]},
                  {"tool_calls": [{"name": "bash", "input": {"command": command}}]}, {"text": "THE PLAN"})
    app, _ = make_app(workspace, base_env(tmp_path, standin, approval_mode="plan"))
    asked = []
    app.set_asker(lambda request: asked.append(request) or pytest.fail("plan mode asked"))
    assert app.turn("plan it").text == "THE PLAN"
    assert asked == []
    first, second = (r["content"] for r in results_of(standin.requests[2]))
    assert "Permission denied" in first
    assert second.startswith("Not run: plan mode is on and the read-only sandbox refused it before")
    app.close()


@pytest.mark.parametrize("command", ["echo touch pwn | xargs env", "echo touch pwn | xargs timeout 5",
                                     "echo touch pwn | xargs nohup", "echo touch pwn | xargs xargs"])
def test_plan_mode_refuses_a_program_that_arrives_through_xargs(tmp_path, workspace, standin, command):
    standin.queue({"tool_calls": [{"name": "bash", "input": {"command": command}}]}, {"text": "THE PLAN"})
    app, _ = make_app(workspace, base_env(tmp_path, standin, approval_mode="plan"))
    app.set_asker(never_asked)
    assert app.turn("plan it").text == "THE PLAN"
    [result] = results_of(standin.requests[1])
    assert result["content"] == PLAN_REFUSAL and not (workspace / "pwn").exists()
    app.close()
