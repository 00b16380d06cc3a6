"""Shared fixtures: a temp workspace, a strict stand-in API server, and ways to run the agent; and
the test lanes.

`app_for(...)` builds the real App in-process (real SDK, real HTTP to the
stand-in); `spawn_agent(...)` runs `python agent.py` in a pseudo-terminal and `run_agent` /
`popen_agent` on pipes — as a fork of this worker with the imports done (forked_agent.py), or a new
interpreter with `fresh=True`.
A test marked `@pytest.mark.scripted` gets the in-process ScriptedModel (llm/scripted.py) as its
`standin` instead — the same scripts, brains, strictness and records, without HTTP, the SDK or
threads — and `app_for` builds the App with PROVIDER=scripted. Both refuse what the real API would,
and the test fails if either did.

Lanes (markers in pytest.ini):
  slow     the test starts a Python interpreter of s08: agent.py in a pty or a subprocess,
           `python -m standin`, the installed `s08`, a venv or pip. `pytest -m "not slow"` is the
           in-process lane.
  install  builds and installs the package (also slow); addopts leaves it out: `pytest -m install`.
  pty      drives the REPL in a pseudo-terminal (also slow).

Here, for every test:
  - a test NOT marked slow fails if it starts such a process. What counts is argv[0] (python*,
    pip*, s08, sys.executable) or an argument naming agent.py, through subprocess.Popen,
    os.system, os.posix_spawn(p) and pexpect.spawn. A shell command (the bash tool's
    `bash -c ...`, git, sh) is cheap and allowed: the string after `-c` is not looked into; so is the
    bash tool's sandbox launcher (`python -S -I tools/sandbox_launch.py … -- bash -c …`: standard
    library only, about 15 ms, part of running a command like bash itself);
  - the SIGINT and SIGTERM handlers are put back afterwards (a leftover handler made unrelated tests
    flaky);
  - long tests are scheduled first and shared out evenly among the workers (pytest.ini runs
    `--dist worksteal`), so no long test starts last on an otherwise idle machine;
  - the repository's `git status --porcelain` must be the same at the end of the run as at the start
    (no test leaves files behind in the repository; tests write under tmp_path).
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from standin import StandIn  # noqa: E402

AGENT = str(ROOT / "agent.py")
TEST_KEY = "test-key"
SLOW_PROGRAMS = re.compile(r"python[0-9.]*|pip[0-9.]*|s08")     # argv[0] names that start s08's Python
SLOW_SCRIPTS = {"agent.py", "launch.py"}                         # arguments that are s08 itself
SANDBOX_LAUNCHER = "sandbox_launch.py"                            # the bash tool's, not s08 (docstring)
RESTORED_SIGNALS = (signal.SIGINT, signal.SIGTERM)
CACHES = re.compile(r"(^|[ /])(__pycache__|\.pytest_cache|\.hypothesis|\.ruff_cache|\.mypy_cache|\.venv|venv)/")   # not leftovers


# ---- lanes: the spawn guard, signal handlers, order, nothing left in the repository -----------------

class SpawnRefused(RuntimeError):
    """An unmarked test started a Python interpreter of s08."""


def starts_s08_python(argv) -> bool:
    """Whether this argv starts a Python interpreter (of s08): see the module docstring."""
    if isinstance(argv, (str, bytes, os.PathLike)):
        text = os.fsdecode(argv)
        try:
            argv = shlex.split(text)
        except ValueError:
            argv = text.split()
    argv = [os.fsdecode(a) for a in argv]
    if not argv:
        return False
    program = argv[0]
    if len(argv) > 3 and argv[1:3] == ["-S", "-I"] and os.path.basename(argv[3]) == SANDBOX_LAUNCHER:
        return False
    return (program == sys.executable or bool(SLOW_PROGRAMS.fullmatch(os.path.basename(program)))
            or any(os.path.basename(a) in SLOW_SCRIPTS for a in argv[1:]))


def _refuse(argv, refused: list) -> None:
    if starts_s08_python(argv):
        message = (f"this test starts a Python interpreter ({argv!r}) but is not marked slow: add "
                   f"@pytest.mark.slow (or pytestmark = pytest.mark.slow in the file) - see tests/conftest.py")
        refused.append(message)
        raise SpawnRefused(message)


def guard_spawns(monkeypatch, refused: list) -> None:
    """Make every way of starting s08's Python raise SpawnRefused (and note it in `refused`)."""
    import pexpect

    def wrap(owner, name, argv_of):
        original = getattr(owner, name)

        def guarded(*args, **kwargs):
            _refuse(argv_of(*args, **kwargs), refused)
            return original(*args, **kwargs)
        monkeypatch.setattr(owner, name, guarded)

    wrap(subprocess.Popen, "_execute_child", lambda self, args, *a, **k: args)
    wrap(os, "system", lambda command: command)
    wrap(os, "posix_spawn", lambda path, argv, *a, **k: argv)
    wrap(os, "posix_spawnp", lambda path, argv, *a, **k: argv)
    wrap(pexpect.spawn, "_spawn", lambda self, command, args=(), *a, **k: [command, *args] if args else command)


