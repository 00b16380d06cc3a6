"""The commands docs/getting-started.md shows (the fenced blocks after a `<!-- tested` comment) run as
written, one after the other in one folder, against the demo model (no key anywhere): each exits 0 and
prints what its `# shows:` comment says."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys

from support.agents import AGENT, ROOT

PAGE = ROOT / "docs" / "getting-started.md"
TESTED = re.compile(r"<!-- tested[^>]*-->\s*```bash\n(.*?)```", re.S)
SETTING = re.compile(r"[A-Z][A-Z0-9_]*=.*")


def commands_of_the_page() -> list[tuple[str, str]]:
    """(command line, what it shows) for every line of the tested blocks."""
    lines = [line for block in TESTED.findall(PAGE.read_text()) for line in block.splitlines() if line.strip()]
    assert lines, f"{PAGE.relative_to(ROOT)} has no block marked <!-- tested … --> (the test finds none)"
    return [(line.partition("# shows:")[0].strip(), line.partition("# shows:")[2].strip()) for line in lines]


def argv_and_env(command: str, env: dict) -> tuple[list[str], dict]:
    words = shlex.split(command, comments=True)
    env = dict(env)
    while words and SETTING.fullmatch(words[0]):
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    program = words[:2] if words[:1] == [".venv/bin/python"] else words[:1]
    assert program in ([".venv/bin/python", "agent.py"], ["s08"]), f"not s08: {command}"
    return [sys.executable, AGENT, *words[len(program):]], env


def test_the_getting_started_commands_run_against_the_demo_model(tmp_path):
    workspace, home = tmp_path / "ws", tmp_path / "home"
    home.mkdir()
    for package in ("compaction", "tools"):            # a folder with many Python files, as the page says
        shutil.copytree(ROOT / package, workspace / package, ignore=shutil.ignore_patterns("__pycache__"))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8", "PYTHONUNBUFFERED": "1"}
    for command, shows in commands_of_the_page():
        argv, run_env = argv_and_env(command, env)
        done = subprocess.run(argv, cwd=workspace, env=run_env, capture_output=True, text=True, timeout=300)
        said = done.stdout + done.stderr
        assert done.returncode == 0, f"docs/getting-started.md: `{command}` exited {done.returncode}:\n{said[-2000:]}"
        assert shows in said, f"docs/getting-started.md: `{command}` did not show {shows!r}:\n{said[-2000:]}"
