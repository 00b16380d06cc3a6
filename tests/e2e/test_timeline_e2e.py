"""`s08 sessions` and `s08 inspect` from a new agent.py: listed, shown, and the failures' exit codes."""

from __future__ import annotations

import json

from support.agents import base_env, run_agent


def test_s08_sessions_and_inspect_on_the_command_line(tmp_path, workspace):
    log = workspace / ".sessions" / "20261201-101010-abcdef.jsonl"
    log.parent.mkdir()
    usage = {"input_tokens": 100, "cache_read_input_tokens": 900, "output_tokens": 50}
    lines = [{"t": "session", "id": log.stem, "model": "claude-sonnet-4-6", "limit": 5000},
             {"t": "typed", "text": "please fix the parser"},
             {"t": "usage", "n": 1, "u": usage, "p": "answer"}]
    log.write_text("".join(json.dumps(r) + "\n" for r in lines))
    env = {**base_env(tmp_path), "COLUMNS": "200"}

    def s08(*args):
        return run_agent(*args, "-w", str(workspace), env=env, capture_output=True, text=True, timeout=60)
    listed = s08("sessions")
    assert listed.returncode == 0 and log.stem in listed.stdout and "please fix the parser" in listed.stdout
    shown = s08("inspect", "20261201")
    assert shown.returncode == 0 and "limit 5,000" in shown.stdout and "1,000" in shown.stdout
    missing = s08("inspect", "nope")
    assert missing.returncode == 1 and "no single session matches 'nope'" in missing.stderr
    no_event = s08("inspect", log.stem, "--event", "3")
    assert no_event.returncode == 1 and "no compaction events" in no_event.stderr
    assert s08("inspect", "--bogus").returncode == 2
