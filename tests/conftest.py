"""Shared fixtures, the hypothesis profiles, and what holds for every test.

Fixtures: `workspace` (an empty folder), `standin` (the strict stand-in API server; for a test marked
`scripted`, the in-process ScriptedModel of llm/scripted.py instead: the same scripts, brains,
strictness and records, without HTTP, the SDK or threads), `app_for` (the real App in this process
against it) and `repl` (`python agent.py` in a pseudo-terminal against it). Both stand-ins refuse what
the real API would, and the test fails if either did. `other` is a second stand-in
that accepts any key: where a hostile .env would send the key. Helpers to import are in tests/support/.

Markers (pytest.ini): everything under tests/e2e/ is marked `slow` here — those tests start processes
(agent.py in a pseudo-terminal or on pipes, `python -m standin`, pip); `pytest -m "not slow"` is the
in-process lane. `pty` and `install` are set by the tests themselves.

For every test, its SIGINT and SIGTERM handlers are put back afterwards (a leftover handler made
unrelated tests flaky); and the run fails if a test left files in the repository (`git status`
before and after: tests write under tmp_path).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from standin import StandIn
from support.agents import PROTECTED_KEY, ROOT, SMALL_WINDOW, TEST_KEY, base_env, spawn_agent

E2E = Path(__file__).resolve().parent / "e2e"
RESTORED_SIGNALS = (signal.SIGINT, signal.SIGTERM)
CACHES = re.compile(r"(^|[ /])(__pycache__|\.pytest_cache|\.hypothesis|\.ruff_cache|\.mypy_cache|\.venv|venv)/")   # not leftovers

# Property tests build histories and run compaction, files and the stand-in's validator: no deadline
# (a slow example on a busy machine is not a failure), and large, slow-to-draw data is what they mean.
settings.register_profile("default", deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
# CI (CI=true): the same examples on every run, so a red build reproduces; no example database.
settings.register_profile("ci", settings.get_profile("default"), derandomize=True, database=None)
settings.load_profile("ci" if os.environ.get("CI", "").lower() in ("1", "true", "yes") else "default")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.is_relative_to(E2E):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def signal_handlers_put_back():
    handlers = {sig: signal.getsignal(sig) for sig in RESTORED_SIGNALS}
    yield
    for sig, handler in handlers.items():
        if handler is not None and signal.getsignal(sig) is not handler:      # None: set outside Python
            signal.signal(sig, handler)


def _repository_state() -> set[str] | None:
    """`git status` of the repository, ignored files included (.sessions/, .task_outputs/ are ignored),
    but not the caches Python and the test tools keep."""
    try:
        out = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all", "--ignored"], cwd=ROOT,
                             capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    new_files = (line for line in out.stdout.splitlines() if line.startswith(("??", "!!")))   # not edits
    return {line for line in new_files if not CACHES.search(line)}


_before: set[str] | None = None


def pytest_sessionstart(session):
    global _before
    if not hasattr(session.config, "workerinput"):          # not in each xdist worker: once, in the controller
        _before = _repository_state()


def pytest_sessionfinish(session, exitstatus):
    after = _repository_state() if _before is not None else None
    if after is None or _before is None or not after - _before:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.ensure_newline()
        reporter.write_line("\ntests left files behind in the repository: " + ", ".join(sorted(after - _before)),
                            red=True)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


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


@pytest.fixture
def small_window():
    """A stand-in whose context window is SMALL_WINDOW tokens (key "k")."""
    server = StandIn(api_key="k", context_window=SMALL_WINDOW).start()
    yield server
    server.stop()
    assert not server.rejections, server.rejections


@pytest.fixture
def keyed_standin():
    """A stand-in that takes PROTECTED_KEY only (the key the key-protection tests watch for)."""
    server = StandIn(api_key=PROTECTED_KEY).start()
    yield server
    server.stop()
    assert not server.rejections


@pytest.fixture
def other():
    """A second stand-in, the endpoint a hostile .env names: it accepts any key, so a request that
    reached it would succeed (tests assert it got none)."""
    server = StandIn().start()
    yield server
    server.stop()


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


@pytest.fixture(scope="module")
def backend():
    """The stand-in behind the gateway lane's LiteLLM (/v1/chat/completions), with a small model's window
    (support/gateway.py's WINDOW); a module that needs another backend defines its own."""
    from support.gateway import WINDOW
    server = StandIn(context_window=WINDOW).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def gateway(backend, tmp_path_factory):
    """A real LiteLLM proxy (tests/support/gateway.py) in front of the requesting module's own `backend`
    stand-in, for the module's tests (the gateway lane: test_gateway*.py)."""
    from support.gateway import MODEL, LiteLLMGateway
    with LiteLLMGateway(backend.url, tmp_path_factory.mktemp("litellm"), MODEL) as gw:
        yield gw


@pytest.fixture
def gw(backend, gateway):
    """The gateway, with the backend's script, records and refusals cleared for this test."""
    with backend.lock:
        backend.replies.clear()
        backend.requests.clear()
        backend.answers.clear()
        backend.rejections.clear()
    backend.plain_only, backend.chat_overflow = 0, "empty"
    return gateway


@pytest.fixture
def app_via(tmp_path, workspace, backend, gw):
    """make(**settings) -> (App, events): an in-process s08 whose endpoint is the gateway; the backend
    refused no request when the test ends (the history stayed valid through the proxy)."""
    from agent import App
    from support.gateway import MODEL

    def make(**settings):
        events: list = []
        env = base_env(tmp_path, None, anthropic_base_url=gw.url, anthropic_api_key="sk-gateway-key",
                       model_id=MODEL, **settings)
        app = App(workspace, environ=env)
        app.set_emit(events.append)
        return app, events
    yield make
    assert not backend.rejections, backend.rejections
