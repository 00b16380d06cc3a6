"""The key guard's hand-over in a new interpreter: an exported key stays hidden under the demo."""

from __future__ import annotations


from support.agents import base_env
from support.helpers import everything_written, write

ENV_KEY = "sk-ant-api03-FROM-the-environment-987654"


def test_an_exported_key_handed_over_by_the_key_guard_is_hidden_under_demo(tmp_path, workspace):
    """A real start: the key guard takes the exported key out of the environment before anything runs;
    the set still holds it (config.process_environ)."""
    import subprocess
    import sys

    from support.agents import AGENT
    write(workspace / "notes.txt", f"found {ENV_KEY} here\n")
    done = subprocess.run([sys.executable, AGENT, "--demo", "-p", "run cat notes.txt"], cwd=workspace,
                          env=base_env(workspace.parent, None, anthropic_api_key=ENV_KEY), capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "found [redacted] here" in done.stdout + done.stderr and ENV_KEY not in done.stdout + done.stderr
    assert ENV_KEY not in everything_written(workspace)
