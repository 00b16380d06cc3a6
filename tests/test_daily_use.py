"""The small things a new user trips over (issue 24, item 5): the status line fits and shows what the
person allowed, /help's rows line up, /last's header is the call as one line, a resume counts what a
person counts, the demo counts output lines right, -p names the command that was run, and the
stand-in's hint uses the key it was given."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from approvals.policy import Answer, Approvals, Request
from commands import help_entries
from support.agents import base_env
from events import HelpReport, ShowToolResult, ToolFinished, TurnStatus
from support.helpers import make_app
from standin.brain import _outcome
from ui.render import Renderer
from ui.reports import help_report, status_line
from ui.sessions_view import counted


def test_the_status_line_never_wraps_and_keeps_the_approvals():
    for demo in (True, False):
        event = TurnStatus(123_456, 150_000, 0.5, 0.0123, True, demo, "default + every command")
        for width in (60, 80, 100, 200):
            line = status_line(event, width)
            assert "approvals default + every command" in line
            assert len(line) <= width or line == status_line(event, 0)     # the shortest form, however narrow
        assert len(status_line(event, 99)) <= 99
        assert status_line(event) == status_line(event, 10_000)          # -p and pipes: the full wording


def test_grants_show_in_the_status_after_an_always_answer():
    a = Approvals("default")
    assert a.summary() == "default"
    a.remember(Request("bash", "command", "rm x"), Answer(True, "session"))
    assert a.summary() == "default + every command"
    a.remember(Request("bash", "command", "npm test", prefixes=("npm test",)), Answer(True, "prefix"))
    a.remember(Request("write_file", "edit"), Answer(True, "session"))
    assert a.summary() == "default + every command, every file change, `npm test`"


def test_help_rows_line_up():
    entries = help_entries()
    rows = help_report(HelpReport(entries)).plain.splitlines()[1:len(entries) + 2]
    described = entries + [("exit, q", "leave (as do Ctrl-D and /quit)")]
    starts = {row.index(text) for row, (_, text) in zip(rows, described)}
    assert len(starts) == 1, rows                                          # every description starts in one column


def test_last_shows_the_call_as_one_line_not_a_dict(capsys):
    out = io.StringIO()
    console = Console(file=out, width=100, force_terminal=False)
    renderer = Renderer(console)
    finished = ToolFinished("t1", "bash", "hello\n[exit code 0]", False, 0.1, {}, {"command": "echo hello"})
    renderer(ShowToolResult(finished))
    shown = out.getvalue() + capsys.readouterr().out          # the pager writes to stdout
    assert "bash  echo hello" in shown and "{'command'" not in shown


def test_demo_counts_output_lines_without_the_exit_trailer():
    assert _outcome("f.txt\n[exit code 0]\n").startswith("1 line,")
    assert _outcome("a\nb\n[exit code 2]") == "2 lines, exit code 2"


@pytest.mark.scripted
def test_a_resume_counts_your_messages_and_the_model_calls(tmp_path, workspace, standin):
    from session.file import list_sessions
    from session.replay import load_session
    standin.queue({"text": "one"}, {"text": "two"})
    app, _ = make_app(workspace, base_env(tmp_path, standin))
    app.turn("first")
    app.turn("second")
    app.close()
    loaded = load_session(list_sessions(workspace)[0])
    assert counted(loaded) == "2 messages from you, 2 model calls"
