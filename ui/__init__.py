"""Everything a person sees or types; no other module imports rich or prompt_toolkit.

    sanitize.py        safe(): the one sanitizer every untrusted byte passes before a terminal
    render.py          events → screen (Renderer); quiet.py: events → stderr for -p and piped input
    activity.py        the live area: spinner with elapsed seconds, the open tail of an answer or command
    markdown_stream.py the answer as Markdown while it streams, each closed block printed once
    toolview.py        tool lines: head and tail of the output, exit code, time; diffview.py: diffs
    reports.py         the status line, /context, /cost, /memory, /help
    keys.py            the keyboard during a turn (Esc interrupts, typing ahead is kept)
    approve.py         the approval question; repl.py: the `s08 >>` loop
    sessions_view.py   the banner, the resumed session, the --resume picker
    onboarding.py      the demo model on screen, the first-run key question, the REPL's `ask`

Names are imported on first use, so `-p` and piped runs do not load prompt_toolkit.
"""

from importlib import import_module

_WHERE = {"Renderer": "render", "QuietRenderer": "quiet", "say_err": "quiet", "say_out": "quiet",
          "safe": "sanitize", "seconds": "toolview", "summarize_input": "toolview", "summarize_output": "toolview",
          "PROMPT": "repl", "run_repl": "repl", "help_report": "reports", "pick_session": "sessions_view",
          "confirm_on_terminal": "sessions_view",
          "demo_notice": "onboarding"}

__all__ = sorted(_WHERE)


def __getattr__(name):
    if name not in _WHERE:
        raise AttributeError(f"module 'ui' has no attribute {name!r}")
    return getattr(import_module(f".{_WHERE[name]}", __name__), name)
