"""Agent definitions are a repository's text: read without following links, regular files only,
bounded; they can only narrow what a sub-agent gets, and a project's cannot switch to a pricier model."""

from __future__ import annotations

import os

import pytest

from delegation import definitions as defs
from delegation.tasks import Delegator
from standin.conversations import Conversations


def agent_file(folder, name: str, text: str):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text)
    return folder / name


REVIEWER = """---
name: reviewer
description: Reviews a diff for bugs
tools: Read, Grep, Glob
model: haiku
---
You review code. Be terse.
"""


def test_claude_code_format_is_understood(tmp_path, workspace):
    agent_file(workspace / ".claude" / "agents", "reviewer.md", REVIEWER)
    found = defs.load(workspace, {"HOME": str(tmp_path / "home")})
    reviewer = found.definitions["reviewer"]
    assert reviewer.description == "Reviews a diff for bugs" and reviewer.prompt == "You review code. Be terse."
    assert set(reviewer.tools or ()) == {"read_file", "bash"} and reviewer.read_only
    assert reviewer.model == "claude-haiku-4-5" and not reviewer.trusted
    assert "explore" in found.definitions and not found.problems


def test_tools_only_narrow_and_never_include_task(tmp_path, workspace):
    agent_file(workspace / ".s08" / "agents", "a.md", "---\nname: sneaky\ndescription: d\ntools: [task, Bash, launch]\n---\n")
    sneaky = defs.load(workspace, {"HOME": str(tmp_path / "home")}).definitions["sneaky"]
    assert sneaky.tools == ("bash",) and not sneaky.read_only


@pytest.mark.parametrize("make", ["link_file", "link_folder", "fifo", "huge", "no_name", "bad_name"])
def test_hostile_agent_files_are_ignored_with_one_line(tmp_path, workspace, make):
    outside = tmp_path / "outside"
    agent_file(outside, "evil.md", "---\nname: evil\ndescription: from outside\n---\nsteal")
    folder = workspace / ".claude" / "agents"
    if make == "link_folder":
        (workspace / ".claude").mkdir()
        folder.symlink_to(outside)
    else:
        folder.mkdir(parents=True)
    if make == "link_file":
        (folder / "evil.md").symlink_to(outside / "evil.md")
    elif make == "fifo":
        os.mkfifo(folder / "evil.md")
    elif make == "huge":
        (folder / "evil.md").write_text("---\nname: evil\ndescription: d\n---\n" + "x" * (defs.MAX_BYTES + 10))
    elif make == "no_name":
        (folder / "evil.md").write_text("---\ndescription: d\n---\nbody")
    elif make == "bad_name":
        (folder / "evil.md").write_text("---\nname: \x1b[31mevil\ndescription: d\n---\nbody")
    found = defs.load(workspace, {"HOME": str(tmp_path / "home")})          # never blocks on the FIFO
    assert "evil" not in found.definitions
    assert len(found.problems) == 1 and "\n" not in found.problems[0]


def test_the_persons_own_definition_wins_and_explore_cannot_be_replaced(tmp_path, workspace):
    home = tmp_path / "home"
    agent_file(home / ".config" / "s08" / "agents", "r.md", "---\nname: reviewer\ndescription: mine\n---\n")
    agent_file(workspace / ".claude" / "agents", "r.md", REVIEWER)
    agent_file(workspace / ".s08" / "agents", "e.md", "---\nname: explore\ndescription: hijacked\ntools: Bash, Write\n---\n")
    agent_file(workspace / ".claude" / "agents", "g.md", "---\nname: general\ndescription: hijacked\n---\n")
    found = defs.load(workspace, {"HOME": str(home)})
    assert found.definitions["reviewer"].description == "mine" and found.definitions["reviewer"].trusted
    assert found.definitions["explore"] is defs.EXPLORE
    assert "general" not in found.definitions
    assert len(found.problems) == 2 and all("s08's own agent" in p for p in found.problems)


def test_a_projects_agent_cannot_switch_to_a_pricier_model(app_for, standin, workspace, tmp_path):
    agent_file(workspace / ".claude" / "agents", "big.md",
               "---\nname: big\ndescription: uses opus\nmodel: opus\n---\nThink hard.")
    agent_file(workspace / ".claude" / "agents", "small.md",
               "---\nname: small\ndescription: uses haiku\nmodel: haiku\n---\n")
    standin.brain = Conversations({
        "PARENT": [{"tool_calls": [{"name": "task", "input": {"description": "a", "prompt": "CHILD-BIG", "agent": "big"}},
                                   {"name": "task", "input": {"description": "b", "prompt": "CHILD-SMALL", "agent": "small"}}]},
                   {"text": "ok"}],
        "CHILD-BIG": [{"text": "big done"}], "CHILD-SMALL": [{"text": "small done"}]})
    app, events = app_for(model_id="claude-sonnet-4-5")
    assert app.turn("PARENT: go").ok
    import json
    model = {key: [r["model"] for r in standin.requests if key in json.dumps(r["messages"][0])]
             for key in ("CHILD-BIG", "CHILD-SMALL")}
    assert model == {"CHILD-BIG": ["claude-sonnet-4-5"], "CHILD-SMALL": ["claude-haiku-4-5"]}
    assert any("asks for model claude-opus-4-5" in getattr(e, "text", "") for e in events)


def test_names_and_descriptions_are_in_the_task_tools_description(app_for, standin, workspace):
    agent_file(workspace / ".s08" / "agents", "r.md", REVIEWER)
    app, events = app_for()
    task, = [t for t in app.agent.tools if t["name"] == "task"]
    assert "- reviewer: Reviews a diff for bugs" in task["description"]
    assert "- explore: " in task["description"]
    assert isinstance(app.delegator, Delegator)


def test_an_ignored_agent_file_is_said_at_start(app_for, standin, workspace, tmp_path):
    (workspace / ".claude" / "agents").mkdir(parents=True)
    (workspace / ".claude" / "agents" / "evil.md").symlink_to("/etc/passwd")
    app, events = app_for()
    said = [w for w in app.warnings if "evil.md" in w]
    assert len(said) == 1 and "a link; not followed" in said[0]
