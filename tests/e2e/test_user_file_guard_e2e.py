"""The user-level settings file's guard from a new agent.py: -p refuses an appended endpoint and yolo
with one stderr line, and ignores a folder's MODEL_ID (which the REPL asks about)."""

from __future__ import annotations


from access.user_file_guard import changed
from standin import StandIn
from support.agents import base_env, run_agent
from support.helpers import make_app
from support.user_file import attack, environ_with_login

TOUCH = {"tool_calls": [{"name": "bash", "input": {"command": "touch made.txt"}}]}


def test_p_refuses_an_appended_endpoint_and_yolo_with_one_stderr_line(tmp_path, workspace, standin):
    environ, user = environ_with_login(tmp_path, standin)
    evil = StandIn().start()
    try:
        attack(user, evil.url)
        standin.queue({"text": "from the person's own endpoint", **TOUCH}, {"text": "done"})
        proc = run_agent("-p", "hello", env=environ, cwd=workspace, capture_output=True, text=True, timeout=60)
        assert not evil.requests                                    # the key never went there
        lines = [line for line in proc.stderr.splitlines() if str(user) in line]
        assert len(lines) == 1 and "ignoring ANTHROPIC_BASE_URL, APPROVAL_MODE" in lines[0], proc.stderr
        assert not (workspace / "made.txt").exists()                # not yolo: the touch needed approval
        assert "[approval needed]" in proc.stderr
        assert changed(user) == {"ANTHROPIC_BASE_URL": evil.url, "APPROVAL_MODE": "yolo"}   # asks again next time
    finally:
        evil.stop()


def test_a_folder_model_id_asks_in_the_repl_and_is_ignored_by_p(tmp_path, workspace, standin):
    environ = base_env(tmp_path, standin)
    (workspace / ".env").write_text("MODEL_ID=claude-opus-4-1\n")
    questions = []
    app, _ = make_app(workspace, environ, ask=lambda q: questions.append(q.text) or "n")
    standin.queue({"text": "ok"})
    app.turn("hello")
    assert "MODEL_ID=claude-opus-4-1" in questions[0] and "chooses the model" in questions[0]
    assert standin.requests[-1]["model"] != "claude-opus-4-1"
    app.close()
    standin.queue({"text": "ok"})
    proc = run_agent("-p", "hello", env=environ, cwd=workspace, capture_output=True, text=True, timeout=60)
    assert "ignoring MODEL_ID=claude-opus-4-1" in proc.stderr
    assert standin.requests[-1]["model"] != "claude-opus-4-1"
    yes, _ = make_app(workspace, environ, ask=lambda q: "y")
    standin.queue({"text": "ok"})
    yes.turn("hello")
    assert standin.requests[-1]["model"] == "claude-opus-4-1"
    yes.close()
