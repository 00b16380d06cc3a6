"""Daily use from new processes: -p names the command that was run, and python -m standin's hint uses the
key it accepts."""

from __future__ import annotations

import subprocess
import sys

from support.agents import ROOT, base_env


def test_print_mode_names_the_command_that_was_run(tmp_path, workspace):
    out = subprocess.run([sys.executable, str(ROOT / "agent.py"), "--demo", "-p", "hi"], cwd=workspace,
                         env=base_env(tmp_path), capture_output=True, text=True, timeout=60)
    assert "agent.py and type /login" in out.stderr and "run s08 " not in out.stderr


def test_the_standin_hint_uses_the_key_it_accepts():
    proc = subprocess.Popen([sys.executable, "-m", "standin", "--port", "0", "--key", "my-own-key-123"], cwd=ROOT,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        proc.stdout.readline()
        hint = proc.stdout.readline()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert "ANTHROPIC_API_KEY=my-own-key-123 " in hint
