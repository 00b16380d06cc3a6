"""What s08 writes stays valid JSON and keeps the key out, whatever the endpoint sends: a tool input with NaN
or Infinity, an answer (text or tool input) that echoes the key. The real s08 process, real HTTP."""

from __future__ import annotations

import json
import subprocess

from storage import SESSIONS_DIR
from support.agents import TEST_KEY, base_env, run_agent


def strict(line: str):
    """json.loads that refuses NaN and Infinity, as every other JSON reader does."""
    def refuse(name):
        raise ValueError(f"{name} is not JSON")
    return json.loads(line, parse_constant=refuse)


def run(workspace, *args, env):
    return run_agent(*args, env=env, cwd=workspace, capture_output=True, text=True, timeout=60,
                     stdin=subprocess.DEVNULL)


def everything_s08_kept(workspace) -> str:
    return "".join(p.read_text(errors="replace") for p in workspace.rglob("*") if p.is_file()
                   and any(part.startswith(".") for part in p.relative_to(workspace).parts))


def test_non_finite_numbers_in_a_tool_input_leave_every_line_valid_and_continue_works(tmp_path, workspace, standin):
    env = base_env(tmp_path, standin)
    standin.queue({"tool_calls": [{"name": "bash", "input": {"command": "echo hi", "timeout": float("nan"),
                                                               "n": [float("inf"), float("-inf")]}}]},
                  {"text": "done"})
    done = run(workspace, "-p", "go", "--output-format", "stream-json", env=env)
    assert done.returncode == 0
    records = [strict(line) for line in done.stdout.splitlines()]
    [use] = [r for r in records if r["type"] == "tool_use"]
    assert use["input"] == {"command": "echo hi", "timeout": None, "n": [None, None]}
    assert records[-1]["result"] == "done"
    for request in standin.requests:
        json.dumps(request, allow_nan=False)                   # what went back to the API is JSON
    [log] = (workspace / SESSIONS_DIR).glob("*.jsonl")
    for line in log.read_text().splitlines():
        strict(line)
    standin.queue({"text": "resumed"})
    again = run(workspace, "-c", "-p", "and now", env=env)
    assert again.returncode == 0 and again.stdout == "resumed\n"
    json.dumps(standin.requests[-1], allow_nan=False)


def test_an_endpoint_that_echoes_the_key_has_it_neither_printed_nor_kept_nor_sent_back(tmp_path, workspace, standin):
    env = base_env(tmp_path, standin)
    standin.queue({"tool_calls": [{"name": "bash", "input": {"command": f"echo key={TEST_KEY} > /dev/null"}}]},
                  {"text": f"Your key is {TEST_KEY}, and again:{TEST_KEY}.", "chunk": 5})
    for output in ("stream-json", "json", "text"):
        done = run(workspace, "-p", "what is my key?", "--output-format", output, env=env)
        assert done.returncode == 0 and "[redacted]" in done.stdout, output
        assert TEST_KEY not in done.stdout and TEST_KEY not in done.stderr, output
        if output == "stream-json":
            standin.queue({"text": f"Your key is {TEST_KEY}, and again:{TEST_KEY}.", "chunk": 5})
        elif output == "json":
            standin.queue({"text": f"Your key is {TEST_KEY}.", "chunk": 3})
    assert TEST_KEY not in everything_s08_kept(workspace)
    assert all(TEST_KEY not in json.dumps(r["messages"]) for r in standin.requests)


def test_a_planted_log_line_nested_too_deep_is_a_damaged_line_not_a_crash(tmp_path, workspace, standin):
    env = base_env(tmp_path, standin)
    standin.queue({"text": "first"})
    assert run(workspace, "-p", "hello", env=env).returncode == 0
    [log] = (workspace / SESSIONS_DIR).glob("*.jsonl")
    with open(log, "a") as f:
        f.write("[" * 200_000 + "\n")
    standin.queue({"text": "resumed"})
    done = run(workspace, "-c", "-p", "again", env=env)
    assert done.returncode == 0 and done.stdout == "resumed\n" and "internal error" not in done.stderr
    assert run_agent("sessions", env=env, cwd=workspace, capture_output=True, text=True, timeout=60).returncode == 0


def test_usage_counts_that_are_not_numbers_cost_nothing_and_break_nothing(tmp_path, workspace, standin):
    """The endpoint's usage numbers are cleaned like the rest of its answer: a count written with a superscript
    digit (`"²"`: str.isdigit says yes, int() says no) or NaN is no count, not a crash of the turn."""
    env = base_env(tmp_path, standin)
    standin.queue({"text": "first", "usage": {"input_tokens": "²", "cache_read_input_tokens": float("nan")}})
    done = run(workspace, "-p", "hello", "--output-format", "json", env=env)
    assert done.returncode == 0, done.stderr
    assert strict(done.stdout)["result"] == "first"
    for log in (workspace / SESSIONS_DIR).glob("*.jsonl"):
        for line in log.read_text().splitlines():
            strict(line)
