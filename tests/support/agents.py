"""The environment an s08 under test gets, and ways to start one: each start is a new interpreter
(`sys.executable agent.py …`), in a pseudo-terminal (pexpect) or on pipes (subprocess). Tests that
start one live in tests/e2e/."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

from standin import StandIn

ROOT = Path(__file__).resolve().parents[2]
AGENT = str(ROOT / "agent.py")
TEST_KEY = "test-key"
SMALL_WINDOW = 20_000                     # the `small_window` stand-in's context window (conftest.py)
PROTECTED_KEY = "sk-ant-api03-key-protection-0123456789-abcdefghijklmnop"   # the only key `keyed_standin` takes


def base_env(tmp_path: Path, server=None, **settings) -> dict:
    """A minimal, explicit environment for an agent (nothing inherited by accident). Tests that are not
    about approvals opt into APPROVAL_MODE=yolo here; the approval tests pass approval_mode="default"
    (the real default). Likewise BACKGROUND_COMPACT=off: a stand-in's queue answers requests in the
    order they arrive, and a summary prepared in the background would race a turn's own requests for
    the queued replies; the tests of background compaction (and the experiments) pass "on". `server`: the stand-in (its URL and key), the scripted model (PROVIDER=scripted),
    or None (no key)."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path / "home"),
           "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TERM": "xterm-256color", "PROMPT_TOOLKIT_NO_CPR": "1",
           "PYTHONUNBUFFERED": "1", "API_MAX_RETRIES": "2", "APPROVAL_MODE": "yolo",
           "BACKGROUND_COMPACT": "off"}
    if isinstance(server, StandIn):
        env.update(ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY=TEST_KEY)
    elif server is not None:          # the scripted model (a test marked `scripted`)
        env.update(PROVIDER="scripted", ANTHROPIC_API_KEY=TEST_KEY)
    env.update({k.upper(): str(v) for k, v in settings.items()})
    return env


def spawn_agent(env: dict, cwd: Path, *args: str, timeout: float = 15, columns: int = 200):
    """`python agent.py ARGS` in a pseudo-terminal of 50 rows; everything it prints is kept in
    `child.logfile_read` (a StringIO) for support/screen.py."""
    import pexpect
    child = pexpect.spawn(sys.executable, [AGENT, *args], cwd=str(cwd), env=env, encoding="utf-8",
                          dimensions=(50, columns), timeout=timeout)
    child.logfile_read = io.StringIO()
    child.delaybeforesend = None      # pexpect's 50 ms before every send: tests that mean a pause sleep for it
    return child


def run_agent(*args: str, env: dict, **kwargs) -> subprocess.CompletedProcess:
    """subprocess.run of `python agent.py ARGS`."""
    return subprocess.run([sys.executable, AGENT, *args], env=env, **kwargs)


def popen_agent(*args: str, env: dict, **kwargs) -> subprocess.Popen:
    """subprocess.Popen of `python agent.py ARGS`."""
    return subprocess.Popen([sys.executable, AGENT, *args], env=env, **kwargs)


def copy_of_the_repository(dest: Path) -> Path:
    """What a fresh clone holds: the tracked (and not ignored) files."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, files):
        if (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)
    return dest
