"""Hooks and custom commands in the REPL, in a real pseudo-terminal: the question about a project's
hooks, /hooks, a custom command from .claude/commands/ in /help, the completion menu and a turn."""

from __future__ import annotations

import json

import pexpect
import pytest

from support.agents import base_env, spawn_agent

pytestmark = pytest.mark.pty
PROMPT = "s08 >> "


def test_a_project_s_hooks_are_asked_about_then_listed_by_slash_hooks(tmp_path, workspace, standin):
    env = base_env(tmp_path, standin)
    started = tmp_path / "started.txt"
    (workspace / ".s08").mkdir()
    (workspace / ".s08" / "settings.json").write_text(json.dumps({"hooks": {
        "SessionStart": [{"hooks": [{"type": "command", "command": f"cat > {started}"}]}],
        "PostToolUse": [{"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "npx prettier --write"}]}]}}))
    user = tmp_path / "home" / ".config" / "s08" / "settings.json"
    user.parent.mkdir(parents=True)
    user.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}}))
    child = spawn_agent(env, workspace, timeout=30)
    child.expect_exact("defines 2 hooks")
    child.expect_exact("npx prettier --write")
    child.expect_exact("[y/N]")
    child.sendline("y")
    child.expect_exact("remembered for these exact hooks")
    child.expect_exact(PROMPT)
    assert json.loads(started.read_text())["source"] == "startup"
    child.sendline("/hooks")
    child.expect_exact("notify-send done")
    child.expect_exact("npx prettier --write")
    child.expect_exact(PROMPT)
    screen = child.logfile_read.getvalue()
    assert "PostToolUse [Write|Edit]" in screen and str(user) in screen.replace("\r\n", "")
    child.sendeof()
    child.expect(pexpect.EOF)


def test_a_custom_command_from_claude_commands_in_help_the_completion_menu_and_a_turn(repl, standin, workspace):
    folder = workspace / ".claude" / "commands"
    folder.mkdir(parents=True)
    (folder / "greet.md").write_text("---\ndescription: Say hello to someone\nargument-hint: [name]\n---\n"
                                     "Say hello to $1, warmly.\n")
    standin.queue({"text": "HELLO-SENT"})
    child = repl()
    child.sendline("/help")
    child.expect_exact("/greet")
    child.expect_exact("Say hello to someone [name] (project)")
    child.expect_exact(PROMPT)
    child.send("/gre")
    child.expect_exact("Say hello to someone [name] (project)")       # the completion menu offers it
    child.send("et Ada\r")
    child.expect_exact("HELLO-SENT")
    child.expect_exact(PROMPT)
    sent = standin.requests[-1]["messages"][0]["content"]
    text = sent if isinstance(sent, str) else " ".join(b.get("text", "") for b in sent)
    assert "Say hello to Ada, warmly." in text
