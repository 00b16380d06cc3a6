"""A newcomer's first run, in a pseudo-terminal, from a clean HOME with no key anywhere: the README's
first command as written, the demo model, experiment 1, /login and the next start."""

from __future__ import annotations

import os
import re
import stat
import sys
import sysconfig
from pathlib import Path

import pexpect
import pytest

from support.agents import ROOT, TEST_KEY, base_env, copy_of_the_repository, spawn_agent

pytestmark = pytest.mark.pty
PROMPT = "s08 >> "
FIRST_RUN = "key (hidden, Enter skips):"


def readme_command(heading: str) -> str:
    """The first line of the first ```bash block after `heading` in the README."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index(heading):]
    return section.split("```bash\n", 1)[1].split("\n", 1)[0].strip()


def offline_python3(bin_dir: Path) -> Path:
    """A `python3` for PATH that is the real one, except that a venv it creates also sees the packages
    this test runs with — so the README's `pip install -r requirements.txt` finds them all installed
    and needs no download (PIP_NO_INDEX makes sure of it)."""
    bin_dir.mkdir(parents=True)
    site = f"lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"
    shim = bin_dir / "python3"
    shim.write_text(f"""#!/bin/sh
"{sys._base_executable}" "$@" || exit $?
if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then
    echo "{sysconfig.get_paths()['purelib']}" > "$3/{site}/_s08_test_packages.pth"
fi
""")
    shim.chmod(0o755)
    return bin_dir


def clean_env(home: Path, **extra) -> dict:
    env = {k: v for k, v in base_env(home.parent).items()}
    env.update(HOME=str(home), PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", **extra)
    return env


@pytest.mark.install          # a new venv and pip install, as the README's first command does
def test_readme_first_command_runs_experiment_1_on_the_demo_model(tmp_path):
    command = readme_command("## Set up")
    assert command.endswith(".venv/bin/python agent.py") and "pip install" in command
    clone = copy_of_the_repository(tmp_path / "s08")
    home = tmp_path / "home"
    env = clean_env(home, PATH=f"{offline_python3(tmp_path / 'bin')}:{os.environ['PATH']}")
    child = pexpect.spawn("bash", ["-c", command], cwd=str(clone), env=env, encoding="utf-8",
                          dimensions=(50, 160), timeout=180)
    child.expect_exact("Offline demo model.")                 # the first screen: the demo, said plainly
    banner = child.before
    child.expect_exact(FIRST_RUN)
    banner += child.before
    assert "s08-demo" in banner and "/login" in banner and "not a" in banner
    child.sendline("")                                         # skip: go on with the demo
    child.expect_exact(PROMPT)
    child.sendline("read every Python file one by one")
    child.expect(r"\[demo\] I read all (\d+) Python files one by one\.")
    seen = child.before
    files = int(child.match.group(1))
    own = [p for p in clone.rglob("*.py") if not any(part.startswith(".") or part in ("build", "venv", "__pycache__")
                                                     or part.endswith(".egg-info") for part in p.relative_to(clone).parts)]
    assert files == len(own)                   # the workspace's own files: not .venv's (standin/brain.py)
    assert re.search(r"\[auto_compact triggered\] [\d,]+ > 50,000 tokens", seen)
    assert re.search(r"\[compacted\] [\d,]+ → [\d,]+ tokens", seen)
    assert list((clone / ".transcripts").glob("*-summary.jsonl"))
    child.expect_exact("offline demo model (scripted replies")     # the status line says it too
    child.expect_exact(PROMPT)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert (home / ".config" / "s08" / ".env").exists()       # the first-run question is not asked again


def spawn_fresh(tmp_path, standin, home: Path):
    """agent.py with no key anywhere; the endpoint a key would be used with is the stand-in."""
    env = clean_env(home, ANTHROPIC_BASE_URL=standin.url)
    return spawn_agent(env, tmp_path / "ws", timeout=30)


def test_login_stores_a_private_key_and_the_next_start_uses_it(tmp_path, standin):
    (tmp_path / "ws").mkdir()
    home = tmp_path / "home"
    child = spawn_fresh(tmp_path, standin, home)
    child.expect_exact(FIRST_RUN)
    child.sendline("")
    child.expect_exact(PROMPT)
    child.sendline("/login")
    child.expect_exact("key (hidden):")
    child.sendline("wrong-key-0000")
    child.expect_exact("refused the key (401); nothing stored")
    child.expect_exact(PROMPT)
    child.sendline("/login")
    child.expect_exact("key (hidden):")
    child.sendline(TEST_KEY)
    child.expect_exact("key stored in")
    child.expect_exact("the demo model is off")
    child.expect_exact(PROMPT)
    assert TEST_KEY not in child.before                       # hidden input, never echoed
    standin.queue({"text": "REAL-ANSWER-1"})
    child.sendline("hello")
    child.expect_exact("REAL-ANSWER-1")
    child.expect_exact(PROMPT)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    stored = home / ".config" / "s08" / ".env"
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600 and stat.S_IMODE(stored.parent.stat().st_mode) == 0o700
    assert f"ANTHROPIC_API_KEY='{TEST_KEY}'" in stored.read_text()

    child = spawn_fresh(tmp_path, standin, home)              # the next start: the stored key, no demo
    child.expect_exact(PROMPT)
    assert "Offline demo model" not in child.before and standin.url in child.before
    standin.queue({"text": "REAL-ANSWER-2"})
    child.sendline("hello again")
    child.expect_exact("REAL-ANSWER-2")
    child.expect_exact(PROMPT)
    child.sendline("/logout")
    child.expect_exact("removed the key from")
    child.expect_exact(PROMPT)
    child.sendline("hello")
    child.expect_exact("[demo] You said: hello")
    child.expect_exact(PROMPT)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    assert "ANTHROPIC_API_KEY" not in stored.read_text()


def test_the_first_run_question_takes_a_key(tmp_path, standin):
    (tmp_path / "ws").mkdir()
    home = tmp_path / "home"
    child = spawn_fresh(tmp_path, standin, home)
    child.expect_exact(FIRST_RUN)
    child.sendline(TEST_KEY)
    child.expect_exact("key stored in")
    child.expect_exact(PROMPT)
    standin.queue({"text": "REAL-ANSWER"})
    child.sendline("hi")
    child.expect_exact("REAL-ANSWER")
    child.expect_exact(PROMPT)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    assert f"ANTHROPIC_API_KEY='{TEST_KEY}'" in (home / ".config" / "s08" / ".env").read_text()
