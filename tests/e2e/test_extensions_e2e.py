"""Hooks and custom commands in -p and piped runs (nobody to ask): a project's hooks are ignored with
one line, the person's run."""

from __future__ import annotations

import json

from support.agents import base_env, run_agent


def test_p_ignores_a_project_s_hooks_in_one_line_and_runs_the_person_s(tmp_path, workspace, standin):
    env = base_env(tmp_path, standin)
    ran = tmp_path / "project-ran.txt"
    (workspace / ".s08").mkdir()
    (workspace / ".s08" / "settings.json").write_text(json.dumps({"hooks": {"UserPromptSubmit": [
        {"hooks": [{"type": "command", "command": f"touch {ran}"}]}]}}))
    user = tmp_path / "home" / ".config" / "s08" / "settings.json"
    user.parent.mkdir(parents=True)
    user.write_text(json.dumps({"hooks": {"UserPromptSubmit": [
        {"hooks": [{"type": "command", "command": "cat >/dev/null; echo 'the person context'"}]}]}}))
    standin.queue({"text": "answered"})
    done = run_agent("-p", "hello", env=env, cwd=workspace, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "answered" in done.stdout
    said = [line for line in done.stderr.splitlines() if "hook" in line]
    assert len(said) == 1 and "ignoring the 1 hook(s)" in said[0] and not ran.exists()
    assert "the person context" in json.dumps(standin.requests[-1]["messages"])


def test_piped_input_runs_a_custom_command(tmp_path, workspace, standin):
    env = base_env(tmp_path, standin)
    folder = workspace / ".claude" / "commands"
    folder.mkdir(parents=True)
    (folder / "fix.md").write_text("Fix issue #$ARGUMENTS and add a test.")
    standin.queue({"text": "fixed"})
    done = run_agent(env=env, cwd=workspace, input="/fix 42\n", capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "fixed" in done.stdout
    assert "Fix issue #42 and add a test." in json.dumps(standin.requests[-1]["messages"])
