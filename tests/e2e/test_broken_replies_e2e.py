"""What small models send (issue 32), through a new `agent.py -p` over real HTTP to the stand-in: a tool
call whose input is not JSON, an unknown tool, a tool call written as text, an answer looping until the
output limit. Each is one line on stderr, the run ends well, and every request s08 sent was valid (the
stand-in refuses any the real API would). In-process: tests/loop/test_broken_replies.py."""

from __future__ import annotations

from messages import blocks, text_of
from support.agents import base_env, run_agent


def run(tmp_path, workspace, standin, prompt="go", **settings):
    done = run_agent("-p", prompt, env=base_env(tmp_path, standin, **settings), cwd=workspace,
                     capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done


def results(body):
    return [b for m in body["messages"] if m["role"] == "user" for b in blocks(m) if b.get("type") == "tool_result"]


def test_a_tool_call_whose_input_is_not_json_is_one_error_and_one_line(tmp_path, workspace, standin):
    standin.queue({"tool_calls": [{"name": "bash", "raw_input": '{"command": "touch ran'}]}, {"text": "ok then"})
    done = run(tmp_path, workspace, standin)
    assert done.stdout.strip() == "ok then" and not (workspace / "ran").exists()
    lines = [line for line in done.stderr.splitlines() if "not a JSON object" in line]
    assert lines == ["[the model's bash call had input that is not a JSON object; it was not run and the model "
                     "was told]"]
    [answer] = results(standin.requests[1])
    assert answer["is_error"] and "not a valid JSON object" in answer["content"]


def test_an_unknown_tool_is_an_error_naming_the_closest(tmp_path, workspace, standin):
    standin.queue({"tool_calls": [{"name": "functions.bash", "input": {"command": "touch ran"}}]}, {"text": "ok"})
    done = run(tmp_path, workspace, standin)
    assert done.stdout.strip() == "ok" and not (workspace / "ran").exists()
    [answer] = results(standin.requests[1])
    assert answer["is_error"] and answer["content"].startswith("Unknown tool 'functions_bash'")
    assert "Did you mean bash?" in answer["content"] and "Did you mean bash?" in done.stderr


def test_a_tool_call_written_as_text_is_not_run_and_the_model_told_once(tmp_path, workspace, standin):
    written = '<tool_call>{"name": "bash", "arguments": {"command": "touch ran"}}</tool_call>'
    standin.queue({"text": written}, {"tool_calls": [{"name": "bash", "input": {"command": "echo real"}}]},
                  {"text": "done"})
    done = run(tmp_path, workspace, standin)
    assert done.stdout.strip() == "done" and not (workspace / "ran").exists()
    said = [line for line in done.stderr.splitlines() if "as text" in line]
    assert said == ["[the model wrote a call to bash as text instead of making it; s08 did not run it and asked "
                    "the model once to make the call]"]
    told = standin.requests[1]["messages"][-1]
    assert told["role"] == "user" and text_of(told).startswith("[s08: your last answer wrote a call to bash as text")
    assert "real" in results(standin.requests[2])[-1]["content"]


def test_an_answer_looping_until_max_tokens_keeps_one_copy_and_says_so(tmp_path, workspace, standin):
    standin.queue({"text": "Intro. " + "I will fix the bug now. " * 4000})
    done = run(tmp_path, workspace, standin, max_tokens=4000)
    assert done.stdout.strip() == "Intro. I will fix the bug now."
    said = [line for line in done.stderr.splitlines() if "repeated the same" in line]
    assert len(said) == 1 and "one copy was kept" in said[0]
