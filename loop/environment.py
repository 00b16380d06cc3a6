"""The environment block of the system prompt: the date, the OS, the shell and the workspace's git
branch and short status, as they were when the session started.

    environment_section(workspace) -> str     "\n\n<environment>…</environment>"

Written once per session (a new Agent: at start, on /clear, on a resume) and never refreshed within
it, so the system prompt — the first part of every prompt's cached prefix — stays the same from call
to call; the block says its facts date from the start. It comes after s08's own text, which is
unchanged. git runs with the same guards as the bash tool's commands (no fsmonitor program, no
optional locks, no bare repository found by walking into a folder), without the key, with a timeout;
what it prints is the workspace's (untrusted), cleaned and bounded like any text the model reads.
"""

from __future__ import annotations

import os
import platform
import subprocess
import time
from pathlib import Path

from messages import clean_text
from redact import SECRET_SETTINGS
from tools.background import own_env

GIT_TIMEOUT = 2.0            # seconds (s08 waits for it at start); a slower repository: "not checked"
STATUS_LINES = 20            # changed paths listed; the rest are counted
LINE_CHARS = 200
GIT_GUARDS = ("--no-optional-locks", "-c", "core.fsmonitor=false", "-c", "safe.bareRepository=explicit")


def _git_status(workspace: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k not in SECRET_SETTINGS}
    env.update(GIT_TERMINAL_PROMPT="0", GIT_OPTIONAL_LOCKS="0", LC_ALL="C", **own_env())   # s08's own: no command claims it
    try:
        out = subprocess.run(["git", *GIT_GUARDS, "status", "--short", "--branch"], cwd=workspace, env=env,
                             stdin=subprocess.DEVNULL, capture_output=True, timeout=GIT_TIMEOUT, check=False)
    except (OSError, subprocess.SubprocessError):
        return "not checked (git did not answer)"
    if out.returncode != 0:
        return "the workspace is not in a git repository"
    lines = [clean_text(line)[:LINE_CHARS] for line in out.stdout.decode("utf-8", "replace").splitlines()]
    if not lines:
        return "not checked (git printed nothing)"
    branch = lines[0].removeprefix("## ")            # "main...origin/main [ahead 1]", "HEAD (no branch)"
    if branch.startswith("No commits yet on "):
        branch = branch.removeprefix("No commits yet on ") + " (no commits yet)"
    changed = lines[1:]
    if not changed:
        return f"branch {branch}; no uncommitted changes"
    more = len(changed) - STATUS_LINES
    listed = "\n".join("  " + line for line in changed[:STATUS_LINES])
    return (f"branch {branch}; {len(changed)} changed or untracked path{'s' * (len(changed) != 1)} "
            f"(git status --short):\n{listed}" + (f"\n  … {more} more" if more > 0 else ""))


def environment_section(workspace: Path) -> str:
    """The block appended to the system prompt for a new session."""
    now = time.localtime()
    shell = os.environ.get("SHELL", "")
    lines = [
        "Facts about the environment, noted when this session started (not updated during it: run a "
        "command for the current state):",
        f"date: {time.strftime('%Y-%m-%d (%A)', now)}",
        f"os: {platform.system()} {platform.release()} ({platform.machine()})",
        "shell: the bash tool runs `bash -c` in the workspace"
        + (f"; the person's login shell is {clean_text(shell)[:LINE_CHARS]}" if shell else ""),
        f"git: {_git_status(workspace)}",
    ]
    return "\n\n<environment>\n" + "\n".join(lines) + "\n</environment>"
