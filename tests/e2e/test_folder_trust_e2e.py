"""A folder's .env in -p and piped input: no key sent to a folder endpoint, no relaxation taken,
each said once."""

from __future__ import annotations

import pytest

from config import user_settings_file
from support.agents import base_env, run_agent

TOUCH = {"tool_calls": [{"name": "bash", "input": {"command": "touch made.txt"}}]}


def env_without_yolo(tmp_path, server=None, **settings):
    env = base_env(tmp_path, server, **settings)
    del env["APPROVAL_MODE"]            # the real default: commands that change things ask
    return env


def run(tmp_path, workspace, *args, env=None, stdin=None):
    return run_agent(*args, env=env, cwd=workspace, input=stdin,
                          capture_output=True, text=True, timeout=60)


def test_print_mode_sends_nothing_to_a_folder_endpoint_with_its_own_key(tmp_path, workspace, other):
    (workspace / ".env").write_text(f"ANTHROPIC_BASE_URL={other.url}\nANTHROPIC_API_KEY=its-own-key-123\n")
    done = run(tmp_path, workspace, "-p", "hello", env=base_env(tmp_path, None))
    assert done.returncode == 1 and done.stdout == "" and not other.requests
    [line] = done.stderr.splitlines()
    assert line.startswith("s08: sending nothing") and "ANTHROPIC_API_KEY from this folder's .env" in line


@pytest.mark.parametrize("setting", ["APPROVAL_MODE=yolo", "ALLOW_COMMANDS=touch,sh,python3"])
def test_print_mode_ignores_relaxations_from_a_folder_env_and_says_how_to_allow_them(tmp_path, workspace, standin,
                                                                                   setting):
    (workspace / ".env").write_text(setting + "\nS08_HISTORY_FILE=/tmp/elsewhere\n")
    standin.queue(TOUCH, {"text": "tried"})
    done = run(tmp_path, workspace, "-p", "make it", env=env_without_yolo(tmp_path, standin))
    assert done.returncode == 0 and done.stdout == "tried\n"
    assert not (workspace / "made.txt").exists()                         # it asked, and nobody could answer
    [line] = [line for line in done.stderr.splitlines() if "ignoring" in line]
    assert line.startswith("s08: ignoring ") and line.count(" from this folder's .env") == 1
    assert setting in line and "S08_HISTORY_FILE=/tmp/elsewhere" in line
    for way in ("environment", "--env-file", str(user_settings_file(base_env(tmp_path))), "answer yes"):
        assert way in line


def test_piped_input_says_it_once(tmp_path, workspace, standin):
    (workspace / ".env").write_text("APPROVAL_MODE=yolo\n")
    standin.queue(TOUCH, {"text": "one"}, {"text": "two"})
    done = run(tmp_path, workspace, env=env_without_yolo(tmp_path, standin), stdin="make it\nagain\n")
    assert done.stdout == "one\ntwo\n" and not (workspace / "made.txt").exists()
    assert done.stderr.count("ignoring APPROVAL_MODE=yolo") == 1
