"""Shared fixtures: a temp workspace, a strict stand-in API server, and ways to run the agent.

`app_for(...)` builds the real App in-process (real SDK, real HTTP to the
stand-in); `spawn_agent(...)` runs `python agent.py` in a pseudo-terminal.
A test marked `@pytest.mark.scripted` gets the in-process ScriptedModel (llm/scripted.py) as its
`standin` instead — the same scripts, brains, strictness and records, without HTTP, the SDK or
threads — and `app_for` builds the App with PROVIDER=scripted. Both refuse what the real API would,
and the test fails if either did.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from standin import StandIn  # noqa: E402

AGENT = str(ROOT / "agent.py")
TEST_KEY = "test-key"


@pytest.fixture
def workspace(tmp_path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
def standin(request, monkeypatch):
    if request.node.get_closest_marker("scripted"):
        from llm.providers import PROVIDERS
        from llm.scripted import ScriptedModel
        model = ScriptedModel()
        monkeypatch.setitem(PROVIDERS, "scripted", model.bind)
        yield model
        assert not model.rejections, f"the scripted model refused requests: {model.rejections}"
        return
    server = StandIn(api_key=TEST_KEY).start()
    yield server
    server.stop()
    assert not server.rejections, f"the stand-in rejected requests: {server.rejections}"


def base_env(tmp_path: Path, server=None, **settings) -> dict:
    """A minimal, explicit environment for an agent process (nothing inherited by accident). Tests that
    are not about approvals opt into APPROVAL_MODE=yolo here; the approval tests pass
    approval_mode="default" (the real default)."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path / "home"),
           "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TERM": "xterm-256color", "PROMPT_TOOLKIT_NO_CPR": "1",
           "PYTHONUNBUFFERED": "1", "API_MAX_RETRIES": "2", "APPROVAL_MODE": "yolo"}
    if isinstance(server, StandIn):
        env.update(ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY=TEST_KEY)
    elif server is not None:          # the scripted model (a test marked `scripted`)
        env.update(PROVIDER="scripted", ANTHROPIC_API_KEY=TEST_KEY)
    env.update({k.upper(): str(v) for k, v in settings.items()})
    return env


@pytest.fixture
def app_for(tmp_path, workspace, standin):
    """Build an in-process App against the stand-in; returns (app, events)."""
    from agent import App

    def make(**settings):
        events: list = []
        app = App(workspace, environ=base_env(tmp_path, standin, **settings))
        app.set_emit(events.append)
        return app, events
    return make


@pytest.fixture
def repl(tmp_path, workspace, standin):
    """Start `python agent.py` in a pseudo-terminal against the stand-in; returns it at the prompt.
    `brain` (optional) answers whatever the stand-in's script does not."""
    children = []

    def start(brain=None, columns=200, args=(), **settings):
        if brain is not None:
            standin.brain = brain
        child = spawn_agent(base_env(tmp_path, standin, **settings), workspace, *args, timeout=30, columns=columns)
        children.append(child)
        child.expect_exact("s08 >> ")
        return child
    yield start
    for child in children:
        if child.isalive():
            child.terminate(force=True)


def spawn_agent(env: dict, cwd: Path, *args: str, timeout: float = 15, columns: int = 200):
    """`python agent.py` in a pseudo-terminal of 50 rows; everything it prints is kept in
    `child.logfile_read` (a StringIO) for tests/screen.py."""
    import io
    import pexpect
    child = pexpect.spawn(sys.executable, [AGENT, *args], cwd=str(cwd), env=env, encoding="utf-8",
                          dimensions=(50, columns), timeout=timeout)
    child.logfile_read = io.StringIO()
    return child
