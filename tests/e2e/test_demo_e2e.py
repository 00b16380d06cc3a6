"""The demo model as a person meets it from a new agent.py: -p and piped input without a key, and
--demo over a key."""

from __future__ import annotations

from support.agents import base_env, run_agent


def run(args, env, cwd, stdin=None):
    return run_agent(*args, env=env, cwd=cwd, input=stdin, text=True,
                          capture_output=True, timeout=60)


def test_print_mode_without_a_key_uses_the_demo_and_says_so(tmp_path, workspace):
    (workspace / "hello.txt").write_text("hi\n")
    proc = run(["-p", "run ls"], base_env(tmp_path, None), workspace)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("[demo] Tool results:\n- ok: hello.txt")
    assert "no API key is configured, so the offline demo model answers: scripted replies, not a real model" \
        in proc.stderr
    assert "/login" in proc.stderr and "● bash ls" in proc.stderr


def test_piped_input_without_a_key_labels_every_answer(tmp_path, workspace):
    proc = run([], base_env(tmp_path, None), workspace, stdin="hello\nwrite notes.txt: one\\ntwo\n")
    assert proc.returncode == 0, proc.stderr
    answers = proc.stdout.split("[demo] ")[1:]
    assert len(answers) == 2 and proc.stdout.startswith("[demo] You said: hello")
    assert (workspace / "notes.txt").read_text() == "one\ntwo\n"
    assert proc.stderr.count("offline demo model answers") == 1


def test_demo_flag_wins_over_a_key(tmp_path, workspace, standin):
    proc = run(["--demo", "-p", "hello"], base_env(tmp_path, standin), workspace)
    assert proc.returncode == 0 and proc.stdout.startswith("[demo] You said: hello")
    assert "--demo (or DEMO=on) is set" in proc.stderr and not standin.requests
