"""The one sanitizer, and every render path that puts untrusted text on a terminal, in process.

Hypothesis builds strings full of control sequences and sends them through each path — the
interactive renderer (every event type, every string field), the -p / piped renderer, the banner,
the resumed-session view, the --resume picker, /help, the approval question, the /last pager and
the answer on stdout — into a real rich Console that believes it is a terminal. No injected control
byte may come out raw. The same attack through a real pseudo-terminal is in test_sanitize_pty.py.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from types import SimpleNamespace

from hypothesis import HealthCheck, given, settings, strategies as st
from rich.console import Console

from support.attacks import injected, raw_injections
from approvals.policy import Request
from config import Settings
from session.costs import TokenTally
from events import (Compaction, ContextReport, CostReport, HelpReport, Interrupted, Notice, RequestStarted,
                    ResponseDone, Retrying, ShowToolResult, TextDelta, ToolFinished, ToolOutput, ToolStarted, TurnStatus)
from tools.preview import FileChange
from ui.approve import question_lines
from ui.quiet import QuietRenderer, say_err, say_out
from ui.render import Renderer
from ui.reports import help_report
from ui.sanitize import safe, safe_data
from ui.sessions_view import print_banner, session_lines, show_resumed

def terminal(width: int = 80) -> Console:
    return Console(file=io.StringIO(), force_terminal=True, width=width, height=30, color_system="truecolor",
                   highlight=False, emoji=False, legacy_windows=False)


class Captured:
    """A rich pager that keeps what it was given, instead of starting `less`."""
    text = ""

    def show(self, content: str) -> None:
        Captured.text = content


def assert_clean(output: str) -> None:
    found = raw_injections(output)
    assert not found, f"raw control sequences reached the terminal: {found}"


# ---- the function itself --------------------------------------------------------------------

def test_control_characters_become_visible_and_nothing_else_changes():
    assert safe("a\x1b[2Jb\x07c\x9bd\x7fe\rf\r\ng\th\u202ei") == "a^[[2Jb^Gc^[[d^?e\nf\ng\th<U+202E>i"
    assert safe("plain text, 中文, emoji 🎉 and [bold]markup[/bold]") == \
        "plain text, 中文, emoji 🎉 and [bold]markup[/bold]"


@given(st.text())
def test_safe_leaves_no_control_character_and_is_idempotent(text):
    out = safe(text)
    assert not [c for c in out if (ord(c) < 0x20 and c not in "\n\t") or 0x7f <= ord(c) < 0xa0]
    assert safe(out) == out


def test_safe_data_reaches_every_string_of_an_event():
    event = ToolFinished("id\x1b", "bash\x1b]52;c;x\x07", "out\x9b", True, 1.0,
                         {"change": FileChange("p\x1b", "a\x1b", "b\x1b"), "list": ["\x1b"]}, {"k\x1b": ("\x1b",)})
    text = json.dumps(safe_data(event).__dict__, default=lambda o: o.__dict__, ensure_ascii=False)
    assert "\x1b" not in text and "\x9b" not in text and "\\u001b" not in text


# ---- every render path -----------------------------------------------------------------------

def all_events(s: str) -> list:
    change = FileChange(s, s, s + "\nmore " + s)
    return [
        RequestStarted(), TextDelta(s), TextDelta("\n\n# " + s + "\n\n| " + s + " | x |\n|---|---|\n| a | b |\n\n"),
        TextDelta("```" + s + "\n" + s + "\n```\n"), ResponseDone("end_turn"),
        ToolStarted("t1", s, {"command": s, s: s}), ToolOutput("t1", s), ToolOutput("t1", "\n" + s),
        ToolFinished("t1", "bash", s + "\n[exit code 2]", False, 0.5, {"exit_code": 2}, {"command": s}),
        ToolFinished("t2", s, s, True, 0.1, {}, {s: s}),
        ToolFinished("t3", "edit_file", s, False, 0.1, {"change": change}, {"path": s}),
        ToolFinished("t4", "write_file", s, False, 0.1, {"change": FileChange(s, None, s)}, {"path": s}),
        ToolFinished("t5", "bash", f"<persisted-output>\nOutput too large for the context (9 chars, 9 lines). "
                     f"Full output saved to: {s}\n\nPreview (first 9 chars):\n{s}\n</persisted-output>",
                     False, 0.1, {"exit_code": 0}, {"command": s}),
        ToolFinished("t6", "bash", s, True, 0.1, {"declined": s}, {"command": s}),
        ToolFinished("t7", "bash", s, True, 0.1, {"interrupted": True}, {"command": s}),
        ToolFinished("t8", "read_file", s, False, 0.1, {}, {"path": s}),
        Retrying(1.0, s, 1, 2), Notice(s, "error"), Notice(s), Compaction(s, s), Compaction("x", "[" + s),
        TurnStatus(1, 2, 0.5, 0.1, True, s), ContextReport({"system": 1, "tools": 1, "messages": 1,
                                                            "tool results": 1}, 4, 10, 20),
        CostReport(s, None, TokenTally(), TokenTally()), Interrupted(s),
    ]


@settings(max_examples=60)
@given(s=injected, width=st.sampled_from([60, 80, 200]))
def test_the_interactive_renderer(s, width):
    console = terminal(width)
    renderer = Renderer(console)
    console.pager = lambda **kw: Console.pager(console, pager=Captured(), **kw)
    for event in all_events(s):
        renderer(event)
    renderer(ShowToolResult(ToolFinished("t", s, s, False, 0.1, {}, {s: s})))
    renderer.finish()
    assert_clean(console.file.getvalue())
    assert_clean(Captured.text)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(s=injected)
def test_the_quiet_renderer_and_the_answer_on_a_terminal(s, capsys, monkeypatch):
    stream = io.StringIO()
    renderer = QuietRenderer(stream)
    for event in all_events(s) + [ShowToolResult(ToolFinished("t", s, s, False, 0.1))]:
        renderer(event)
    say_err(s)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    say_out(s)
    out, err = capsys.readouterr()
    assert_clean(stream.getvalue() + out + err)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(s=injected)
def test_the_banner_the_resumed_view_help_and_the_approval_question(s, tmp_path):
    console = terminal()
    settings_ = Settings(model_id=s, anthropic_base_url=s)
    messages = [{"role": "user", "content": s}, {"role": "assistant", "content": [
        {"type": "text", "text": s}, {"type": "tool_use", "id": "x", "name": s, "input": {"command": s, s: s}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x", "content": s}]}]
    from compaction.continuity import Continuity
    from compaction.user_messages import Typed
    typed = Continuity()
    typed.typed.entries = [Typed(s)]
    loaded = SimpleNamespace(id=s, notices=[s, s], continuity=typed, usages=[])
    app = SimpleNamespace(settings=settings_, workspace=Path(s.replace("\x00", "")), warnings=[s], demo=False,
                          approvals=SimpleNamespace(mode=s), resumed=loaded, messages=messages,
                          missing_key_message=lambda: s)
    print_banner(console, app)
    show_resumed(console, loaded, messages)
    for request in (Request("bash", "command", s, prefixes=(s,)), Request(s, "edit", change=FileChange(s, s, s + "x")),
                    Request(s, "edit", change=FileChange(s, None, s))):
        for line in question_lines(request, 60):
            console.print(line)
    console.print(help_report(HelpReport([(s, s)])))
    assert_clean(console.file.getvalue())


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(s=injected)
def test_the_session_picker(s, tmp_path):
    log = tmp_path / ".sessions" / f"x{abs(hash(s))}.jsonl"
    log.parent.mkdir(exist_ok=True)
    records = [{"t": "session", "id": s, "origin": "print"}, {"t": "append", "m": {"role": "user", "content": s}},
               {"t": "append", "m": {"role": "assistant", "content": s}},
               {"t": "append", "m": {"role": "user", "content": s + " again"}}]
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    console = terminal(60)
    for line in session_lines(1, log, 60):
        console.print(line)
    assert_clean(console.file.getvalue())
