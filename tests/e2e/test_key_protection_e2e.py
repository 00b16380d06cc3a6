"""The key guard in a new interpreter: commands the agent runs cannot read the key from its process."""

from __future__ import annotations

import subprocess
import sys


from support.agents import PROTECTED_KEY, AGENT, base_env

KEY = PROTECTED_KEY

WALK_PARENTS = ("p=$PPID; while [ \"$p\" -gt 1 ]; do echo \"== $p $(tr '\\0' ' ' < /proc/$p/cmdline)\"; "
                "tr '\\0' '\\n' < /proc/$p/environ; p=$(awk '{print $4}' /proc/$p/stat); done > environs.txt 2>&1")


def test_commands_cannot_read_the_key_from_the_agents_process(tmp_path, workspace, keyed_standin):
    keyed_standin.queue({"tool_calls": [{"name": "bash", "input": {"command": WALK_PARENTS}}]}, {"text": "looked"})
    env = {**base_env(tmp_path), "ANTHROPIC_BASE_URL": keyed_standin.url, "ANTHROPIC_API_KEY": KEY}
    proc = subprocess.run([sys.executable, AGENT, "-p", "look around"], env=env, cwd=workspace, text=True,
                          capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    dump = (workspace / "environs.txt").read_text()
    assert "agent.py" in dump and "PATH=" in dump          # it did read the agent's own environment
    assert KEY not in dump and KEY[:20] not in dump
    assert KEY not in proc.stdout + proc.stderr