@pytest.fixture(autouse=True)
def lane_guard(request, monkeypatch):
    """Unmarked tests may not start s08's Python; every test gets its signal handlers put back. Yields
    the refusals so far (tests/test_lanes.py clears the ones it causes on purpose)."""
    handlers = {sig: signal.getsignal(sig) for sig in RESTORED_SIGNALS}
    refused: list[str] = []
    if request.node.get_closest_marker("slow") is None:
        guard_spawns(monkeypatch, refused)
    yield refused
    for sig, handler in handlers.items():
        if handler is not None and signal.getsignal(sig) is not handler:      # None: set outside Python
            signal.signal(sig, handler)
    if refused:
        pytest.fail(refused[0], pytrace=False)


def weight(item) -> int:
    """How long a test is likely to take, roughly: a pty run, another process, hypothesis, the rest."""
    if item.get_closest_marker("pty") is not None:
        return 3
    if item.get_closest_marker("slow") is not None:
        return 2
    return int(bool(getattr(getattr(item, "obj", None), "is_hypothesis_test", False)))


@pytest.hookimpl(trylast=True)                 # after any plugin that shuffles: the order within each group is kept
def pytest_collection_modifyitems(config, items):
    """The long tests first, and with xdist shared out: `--dist worksteal` first gives each of the n
    workers one consecutive n-th of the list, so the list is n piles, each starting with every n-th of
    the long tests (dealt back and forth, longest first); workers then steal from each other's tails."""
    items.sort(key=weight, reverse=True)                                   # stable: the rest keep their order
    workers = getattr(config, "workerinput", {}).get("workercount", 1)
    if workers < 2:
        return
    sizes, left = [], len(items)
    for i in range(workers):                                               # the split worksteal makes
        sizes.append(left // (workers - i))
        left -= sizes[-1]
    piles: list[list] = [[] for _ in range(workers)]
    heavy = [item for item in items if weight(item)]
    for k, item in enumerate(heavy):
        row, col = divmod(k, workers)
        piles[col if row % 2 == 0 else workers - 1 - col].append(item)
    light = items[len(heavy):]
    for pile, size in zip(piles, sizes):
        room = max(0, size - len(pile))
        pile.extend(light[:room])
        light = light[room:]
    piles[-1].extend(light)
    items[:] = [item for pile in piles for item in pile]


def pytest_collection_finish(session):
    from once_per_worker import freeze_what_is_loaded
    freeze_what_is_loaded()


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


@pytest.hookimpl(tryfirst=True)                 # before xdist's controller starts its workers
def pytest_sessionstart(session):
    if not hasattr(session.config, "workerinput"):          # the controller only, not each xdist worker
        session.config._s08_repository_before = _repository_state()
    if session.config.pluginmanager.hasplugin("dsession"):
        from once_per_worker import compile_for_workers, scan_for_hypothesis
        session.config._s08_hypothesis_scan = scan_for_hypothesis(ROOT)
        compile_for_workers(session.config, ROOT, ROOT / "tests")


def pytest_sessionfinish(session, exitstatus):
    scan = getattr(session.config, "_s08_hypothesis_scan", None)
    if scan is not None:
        scan.wait()
    before = getattr(session.config, "_s08_repository_before", None)
    after = _repository_state() if before is not None else None
    if after is None or not after - before:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.ensure_newline()
        reporter.write_line("\ntests left files behind in the repository: " + ", ".join(sorted(after - before)),
                            red=True)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(scope="session", autouse=True)
def tls_context_per_worker():
    """The SDK clients of this worker share one TLS context (once_per_worker.py)."""
    from once_per_worker import share_tls_context
    share_tls_context()


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


def spawn_agent(env: dict, cwd: Path, *args: str, timeout: float = 15, columns: int = 200, fresh: bool = False):
    """`python agent.py` in a pseudo-terminal of 50 rows; everything it prints is kept in
    `child.logfile_read` (a StringIO) for tests/screen.py. By default the process is a fork of this
    test worker that runs agent.py with the imports already done (forked_agent.py: two CPU-seconds
    less per start); `fresh=True` execs a new interpreter, for what only a new one shows."""
    import io
    import pexpect
    child = pexpect.spawn(sys.executable, [AGENT, *args], cwd=str(cwd), env=env, encoding="utf-8",
                          dimensions=(50, columns), timeout=timeout, preexec_fn=_forked(args, env, fresh))
    child.logfile_read = io.StringIO()
    child.delaybeforesend = None      # pexpect's 50 ms before every send: tests that mean a pause sleep for it
    return child


def _forked(args, env: dict, fresh: bool):
    """What the child runs in place of exec (forked_agent.py), or None for a new interpreter."""
    if fresh:
        return None
    from forked_agent import run_agent_here
    from once_per_worker import warm_up
    warm_up()
    return lambda: run_agent_here(AGENT, [str(a) for a in args], env)


def run_agent(*args: str, env: dict, fresh: bool = False, **kwargs) -> subprocess.CompletedProcess:
    """subprocess.run of `python agent.py ARGS` (a fork of this worker unless `fresh`)."""
    return subprocess.run([sys.executable, AGENT, *args], env=env, preexec_fn=_forked(args, env, fresh), **kwargs)


def popen_agent(*args: str, env: dict, fresh: bool = False, **kwargs) -> subprocess.Popen:
    """subprocess.Popen of `python agent.py ARGS` (a fork of this worker unless `fresh`)."""
    return subprocess.Popen([sys.executable, AGENT, *args], env=env, preexec_fn=_forked(args, env, fresh), **kwargs)
