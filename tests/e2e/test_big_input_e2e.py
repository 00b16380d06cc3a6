"""A huge piped line, in a new agent.py: it does not jam the lines after it."""

from __future__ import annotations


from support.agents import SMALL_WINDOW, base_env, run_agent

WINDOW = SMALL_WINDOW


def test_a_huge_piped_line_does_not_jam_the_lines_after_it(tmp_path, workspace, small_window):
    small_window.queue({"text": "first answer"}, {"text": "second answer"})
    env = {**base_env(tmp_path), "ANTHROPIC_BASE_URL": small_window.url, "ANTHROPIC_API_KEY": "k",
           "CONTEXT_WINDOW": str(WINDOW), "CONTEXT_LIMIT": "10000"}
    lines = "z " * 50_000 + "\nsecond question\n"
    proc = run_agent(input=lines, env=env, cwd=workspace, text=True,
                          capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["first answer", "second answer"]
    assert "too large for the context" in proc.stderr
