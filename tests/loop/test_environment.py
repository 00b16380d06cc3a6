"""The environment block of the system prompt (loop/environment.py): date, OS, shell, the workspace's
git branch and short status — after s08's own text, unchanged for the whole session (the cached prefix
stays the same), written anew on /clear and for a resumed session; git runs without the repository's
fsmonitor program. In-process against the stand-in."""

from __future__ import annotations

import json
import subprocess
import time

from support.agents import base_env
from support.helpers import make_app
from loop.agent_loop import SYSTEM_PROMPT
from session.file import list_sessions
from session.replay import load_session


def git(workspace, *args) -> None:
    subprocess.run(["git", *args], cwd=workspace, check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(workspace), "PATH": "/usr/bin:/bin"})


def system_of(request) -> str:
    system = request["system"]
    return system if isinstance(system, str) else "".join(b["text"] for b in system)


def test_the_block_follows_the_prompt_and_stays_for_the_session(tmp_path, workspace, standin):
    git(workspace, "init", "-q", "-b", "feature-x")
    (workspace / "draft.txt").write_text("x")
    standin.queue({"text": "one"}, {"text": "two"}, {"text": "three"})
    app, _ = make_app(workspace, base_env(tmp_path, standin))
    app.turn("first")
    system = system_of(standin.requests[-1])
    assert system.startswith(SYSTEM_PROMPT.format(workspace=workspace))      # s08's own text, unchanged, first
    block = system[system.index("<environment>"):]
    assert time.strftime("%Y-%m-%d") in block and "os: " in block and "bash -c" in block
    assert "branch feature-x" in block and "?? draft.txt" in block
    (workspace / "later.txt").write_text("y")
    app.turn("second")
    assert system_of(standin.requests[-1]) == system                          # the cached prefix does not move
    app.clear()
    app.turn("third")
    assert "?? later.txt" in system_of(standin.requests[-1])                 # a new session: written anew
    app.close()


def test_a_resumed_session_gets_the_environment_of_now(tmp_path, workspace, standin):
    standin.queue({"text": "one"}, {"text": "two"})
    app, _ = make_app(workspace, base_env(tmp_path, standin))
    app.turn("first")
    assert "not in a git repository" in system_of(standin.requests[-1])
    app.close()
    git(workspace, "init", "-q", "-b", "trunk")
    resumed, _ = make_app(workspace, base_env(tmp_path, standin), resume=load_session(list_sessions(workspace)[0]))
    resumed.turn("again")
    assert "branch trunk" in system_of(standin.requests[-1])
    resumed.close()


def test_the_repository_cannot_run_a_program_through_the_status(tmp_path, workspace, standin):
    git(workspace, "init", "-q", "-b", "main")
    hook = workspace / "monitor.sh"
    hook.write_text(f"#!/bin/sh\ntouch {tmp_path / 'ran'}\n")
    hook.chmod(0o755)
    git(workspace, "config", "core.fsmonitor", str(hook))
    standin.queue({"text": "one"})
    app, _ = make_app(workspace, base_env(tmp_path, standin))
    app.turn("hi")
    app.close()
    assert not (tmp_path / "ran").exists()
    assert "branch main" in json.dumps(standin.requests[-1]["system"])
