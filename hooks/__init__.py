"""Hooks: the person's commands that run when something happens in a session, in Claude Code's format.

    settings.py   the `hooks` key of ~/.config/s08/settings.json and .s08/settings.json → HookSpecs
    process.py    one hook run: JSON on stdin, a timeout, bounded output, its process group killed after
    outcome.py    what its exit code and JSON output mean
    session.py    Hooks: the active hooks of a session, the project hooks' agreement, fire(event, …)
    payloads.py   the JSON each event sends, with Claude Code's field names
"""

from .outcome import Outcome
from .session import Hooks
from .settings import EVENTS, HookSpec

__all__ = ["EVENTS", "HookSpec", "Hooks", "Outcome"]
