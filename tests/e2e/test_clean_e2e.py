"""`s08 clean` from a new agent.py: it asks (and with no one to ask, refuses), keeps what is recent,
and takes --yes."""

from __future__ import annotations

import json
import os
import subprocess
import time

from session.clean import DAY
from storage import SESSIONS_DIR
from support.agents import base_env, run_agent

NOW = time.time()


def test_s08_clean_on_the_command_line_asks_or_takes_yes(tmp_path, workspace):
    old = workspace / SESSIONS_DIR / "20250101-101010-aaaaaa.jsonl"
    old.parent.mkdir(parents=True)
    old.write_text(json.dumps({"t": "session", "id": old.stem}) + "\n")
    os.utime(old, (NOW - 40 * DAY, NOW - 40 * DAY))
    env = {**base_env(tmp_path), "COLUMNS": "160"}

    def s08(*args):
        return run_agent("clean", "-w", str(workspace), *args, env=env, capture_output=True, text=True, timeout=60,
                         stdin=subprocess.DEVNULL)
    refused = s08()
    assert refused.returncode == 1 and "--yes" in refused.stderr and old.exists()
    assert "20250101-101010-aaaaaa" in refused.stdout and "remove" in refused.stdout
    kept = s08("--keep-days", "60")
    assert kept.returncode == 0 and "nothing to remove" in kept.stdout and old.exists()
    done = s08("--yes")
    assert done.returncode == 0 and "removed 1 file(s)" in done.stdout and not old.exists()
