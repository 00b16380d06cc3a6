"""Non-interactive use from a new agent.py: -p "prompt" and piped stdin, as scripts would run them."""

from __future__ import annotations

import subprocess

from support.agents import base_env, popen_agent, run_agent
from support.processes import ended, written_pid


def run(args, env, cwd, stdin=None, timeout=120):   # a hang guard: a busy machine is slow
    return run_agent(*args, env=env, cwd=cwd, input=stdin, text=True,
                          capture_output=True, timeout=timeout)


def test_print_mode_runs_tools_and_prints_the_final_answer(tmp_path, workspace, standin):
    standin.queue({"text": "Let me look.", "tool_calls": [{"name": "bash", "input": {"command": "echo 42 > n.txt"}}]},
                  {"text": "The answer is in n.txt."})
    proc = run(["-p", "write 42 to n.txt"], base_env(tmp_path, standin), workspace)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "The answer is in n.txt.\n"
    assert "● bash" in proc.stderr and (workspace / "n.txt").read_text() == "42\n"


def test_print_mode_failure_exits_1_with_one_line(tmp_path, workspace, standin):
    standin.queue({"error": 401})
    proc = run(["-p", "hi"], base_env(tmp_path, standin), workspace)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "Authentication failed (401)" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_piped_stdin_runs_one_turn_per_line_and_exits_at_eof(tmp_path, workspace, standin):
    standin.queue({"text": "first answer"}, {"text": "second answer"})
    proc = run([], base_env(tmp_path, standin), workspace, stdin="first question\n\nsecond question\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["first answer", "second answer"]
    last = standin.requests[-1]["messages"]
    assert [m["role"] for m in last] == ["user", "assistant", "user"]


def test_bad_setting_is_a_warning_not_a_crash(tmp_path, workspace, standin):
    (workspace / ".env").write_text("MAX_TOKENS=many\n")
    standin.queue({"text": "still works"})
    proc = run(["-p", "hi"], base_env(tmp_path, standin), workspace)
    assert proc.returncode == 0 and proc.stdout == "still works\n"
    assert "MAX_TOKENS='many' (from .env) must be a whole number; using the default 8000" in proc.stderr
    assert standin.requests[-1]["max_tokens"] == 8000


def test_missing_key_in_print_mode_with_the_demo_off(tmp_path, workspace):
    for args, env in ((["--no-demo"], {}), ([], {"demo": "off"})):
        proc = run([*args, "-p", "hi"], base_env(tmp_path, None, **env), workspace)
        assert proc.returncode == 1 and "ANTHROPIC_API_KEY=sk-ant-..." in proc.stderr and proc.stdout == ""
        assert "/login" in proc.stderr


def test_workspace_must_exist(tmp_path):
    proc = run(["-w", str(tmp_path / "nope"), "-p", "hi"], base_env(tmp_path, None), tmp_path)
    assert proc.returncode == 2 and "is not a folder" in proc.stderr


def test_empty_prompt_is_refused_locally(tmp_path, workspace, standin):
    proc = run(["-p", "   "], base_env(tmp_path, standin), workspace)
    assert proc.returncode == 2 and "the prompt is empty" in proc.stderr and not standin.requests


def test_piped_slash_lines_and_bad_bytes(tmp_path, workspace, standin):
    standin.queue({"text": "got the path"}, {"text": "got the bytes"}, {"text": "still fine"})
    stdin = "/frobnicate\n//etc/hosts looks wrong\nrun echo caf\udcff\nand again\n"
    proc = run_agent(env=base_env(tmp_path, standin), cwd=workspace,
                          input=stdin.encode("utf-8", "surrogateescape"), capture_output=True, timeout=120)
    assert proc.returncode == 1, proc.stderr          # the unknown command fails the script, the rest still runs
    assert b"unknown command /frobnicate" in proc.stderr
    assert proc.stdout.decode().splitlines() == ["got the path", "got the bytes", "still fine"]
    from support.helpers import user_texts
    texts = user_texts(standin.requests[-1]["messages"])
    assert texts[0] == "/etc/hosts looks wrong" and texts[1] == "run echo caf\ufffd"


def test_ctrl_c_stops_a_piped_script(tmp_path, workspace, standin):
    import signal
    standin.queue({"text": "slow " * 40, "hold": "mid", "chunk": 5}, {"text": "SECOND LINE RAN"})
    proc = popen_agent(env=base_env(tmp_path, standin), cwd=workspace,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc.stdin.write("first line\nsecond line\n")
    proc.stdin.close()
    proc.stdin = None
    assert standin.wait_until_held(timeout=60)              # the first answer is surely still coming
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "SECOND LINE RAN" not in out and "[interrupted]" in err


def test_sigterm_kills_the_running_command(tmp_path, workspace, standin):
    import signal
    standin.queue({"tool_calls": [{"name": "bash", "input": {"command": "echo $$ > pid.txt; sleep 60"}}]})
    proc = popen_agent("-p", "go", env=base_env(tmp_path, standin), cwd=workspace,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pid = written_pid(workspace / "pid.txt")
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=20)
    assert proc.returncode == 128 + signal.SIGTERM
    assert ended(pid)


def test_version(tmp_path, workspace):
    from version import __version__
    proc = run(["--version"], base_env(tmp_path, None), workspace)
    assert proc.returncode == 0 and proc.stdout == f"s08 {__version__}\n"


def test_print_mode_refuses_what_needs_approval_with_one_line_saying_how(tmp_path, workspace, standin):
    (workspace / "keep.txt").write_text("precious")
    standin.queue({"tool_calls": [{"name": "bash", "input": {"command": "rm -f keep.txt"}},
                                  {"name": "bash", "input": {"command": "cat keep.txt"}}]}, {"text": "could not"})
    proc = run(["-p", "delete it"], base_env(tmp_path, standin, approval_mode="default"), workspace)
    assert proc.returncode == 0 and proc.stdout == "could not\n"
    assert (workspace / "keep.txt").read_text() == "precious"
    refusals = [line for line in proc.stderr.splitlines() if "approval needed" in line]
    assert refusals == ["[approval needed] bash `rm -f keep.txt` was not run: allow it with ALLOW_COMMANDS=rm in ~/.config/s08/.env, "
                        "or --yolo"]
    refused, read = standin.requests[-1]["messages"][-1]["content"]
    assert refused["is_error"] and "nobody can be asked" in refused["content"]
    assert not read.get("is_error") and read["content"].startswith("precious")      # read-only: it ran
