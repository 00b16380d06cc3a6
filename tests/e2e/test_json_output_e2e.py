"""--output-format stream-json from a new agent.py: the lines come while the run goes on."""

from __future__ import annotations

import json
import subprocess

from support.agents import base_env, popen_agent


def test_stream_json_lines_come_while_the_run_goes_on(tmp_path, workspace, standin):
    """A command that waits for a file the test creates only after reading its tool_use and first output
    lines: had the lines waited for the end of the run, the test would never create the file."""
    command = "echo first-out; while [ ! -e go ]; do sleep 0.05; done; echo second-out"
    standin.queue({"tool_calls": [{"name": "bash", "input": {"command": command}}]}, {"text": "STREAMED"})
    proc = popen_agent("-p", "go", "--output-format", "stream-json", env=base_env(tmp_path, standin),
                       cwd=workspace, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    seen = []
    for line in proc.stdout:
        seen.append(json.loads(line))
        if seen[-1]["type"] == "tool_output" and "first-out" in seen[-1]["text"]:
            break
    assert [e["type"] for e in seen][:1] == ["init"] and "tool_use" in [e["type"] for e in seen]
    assert proc.poll() is None                                   # still running: the command waits
    (workspace / "go").touch()
    rest = [json.loads(line) for line in proc.stdout]
    assert proc.wait(timeout=30) == 0
    assert rest[-1]["type"] == "result" and rest[-1]["result"] == "STREAMED"
