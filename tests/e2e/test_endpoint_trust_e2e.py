"""An endpoint nobody agreed to, in -p: refused with one line and a failing status; used once
agreed to, or named on the command line."""

from __future__ import annotations

from access.credentials import remember_endpoint
from config import user_settings_file
from support.agents import TEST_KEY, base_env, run_agent


def write(path, **settings):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{k.upper()}={v}\n" for k, v in settings.items()))


def run(tmp_path, workspace, *args, stdin=None, **settings):
    return run_agent(*args, env=base_env(tmp_path, None, **settings), cwd=workspace,
                          input=stdin, capture_output=True, text=True, timeout=60)


def test_print_mode_refuses_with_one_line_and_a_failing_status(tmp_path, workspace, other):
    write(workspace / ".env", anthropic_base_url=other.url)
    done = run(tmp_path, workspace, "-p", "hello", anthropic_api_key=TEST_KEY)
    assert done.returncode == 1 and done.stdout == "" and not other.requests
    [line] = done.stderr.splitlines()
    assert line.startswith("s08: sending nothing") and other.url in line and "--env-file" in line
    assert TEST_KEY not in done.stderr
    piped = run(tmp_path, workspace, stdin="one\ntwo\n", anthropic_api_key=TEST_KEY)
    assert piped.returncode == 1 and piped.stdout == "" and not other.requests
    assert len(piped.stderr.splitlines()) == 2 and "see above" in piped.stderr


def test_print_mode_uses_an_endpoint_agreed_to_earlier_or_named_on_the_command_line(tmp_path, workspace, standin):
    write(workspace / ".env", anthropic_base_url=standin.url)
    standin.queue({"text": "named"}, {"text": "agreed"})
    done = run(tmp_path, workspace, "--env-file", ".env", "-p", "hello", anthropic_api_key=TEST_KEY)
    assert (done.returncode, done.stdout) == (0, "named\n"), done.stderr
    remember_endpoint(user_settings_file(base_env(tmp_path, None)), workspace.resolve(), standin.url)
    done = run(tmp_path, workspace, "-p", "hello", anthropic_api_key=TEST_KEY)
    assert (done.returncode, done.stdout) == (0, "agreed\n"), done.stderr
