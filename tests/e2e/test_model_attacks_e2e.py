"""A hostile model against `agent.py -p` over real HTTP (the stand-in plays its replies): a tool name and
input full of terminal escapes, calls written as text again and again. Nothing runs that was only
written, the correction is said once, and no escape sequence reaches the terminal through stderr (stdout,
a pipe here, is the answer exactly as written; on a terminal it is made safe too, ui/quiet.py)."""

from __future__ import annotations

import json

from support.agents import base_env, run_agent

ESC, BEL = "\x1b", "\x07"


def written(command: str) -> str:
    return "<tool_call>" + json.dumps({"name": "bash", "arguments": {"command": command}}) + "</tool_call>"


def test_hostile_names_inputs_and_written_calls_reach_the_terminal_escaped(tmp_path, workspace, standin):
    standin.queue(
        {"text": "calling", "tool_calls": [{"name": f"Bash{ESC}]0;PWNED{BEL}",
                                            "input": {"command": f"{ESC}[2J", f"{ESC}]52;c;aGk={BEL}": 1}}]},
        {"text": written(f"touch ran1 {ESC}[31m")},
        {"text": written("touch ran2") + f"{ESC}]0;title{BEL}"},
        {"text": written("touch ran3")},
    )
    done = run_agent("-p", "go", env=base_env(tmp_path, standin), cwd=workspace, capture_output=True, text=True,
                     timeout=120)
    assert done.returncode == 0, done.stderr
    assert not list(workspace.glob("ran*"))                     # written, never run
    assert ESC not in done.stderr and BEL not in done.stderr   # (stdout, a pipe here, is the answer as written)
    assert "Unknown tool 'Bash__0_PWNED_'" in done.stderr
    assert done.stderr.count("asked the model once to make the call") == 1
    assert done.stderr.count("as text again; s08 did not run it") == 1
    assert len(standin.requests) == 3                          # the third written call was never asked for
