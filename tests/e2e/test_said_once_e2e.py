"""What -p and piped input say once: a login that cannot happen fails with 2 in -p and 1 piped."""

from __future__ import annotations

from support.agents import base_env, run_agent


def test_print_mode_login_fails_with_2_and_piped_input_with_1(tmp_path, workspace):
    done = run_agent("-p", "/login", env=base_env(tmp_path), cwd=workspace,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "run it in the interactive REPL" in done.stderr
    piped = run_agent(env=base_env(tmp_path), cwd=workspace, input="/login\nhello\n",
                           capture_output=True, text=True, timeout=60)
    assert piped.returncode == 1 and piped.stdout.startswith("[demo] You said: hello")
