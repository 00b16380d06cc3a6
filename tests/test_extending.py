"""What docs/extending.md promises, checked where a test can: a registered command
is in /help, in the REPL's completion and reachable; every setting is in .env.example; every
registered tool has a schema and is sent to the model."""

from __future__ import annotations

from pathlib import Path

from prompts.skills import Skill, Skills
from tools.registry import OPTIONAL

import pytest

import commands
from commands import COMMANDS, command, dispatch, help_entries
from config import Settings, describe_settings
from events import HelpReport, Notice
from loop.agent_loop import Agent
from support.helpers import Recorder
from tools import REGISTRY, tool_schemas

ROOT = Path(__file__).resolve().parent.parent


def test_every_registered_command_is_in_help_and_the_completion():
    app = Recorder()
    assert dispatch(app, "/help") is None
    report = app.events[-1]
    assert isinstance(report, HelpReport)
    assert [name for name, _ in report.entries] == list(COMMANDS) == [name for name, _ in help_entries()]
    assert all(help_text.strip() for _, help_text in report.entries)
    from ui.repl import SlashCompleter
    assert SlashCompleter(dict(help_entries())).commands.keys() == COMMANDS.keys()


def test_help_lists_the_commands_on_screen():
    from ui.reports import help_report
    shown = help_report(HelpReport(help_entries())).plain
    for name, help_text in help_entries():
        assert name in shown and help_text in shown


def test_a_new_command_is_one_decorated_function(monkeypatch):
    monkeypatch.setattr(commands, "COMMANDS", dict(COMMANDS))
    seen = []

    @command("/shout", "say the argument loudly")
    def _shout(app, arg):
        seen.append(arg)
        app.emit(Notice(arg.upper()))

    app = Recorder()
    assert dispatch(app, "/shout  hello ") is None and seen == ["hello"]
    dispatch(app, "/help")
    assert ("/shout", "say the argument loudly") in app.events[-1].entries


def test_every_setting_is_in_env_example():
    example = (ROOT / ".env.example").read_text()
    for name, _default, _doc in describe_settings():
        assert f"\n{name}=" in example, f"{name} is missing from .env.example"


def test_every_registered_tool_has_a_schema_and_is_sent_to_the_model(tmp_path):
    agent = Agent(Settings(), tmp_path, None, lambda event: None)
    agent.use_skills(Skills({"s": Skill("s", "a skill", tmp_path, ("s",), "project")}))     # offers the skill tool
    sent = {schema["name"]: schema for schema in agent.tools}          # what loop/agent_loop.py sends as `tools`
    assert list(sent) == list(REGISTRY) and agent.tools == tool_schemas(list(REGISTRY))
    assert [t["name"] for t in tool_schemas()] == [n for n in REGISTRY if n not in OPTIONAL]    # without skills
    for name, t in REGISTRY.items():
        schema = sent[name]["input_schema"]
        assert t.description.strip() and sent[name]["description"] == t.description
        assert schema["type"] == "object" and isinstance(schema["properties"], dict)
        assert set(schema.get("required", [])) <= set(schema["properties"]), name


def test_every_compaction_layer_is_one_named_callable_entry():
    """pipeline.LAYERS (the layers lane's list): each entry has a name and is called on the messages."""
    from compaction import pipeline
    layers = getattr(pipeline, "LAYERS", None)
    if layers is None:
        pytest.skip("compaction/pipeline.py has no LAYERS list in this tree")
    names = [layer.name for layer in layers]
    assert all(isinstance(n, str) and n for n in names) and len(set(names)) == len(names)
    assert all(callable(layer) for layer in layers)


def test_every_provider_is_one_mapping_line():
    """llm/providers.py's PROVIDERS (the seam lane's mapping): a name → what builds the provider."""
    try:
        from llm.providers import PROVIDERS
    except ImportError:
        pytest.skip("no llm/providers.py in this tree")
    assert PROVIDERS and all(isinstance(name, str) and callable(make) for name, make in PROVIDERS.items())
