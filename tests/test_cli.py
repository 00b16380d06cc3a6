"""Non-interactive use: `-p "prompt"` and piped stdin, as scripts would run them."""

from __future__ import annotations



from support.agents import base_env
from support.helpers import run_main



def test_approval_flags_and_allow_commands(tmp_path, workspace, standin, monkeypatch, capsys):
    calls = {"tool_calls": [{"name": "write_file", "input": {"path": "w.txt", "content": "x"}},
                            {"name": "bash", "input": {"command": "touch t.txt"}}]}
    standin.queue(calls, {"text": "a"})
    env = base_env(tmp_path, standin)
    del env["APPROVAL_MODE"]                                                   # the real default
    run_main(["-p", "go", "--approval-mode", "auto_edit"], env, workspace, monkeypatch, capsys)
    assert (workspace / "w.txt").exists() and not (workspace / "t.txt").exists()
    (workspace / ".env").write_text("ALLOW_COMMANDS=touch\n")
    (workspace / "w.txt").unlink()
    standin.queue(calls, {"text": "b"})            # a folder's .env relaxes approvals only with consent
    _, _, err = run_main(["-p", "go"], env, workspace, monkeypatch, capsys)
    assert not (workspace / "t.txt").exists() and "ignoring ALLOW_COMMANDS=touch from this folder's .env" in err
    standin.queue(calls, {"text": "b"})            # a file the person names is their own
    _, _, err = run_main(["-p", "go", "--env-file", ".env"], env, workspace, monkeypatch, capsys)
    assert (workspace / "t.txt").exists() and not (workspace / "w.txt").exists()
    assert "[approval needed] write_file w.txt was not run: allow file changes with --approval-mode auto_edit" in err
    (workspace / ".env").write_text("")
    standin.queue({"tool_calls": [{"name": "bash", "input": {"command": "touch y.txt"}}]}, {"text": "c"})
    run_main(["-p", "go", "--yolo"], env, workspace, monkeypatch, capsys)
    assert (workspace / "y.txt").exists()


def test_unknown_command_fails_version_and_help(tmp_path, workspace, standin, monkeypatch, capsys):
    code, _, err = run_main(["-p", "/foo"], base_env(tmp_path, standin), workspace, monkeypatch, capsys)
    assert code == 2 and "unknown command /foo" in err and not standin.requests
    from version import __version__
    code, out, _ = run_main(["--version"], base_env(tmp_path, None), workspace, monkeypatch, capsys)
    assert code == 0 and out.strip() == f"s08 {__version__}"
    code, out, _ = run_main(["--help"], base_env(tmp_path, None), workspace, monkeypatch, capsys)
    assert "Entry point" not in out and "--approval-mode" in out and "--yolo" in out
    assert "usage: python agent.py" in out


def test_a_base_url_without_scheme_fails_at_once(tmp_path, workspace, monkeypatch, capsys):
    env = base_env(tmp_path, None, anthropic_base_url="127.0.0.1:9", anthropic_api_key="k", api_max_retries=5)
    code, _, err = run_main(["-p", "hi"], env, workspace, monkeypatch, capsys)
    assert code == 1 and "retrying" not in err
    assert "ANTHROPIC_BASE_URL='127.0.0.1:9' has no scheme: write it as http://127.0.0.1:9" in err


def test_a_401_says_where_the_key_came_from(tmp_path, workspace, standin, monkeypatch, capsys):
    env = base_env(tmp_path, standin)
    del env["ANTHROPIC_API_KEY"]
    (workspace / ".env").write_text("ANTHROPIC_API_KEY=wrong-key\n")
    code, _, err = run_main(["-p", "hi"], env, workspace, monkeypatch, capsys)
    assert code == 1
    assert f"The key in use is ANTHROPIC_API_KEY from {workspace / '.env'}: check it there." in err
    assert "wrong-key" not in err
    _, _, err = run_main(["-p", "hi"], {**env, "ANTHROPIC_API_KEY": "also-wrong"}, workspace, monkeypatch, capsys)
    assert "The key in use is ANTHROPIC_API_KEY from the environment" in err


def test_continue_prefers_the_newest_interactive_session(tmp_path, workspace, standin, monkeypatch, capsys):
    import os
    import time
    from session.log import LoggedHistory, SessionLog, list_sessions
    for origin, text, age in (("interactive", "typed at the prompt", 30), ("print", "from a script", 10)):
        history = LoggedHistory([], SessionLog(workspace, header={"origin": origin}))
        history.append({"role": "user", "content": text})
        history.append({"role": "assistant", "content": [{"type": "text", "text": "ok"}]})
        history.log.close()
        os.utime(history.log.path, (time.time() - age, time.time() - age))
    assert len(list_sessions(workspace)) == 2
    standin.queue({"text": "continued"})
    code, _, err = run_main(["-c", "-p", "and then?"], base_env(tmp_path, standin), workspace, monkeypatch, capsys)
    assert code == 0, err
    from support.helpers import user_texts
    assert user_texts(standin.requests[-1]["messages"]) == ["typed at the prompt", "and then?"]
