"""First run and the demo model on screen: the demo banner, the -p / piped notice, the first-run key
question, and `make_ask`, the REPL's answer to the app's questions (a changed endpoint, a key).
Like the approval question, a question here is answered only by what is typed after it appears
(keys typed ahead are dropped), and Esc is no."""

from __future__ import annotations

import termios
import time

from prompt_toolkit import prompt as read_line
from prompt_toolkit.key_binding import KeyBindings
from rich.console import Console
from rich.text import Text

from events import Question
from version import program_name
from .approve import GRACE
from .sanitize import safe

TRY = ("read every Python file one by one · run ls · read README.md · write notes.txt: hello · "
       "use the compact tool · tell me a long story")


def _why(app) -> str:
    return "--demo (or DEMO=on) is set" if app.access.demo_choice == "on" else "no API key is configured"


def demo_notice(app) -> str:
    """One line for stderr in -p and piped modes."""
    return (f"s08: {_why(app)}, so the offline demo model answers: scripted replies, not a real model. "
            f"For a real model run {program_name(exact=True)} and type /login, or set ANTHROPIC_API_KEY; "
            "--no-demo turns the demo off.")


def print_demo_banner(console: Console, app) -> None:
    why = _why(app)
    console.print(Text("Offline demo model. ", style="bold yellow") + Text(
        f"{why[0].upper()}{why[1:]}, so s08 answers with scripted replies from its built-in demo model — not a "
        "real model. They show the tools and the compaction at work."))
    console.print(Text("Try: ", style="dim") + Text(TRY))
    console.print(Text("For a real model: ", style="dim") + Text(
        f"/login (checks a key, then stores it in {app.access.user_file}), or set ANTHROPIC_API_KEY."))


def make_ask(console: Console, renderer, fd: int = 0):
    """The app's `ask`: show the question, read one line (hidden for a key); Esc, Ctrl-C or Ctrl-D is no
    answer."""
    keys = KeyBindings()

    @keys.add("escape", eager=True)
    def _no(event):
        event.app.exit(result=None)

    def ask(question: Question) -> str | None:
        with renderer.interactive():          # nothing live on screen; the keys go to this question
            console.print(Text(safe(question.text), style="yellow"))
            time.sleep(GRACE)                 # keys typed before it or as it appears (ui/approve.py) …
            try:
                termios.tcflush(fd, termios.TCIFLUSH)       # … are not an answer
            except (termios.error, OSError):
                pass
            try:
                return read_line(question.prompt, is_password=question.secret, key_bindings=keys)
            except (KeyboardInterrupt, EOFError):
                return None
    return ask


def first_run(app) -> None:
    """On the first run in a terminal with no key: offer to store one now (Enter skips, once)."""
    key = app.ask(Question("First run: paste an Anthropic API key now to use a real model (/login later does the "
                           "same), or press Enter to go on with the demo model.",
                           "key (hidden, Enter skips): ", secret=True))
    if key and key.strip():
        app.login(key.strip())
    app.access.first_run_done(app.emit)
