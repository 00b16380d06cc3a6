"""A cloned repository's `.env` is read as an allowlist (config.py's `folder` rule): the settings that could hurt
the person or their bill are ignored, named in one line, in the real s08 process."""

from __future__ import annotations

import json
import os
import subprocess
import time

from session.clean import DAY
from storage import SESSIONS_DIR
from support.agents import base_env, run_agent


def run(workspace, *args, env):
    return run_agent(*args, env=env, cwd=workspace, capture_output=True, text=True, timeout=60,
                     stdin=subprocess.DEVNULL)


def ignoring_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "from this folder's .env" in line and "ignoring" in line]


def test_demo_on_in_a_folder_env_does_not_swap_the_persons_model_in_a_ci_run(tmp_path, workspace, standin):
    (workspace / ".env").write_text("DEMO=on\n")
    standin.queue({"text": "the real model"})
    done = run(workspace, "-p", "review this", env=base_env(tmp_path, standin))
    assert done.returncode == 0 and done.stdout == "the real model\n" and len(standin.requests) == 1
    [line] = ignoring_lines(done.stderr)
    assert "DEMO=on" in line and "--env-file" in line


def test_a_folder_env_cannot_make_the_cost_zero_or_raise_the_limits(tmp_path, workspace, standin):
    (workspace / ".env").write_text("MODEL_PRICE=0,0\nMAX_TOKENS=64000\nBASH_TIMEOUT=86400\nCONTEXT_LIMIT=190000\n"
                                    "SUMMARY_MAX_TOKENS=100000\n")
    standin.queue({"text": "done", "usage": {"input_tokens": 1000, "output_tokens": 1000}})
    done = run(workspace, "-p", "hi", "--output-format", "json", env=base_env(tmp_path, standin))
    record = json.loads(done.stdout)
    assert done.returncode == 0 and record["cost_usd"] and record["cost_usd"] > 0
    assert standin.requests[0]["max_tokens"] == 8000                       # the person's (the default), not 64000
    [line] = ignoring_lines(done.stderr)
    for name in ("MODEL_PRICE=0,0", "MAX_TOKENS=64000", "BASH_TIMEOUT=86400", "CONTEXT_LIMIT=190000",
                 "SUMMARY_MAX_TOKENS=100000"):
        assert name in line


def test_a_folder_env_may_lower_a_limit(tmp_path, workspace, standin):
    (workspace / ".env").write_text("MAX_TOKENS=1000\n")
    standin.queue({"text": "short"})
    done = run(workspace, "-p", "hi", env=base_env(tmp_path, standin))
    assert done.returncode == 0 and standin.requests[0]["max_tokens"] == 1000 and not ignoring_lines(done.stderr)


def test_keep_days_zero_in_a_folder_env_does_not_make_clean_delete_the_persons_sessions(tmp_path, workspace):
    two_days = workspace / SESSIONS_DIR / "20250101-101010-aaaaaa.jsonl"
    two_days.parent.mkdir(parents=True)
    two_days.write_text(json.dumps({"t": "session", "id": two_days.stem}) + "\n")
    now = time.time()
    os.utime(two_days, (now - 2 * DAY, now - 2 * DAY))
    (workspace / ".env").write_text("KEEP_DAYS=0\n")
    done = run(workspace, "clean", "--yes", env={**base_env(tmp_path), "COLUMNS": "160"})
    assert done.returncode == 0 and "nothing to remove" in done.stdout and two_days.exists()
    [line] = ignoring_lines(done.stderr)
    assert "KEEP_DAYS=0 (only a value of at least yours, 30, is taken)" in line

