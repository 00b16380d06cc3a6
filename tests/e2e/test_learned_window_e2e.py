"""The window learned, through a new agent.py and the real SDK against the stand-in (issue 32): -p uses the
window each kind of server states; piped turns at a window that answers an overflow with silence get at
most one silent answer."""

from __future__ import annotations

import subprocess
import time

import pytest

from support.agents import base_env, popen_agent, run_agent

DEFAULT_MAX_TOKENS = 8_000
PATHS = {"props_window": "/props", "ollama_window": "/api/show", "vllm_window": "/v1/models"}


@pytest.mark.parametrize("option, tokens, source", [
    ("props_window", 4_096, "llama.cpp /props n_ctx"),
    ("ollama_window", 8_192, "Ollama /api/show num_ctx"),
    ("vllm_window", 6_000, "/v1/models max_model_len"),
])
def test_print_mode_uses_the_window_the_server_states(tmp_path, workspace, standin, option, tokens, source):
    setattr(standin, option, tokens)
    (workspace / "a.txt").write_text("A\n")
    standin.queue({"hold": "before", "tool_calls": [{"name": "read_file", "input": {"path": "a.txt"}}]},
                  {"text": "done"})
    proc = popen_agent("-p", "read a.txt", env=base_env(tmp_path, standin), cwd=workspace,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert standin.wait_until_held(timeout=60)
        end = time.monotonic() + 60              # the question is answered while the first request waits
        while not standin.probes and time.monotonic() < end and proc.poll() is None:
            time.sleep(0.02)
        assert standin.probes == [PATHS[option]]
    finally:
        standin.release()
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert out == "done\n"
    limit = int(tokens * 0.75)
    assert f"[context window {tokens:,} tokens ({source}); compacting at {limit:,}]" in err
    assert standin.requests[1]["max_tokens"] < min(tokens, DEFAULT_MAX_TOKENS)   # the answer's room is within it


def test_piped_turns_at_a_silent_window_get_at_most_one_silent_answer(tmp_path, workspace, standin):
    """Twelve turns, pastes of a build log (one line each: piped input is a turn a line) and short
    questions, at a 4,096 window answered with an empty 200 past it."""
    standin.context_window, standin.messages_overflow = 4_096, "empty"
    lines = []
    for t in range(12):
        part = " ; ".join(f"[{t:02d}:{i:04d}] gcc -O2 -c src/mod{i % 37}.c -o build/mod{i % 37}.o # "
                          f"0x{i * 7919:08x} ok ({i * 13 % 997} ms)" for i in range(60))
        lines.append(f"here is part {t // 2 + 1} of the build log: {part}" if t % 2 == 0 else "what failed so far?")
    proc = run_agent(env=base_env(tmp_path, standin), cwd=workspace, input="\n".join(lines) + "\n", text=True,
                     capture_output=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert standin.silent_answers <= 1
    assert len(proc.stdout.splitlines()) >= 12                    # every turn answered
    assert "taking its context window as ~" in proc.stderr
