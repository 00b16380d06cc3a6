"""The slash commands (commands.py): what dispatch returns for each kind of line, and that every
command speaks through events — the same events in the REPL, -p and piped input."""

from __future__ import annotations

from commands import COMMANDS, QUIT, UNKNOWN, UNUSABLE, dispatch
from support.agents import base_env
from events import (HooksReport, ClearScreen, ContextReport, CostReport, HelpReport, MemoryReport, Notice, ShowToolResult,
                    ToolFinished)
from support.helpers import make_app
from support.helpers import run_main
from support.helpers import Recorder


def test_dispatch_words():
    app = Recorder()
    assert dispatch(app, "/nope") == UNKNOWN and isinstance(app.events[-1], Notice)
    for word in ("exit", "q", "QUIT", "/quit", "/exit"):
        assert dispatch(app, word) == QUIT
    assert dispatch(app, "//etc is a folder") == "turn" and app.turns == ["/etc is a folder"]
    assert dispatch(app, "a/b") == "turn" and dispatch(app, "   ") is None


def test_each_command_answers_with_its_event(tmp_path, workspace):
    app, events = make_app(workspace, base_env(tmp_path, None), demo="on")
    expected = {"/help": HelpReport, "/context": ContextReport, "/cost": CostReport, "/memory": MemoryReport,
                "/hooks": HooksReport, "/last": ShowToolResult}
    for name, kind in expected.items():
        assert dispatch(app, name) is None and isinstance(events[-1], kind), name
    assert events[-1].finished is None
    finished = ToolFinished("t1", "bash", "all of it", False, 0.2)
    app.emit(finished)
    dispatch(app, "/last")
    assert events[-1].finished is finished
    dispatch(app, "/clear")
    assert isinstance(events[-2], ClearScreen) and "history cleared" in events[-1].text and app.last_tool is None
    dispatch(app, "/compact")
    assert events[-1] == Notice("nothing to compact yet", "warning")
    assert dispatch(app, "/login") == UNUSABLE             # nobody to ask for the key
    dispatch(app, "/plan")
    assert app.approvals.mode == "plan" and "only reading" in events[-1].text
    dispatch(app, "/plan off")
    assert app.approvals.mode == "yolo"                    # back to the mode it had (base_env's)
    assert set(expected) | {"/clear", "/compact", "/login", "/logout", "/retry", "/plan", "/quit", "/timeline", "/clean",
                            "/model", "/resume", "/undo", "/rewind", "/mcp", "/tasks"} == set(COMMANDS)   # /model…/rewind: test_undo_model_mentions.py; /mcp: tests/e2e/test_mcp_pty.py
    app.close()


def test_help_in_print_mode_goes_to_stderr_and_exits_0(tmp_path, workspace, monkeypatch, capsys):
    code, out, err = run_main(["--demo", "-p", "/help"], base_env(tmp_path, None), workspace, monkeypatch, capsys)
    assert code == 0 and out == ""
    assert all(name in err for name in COMMANDS) and "exit, q" in err and "Keys" in err
