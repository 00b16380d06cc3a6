"""s08 — a terminal coding agent whose strength is context compaction.

    python agent.py                  interactive REPL at `s08 >>`
    python agent.py -p "prompt"      one request, prints the final answer (exit 0, or 1 on failure)
    echo "prompt" | python agent.py  one turn per input line, exits at end of input
    python agent.py --continue       reopen the newest session of this workspace (--resume [id]: pick one)
    python agent.py --demo           the built-in offline demo model (the default when no key is configured)

Installed with `pipx install .`, the same program is the `s08` command (see launch.py).

Only the entry point: the command line is cli.py, a session app.py, the slash commands commands.py,
the loop loop/agent_loop.py; all printing in ui/. `from agent import App, main, Agent, …` keeps working: the
names are loaded on first use, so the key guard (access/keyguard.py) re-executes the process before the
heavy modules (the model SDK, rich, prompt_toolkit) are imported.
"""

from __future__ import annotations

import sys
from importlib import import_module

_WHERE = {"App": "app", "main": "cli", "Agent": "loop.agent_loop", "TurnResult": "loop.agent_loop",
          "agent_loop": "loop.agent_loop", "run_turn": "loop.agent_loop"}

__all__ = sorted(_WHERE)


def __getattr__(name):
    if name not in _WHERE:
        raise AttributeError(f"module 'agent' has no attribute {name!r}")
    return getattr(import_module(_WHERE[name]), name)


def run() -> None:
    """Start s08: guard the key first (it may re-exec this process), then the command line."""
    from access.keyguard import keep_key_from_children
    keep_key_from_children()
    from cli import main as cli_main
    try:
        code = cli_main()
    except KeyboardInterrupt:      # Ctrl-C outside a turn (e.g. while starting up)
        code = 130
    sys.exit(code)


if __name__ == "__main__":
    run()
