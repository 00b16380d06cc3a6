"""Processes s08 starts: a Ctrl-C while one is starting still lets s08 kill it (tools/spawn.py), and one
command's or hook's end never claims, counts or kills what another command or an MCP server runs beside
it (tools/background.py). The scenes run in a real child subreaper (support/claims_scenes.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tools.spawn import signals_held

SCENES = Path(__file__).resolve().parents[1] / "support" / "claims_scenes.py"


def test_a_ctrl_c_while_a_process_starts_is_raised_once_the_start_is_over():
    ran_on = False
    with pytest.raises(KeyboardInterrupt):
        with signals_held():
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(1000):         # many chances for a pending handler to run: it must not raise here
                pass
            ran_on = True
    assert ran_on


def test_a_sigterm_while_a_process_starts_raises_what_its_handler_raises(monkeypatch):
    def stop(signum, frame):
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, stop)          # (conftest puts the handler back afterwards)
    with pytest.raises(SystemExit) as stopped:
        with signals_held():
            os.kill(os.getpid(), signal.SIGTERM)
    assert stopped.value.code == 128 + signal.SIGTERM and signal.getsignal(signal.SIGTERM) is stop


def test_a_start_that_failed_still_raises_the_ctrl_c_that_came_meanwhile():
    with pytest.raises(KeyboardInterrupt):
        with signals_held():
            os.kill(os.getpid(), signal.SIGINT)
            raise FileNotFoundError("no such program")


def test_a_sigterm_that_came_with_a_ctrl_c_is_not_lost():
    def stop(signum, frame):
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, stop)          # (conftest puts the handler back afterwards)
    with pytest.raises(SystemExit):
        with signals_held():
            os.kill(os.getpid(), signal.SIGINT)
            os.kill(os.getpid(), signal.SIGTERM)


def test_a_held_signal_goes_to_an_ignoring_handler_and_nothing_is_raised():
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with signals_held():
            os.kill(os.getpid(), signal.SIGHUP)
        assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, signal.SIG_DFL)


def test_nested_holds_raise_once_at_the_outer_end():
    inner_done = False
    with pytest.raises(KeyboardInterrupt):
        with signals_held():
            with signals_held():
                os.kill(os.getpid(), signal.SIGINT)
            inner_done = True
    assert inner_done and signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_without_a_signal_nothing_is_raised_and_the_handlers_are_as_before():
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    with signals_held():
        pass
    assert {s: signal.getsignal(s) for s in before} == before


def test_in_another_thread_it_changes_nothing():
    failed: list = []

    def start() -> None:
        try:
            with signals_held():
                pass
        except BaseException as exc:    # noqa: BLE001 — signal.signal outside the main thread raises ValueError
            failed.append(exc)
    worker = threading.Thread(target=start)
    worker.start()
    worker.join()
    assert not failed


def scene(name: str, folder: Path) -> dict:
    done = subprocess.run([sys.executable, str(SCENES), name, str(folder)], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_a_hook_that_ends_leaves_a_command_started_after_it_alone(tmp_path):
    got = scene("hook-then-command", tmp_path)
    assert got["hook_left"] == 0
    assert got["command"].startswith("finished") and "still running" not in got["command"], got["command"]


@pytest.mark.mcp
def test_a_hook_that_ends_leaves_an_mcp_server_started_after_it_running(tmp_path):
    got = scene("server-during-hook", tmp_path)
    assert got["hook_left"] == 0 and got["server_alive"] and "still here" in got["echo"], got


def test_a_command_s_process_limit_does_not_count_another_command_s_processes(tmp_path):
    got = scene("count-beside", tmp_path)
    assert got["limited"].startswith("finished") and "MAX_PROCESSES" not in got["limited"], got["limited"]


def test_a_process_that_changed_its_tag_still_ends_with_its_command_s_timeout(tmp_path):
    got = scene("retagged-timeout", tmp_path)
    assert "timed out" in got["text"] and not got["moved_alive"], got


def test_a_command_s_own_orphans_in_sessions_of_their_own_count_against_its_process_limit(tmp_path):
    got = scene("own-orphans-count", tmp_path)
    assert "MAX_PROCESSES" in got["text"] and "timed out" not in got["text"], got


def test_ctrl_c_pressed_again_and_again_still_kills_the_command_s_processes(tmp_path):
    got = scene("sigint-spammer", tmp_path)
    assert got["raised"] in ("KeyboardInterrupt", "CommandInterrupted") and not got["spammer_alive"], got


def test_a_sub_agent_that_ends_leaves_another_one_s_running_command_alone(tmp_path):
    got = scene("task-ends-beside", tmp_path)
    assert got["claimed"] == [] and got["other"].startswith("finished"), got


def test_a_sub_agent_s_orphan_is_not_listed_with_the_main_agent_s_command(tmp_path):
    got = scene("orphan-of-a-task", tmp_path)
    assert got["main"].startswith("finished") and "still running" not in got["main"], got
    assert str(got["orphan"]) in got["task"] and got["orphan_alive"], got


@pytest.mark.mcp
def test_a_sub_agent_that_ends_leaves_an_mcp_server_running(tmp_path):
    got = scene("server-beside-task", tmp_path)
    assert got["claimed"] == [] and got["server_alive"] and "still here" in got["echo"], got


def test_a_command_started_with_jobs_that_have_ended_is_killed(tmp_path):
    got = scene("start-after-end", tmp_path)
    assert got["raised"] == "KeyboardInterrupt" and not got["left_alive"], got


def test_an_exit_code_is_read_by_its_own_wait_even_while_another_agent_reaps_orphans(tmp_path):
    got = scene("exit-codes-beside-looks", tmp_path)
    assert got == {"hooks": [2], "commands": ["[exit code 3]"]}, got


def test_s08_s_own_jobs_still_run_commands_after_their_end(tmp_path):
    # JOBS ends at s08's exit; a process that goes on (main() run in a test, then another App) runs commands again
    from tools.background import Jobs
    from tools.bash import run_command
    whole = Jobs(whole=True)
    whole.end_all()
    assert run_command("echo again", tmp_path, 30, tmp_path, jobs=whole).text.startswith("again")
