"""The start-up question about an endpoint named by the workspace's .env, in a pseudo-terminal: asked
after the banner and before any request; yes is remembered across a restart; no falls back to the
person's own endpoint and sends nothing to the folder's."""

from __future__ import annotations

import pexpect
import pytest

from config import user_settings_file
from support.agents import TEST_KEY, base_env, spawn_agent

pytestmark = pytest.mark.pty
PROMPT = "s08 >> "
QUESTION = "Use this endpoint?"


def leave(child) -> None:
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_yes_is_remembered_across_a_restart(tmp_path, workspace, standin):
    (workspace / ".env").write_text(f"ANTHROPIC_BASE_URL={standin.url}\n")
    env = base_env(tmp_path, None, anthropic_api_key=TEST_KEY)
    child = spawn_agent(env, workspace, timeout=30)
    child.expect_exact("Ctrl-D exits")                             # the banner first, then the question
    child.expect_exact(QUESTION)
    shown = child.before
    child.expect_exact("[y/N]")
    assert str(workspace) in shown and "ANTHROPIC_API_KEY from the environment" in shown
    assert TEST_KEY not in shown and not standin.requests
    child.sendline("y")
    child.expect_exact("remembered for this folder")
    child.expect_exact(PROMPT)
    standin.queue({"text": "ANSWER-ONE"}, {"text": "ANSWER-TWO"})
    child.sendline("hello")
    child.expect_exact("ANSWER-ONE")
    child.expect_exact(PROMPT)
    leave(child)

    child = spawn_agent(env, workspace, timeout=30)                # the next start: not asked again
    child.expect_exact(PROMPT)
    assert QUESTION not in child.before
    child.sendline("hello again")
    child.expect_exact("ANSWER-TWO")
    child.expect_exact(PROMPT)
    leave(child)


def test_no_uses_the_persons_own_endpoint_and_asks_again_next_time(tmp_path, workspace, standin, other):
    env = base_env(tmp_path, None)
    user = user_settings_file(env)
    user.parent.mkdir(parents=True)
    user.write_text(f"ANTHROPIC_BASE_URL={standin.url}\nANTHROPIC_API_KEY={TEST_KEY}\n")
    (workspace / ".env").write_text(f"ANTHROPIC_BASE_URL={other.url}\nMODEL_ID=evil-model\n")
    for _start in range(2):
        child = spawn_agent(env, workspace, timeout=30)
        child.expect_exact("Use them?")              # the endpoint, and the model it names (issue 19)
        assert f"ANTHROPIC_API_KEY from your user-level file {user}" in " ".join(child.before.split())
        assert "MODEL_ID=evil-model" in " ".join(child.before.split())
        child.expect_exact("[y/N]")
        child.sendline("n")
        child.expect_exact(f"not using it: this session uses {standin.url}")
        child.expect_exact(PROMPT)
        standin.queue({"text": "MY-OWN-ENDPOINT"})
        child.sendline("hello")
        child.expect_exact("MY-OWN-ENDPOINT")
        child.expect_exact(PROMPT)
        leave(child)
    assert not other.requests and [r["model"] for r in standin.requests] == ["claude-sonnet-4-6"] * 2


def test_relaxations_from_the_folder_are_asked_about_before_the_first_prompt(tmp_path, workspace, standin):
    """S08_HISTORY_FILE and APPROVAL_MODE from a folder's .env: no keeps the history where it was and
    the approvals as they were; yes (at the next start, which asks again) uses both."""
    elsewhere = tmp_path / "elsewhere" / "typed.txt"
    (workspace / ".env").write_text(f"S08_HISTORY_FILE={elsewhere}\nAPPROVAL_MODE=auto_edit\n")
    env = base_env(tmp_path, standin)
    del env["APPROVAL_MODE"]
    for answer in ("n", "y"):
        child = spawn_agent(env, workspace, timeout=30)
        child.expect_exact("Ctrl-D exits")
        child.expect_exact("relaxes what s08 may do without asking you")
        child.expect_exact("[y/N]")
        assert f"S08_HISTORY_FILE={elsewhere}" in " ".join(child.before.split())
        child.sendline(answer)
        child.expect_exact(PROMPT)
        standin.queue({"text": f"ANSWER-{answer}"})
        child.sendline(f"typed-{answer}")
        child.expect_exact(f"ANSWER-{answer}")
        child.expect_exact("approvals auto_edit" if answer == "y" else "$")       # the status line
        child.expect_exact(PROMPT)
        leave(child)
        if answer == "n":
            assert not elsewhere.exists() and "typed-n" in (tmp_path / "home" / ".s08_history").read_text()
    assert "typed-y" in elsewhere.read_text() and "typed-y" not in (tmp_path / "home" / ".s08_history").read_text()
