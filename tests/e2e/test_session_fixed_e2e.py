"""A session's endpoint is fixed: piped input ignores a change and says so; the REPL asks before
using a changed one."""

from __future__ import annotations

import subprocess

import pexpect
import pytest

from support.agents import base_env, popen_agent, spawn_agent
from support.helpers import settings_file

PROMPT = "s08 >> "


def test_piped_input_ignores_the_change_and_says_so_on_stderr(tmp_path, workspace, standin, other):
    settings_file(workspace, standin.url, agreed=True)
    standin.queue({"text": "first answer"}, {"text": "second answer"})
    proc = popen_agent(env=base_env(tmp_path, None), cwd=workspace,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc.stdin.write("first question\n")
    proc.stdin.flush()
    assert proc.stdout.readline() == "first answer\n"
    settings_file(workspace, other.url, model_id="evil-model")
    out, err = proc.communicate("second question\n", timeout=30)
    assert proc.returncode == 0, err
    assert out == "second answer\n"
    assert not other.requests and len(standin.requests) == 2
    assert f"[ignored a settings change: ANTHROPIC_BASE_URL: {standin.url} → {other.url}" in err
    assert "start s08 again to use the new values" in err


@pytest.mark.pty
def test_the_repl_asks_before_using_a_changed_endpoint(tmp_path, workspace, standin, other):
    settings_file(workspace, standin.url, agreed=True)
    standin.queue({"text": "ANSWER-ONE"}, {"text": "ANSWER-TWO"})
    child = spawn_agent(base_env(tmp_path, None), workspace, timeout=30)
    child.expect_exact(PROMPT)
    child.sendline("hello")
    child.expect_exact("ANSWER-ONE")
    child.expect_exact(PROMPT)
    settings_file(workspace, other.url)
    child.sendline("hello again")
    child.expect_exact("A settings file changed while s08 was running")
    child.expect_exact("[y/N]")
    assert other.url in child.before
    child.sendline("n")
    child.expect_exact("kept this session's endpoint")
    child.expect_exact("ANSWER-TWO")
    child.expect_exact(PROMPT)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0 and not other.requests
