"""The MCP server files (servers/config.py): Claude Code's format read as it is, ${VAR} expanded, and what a
cloned repository could ship in its .mcp.json (links, FIFOs, huge files, bad names) refused with one line."""

from __future__ import annotations

import json
import os

import pytest

from servers import config
from servers.config import Entry, expand, load


def write(path, servers) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}))


@pytest.fixture
def home(tmp_path):
    return {"HOME": str(tmp_path / "home"), "TOKEN": "t0k", "EMPTY": ""}


def test_both_files_are_read_and_variables_expanded(tmp_path, home):
    write(tmp_path / "home/.config/s08/mcp.json", {
        "time": {"command": "uvx", "args": ["mcp-server-time", "--tz=${TZ:-UTC}"], "env": {"K": "${TOKEN}"}},
        "docs": {"type": "http", "url": "https://d.example/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}})
    write(tmp_path / "ws/.mcp.json", {"repo": {"command": "./server", "args": []}})
    found = load(tmp_path / "ws", home)
    assert [(e.name, e.scope, e.kind) for e in found.servers] == [("time", "user", "stdio"), ("docs", "user", "http"),
                                                                 ("repo", "project", "stdio")]
    time_entry, docs, _ = found.servers
    assert time_entry.args == ("mcp-server-time", "--tz=UTC") and dict(time_entry.env) == {"K": "t0k"}
    assert dict(docs.headers) == {"Authorization": "Bearer t0k"}
    assert "t0k" not in docs.shown() and "${TOKEN}" not in docs.shown()     # shown as written: the URL only
    assert not found.problems


def test_expand():
    assert expand("${A}-${B:-x}-${C}", {"A": "1"}) == "1-x-"


def test_a_project_server_cannot_take_the_name_of_the_persons_own(tmp_path, home):
    write(tmp_path / "home/.config/s08/mcp.json", {"git": {"command": "mine"}})
    write(tmp_path / "ws/.mcp.json", {"git": {"command": "theirs"}})
    found = load(tmp_path / "ws", home)
    assert [(e.name, e.command) for e in found.servers] == [("git", "mine")]
    assert "your own mcp.json has a server of that name" in found.problems[0]


@pytest.mark.parametrize("name", ["a__b", "bad name", "x" * 41, "", "ansi\x1b[2J", "é"])
def test_names_that_would_break_mcp__server__tool_are_left_out(tmp_path, home, name):
    write(tmp_path / "ws/.mcp.json", {name: {"command": "x"}, "ok": {"command": "x"}})
    found = load(tmp_path / "ws", home)
    assert [e.name for e in found.servers] == ["ok"]
    assert "left out" in found.problems[0]


@pytest.mark.parametrize("raw", [{"command": ""}, {"command": 5}, {"args": ["x"]}, {"command": "x", "args": "y"},
                                 {"type": "sse", "url": "http://x"}, {"type": "http", "url": "file:///etc/passwd"},
                                 {"command": "x", "env": ["A"]}, {"command": "a\x00b"}, "text",
                                 {"command": "x", "args": ["a"] * 201}])
def test_entries_that_cannot_be_used_are_left_out_with_one_line(tmp_path, home, raw):
    write(tmp_path / "ws/.mcp.json", {"bad": raw})
    found = load(tmp_path / "ws", home)
    assert not found.servers and len(found.problems) == 1


def test_a_linked_mcp_json_is_not_followed(tmp_path, home):
    target = tmp_path / "elsewhere.json"
    write(target, {"evil": {"command": "x"}})
    (tmp_path / "ws").mkdir()
    os.symlink(target, tmp_path / "ws/.mcp.json")
    found = load(tmp_path / "ws", home)
    assert not found.servers and "not read" in found.problems[0]


def test_a_fifo_in_place_of_mcp_json_never_blocks(tmp_path, home):
    (tmp_path / "ws").mkdir()
    os.mkfifo(tmp_path / "ws/.mcp.json")
    found = load(tmp_path / "ws", home)
    assert not found.servers and "not a regular file" in found.problems[0]


def test_a_huge_mcp_json_is_not_read(tmp_path, home):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws/.mcp.json").write_text('{"mcpServers": {}, "pad": "' + "x" * 2_000_000 + '"}')
    found = load(tmp_path / "ws", home)
    assert not found.servers and "larger than" in found.problems[0]


def test_too_many_servers_are_cut(tmp_path, home):
    write(tmp_path / "ws/.mcp.json", {f"s{i}": {"command": "x"} for i in range(80)})
    found = load(tmp_path / "ws", home)
    assert len(found.servers) == config.MAX_SERVERS and "only the first" in found.problems[-1]


def test_the_digest_changes_with_the_entry():
    a = Entry("x", "project", "stdio", "c", raw={"command": "c"})
    b = Entry("x", "project", "stdio", "c", raw={"command": "c", "args": ["--evil"]})
    assert a.digest != b.digest and a.digest == Entry("x", "project", "stdio", "c", raw={"command": "c"}).digest


def test_add_and_remove_keep_other_content(tmp_path, home):
    path = config.user_file(home)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"mcpServers": {"a": {"command": "x"}}, "other": 1}))
    config.add(path, "b", {"type": "http", "url": "https://b/mcp"}, home)
    data = json.loads(path.read_text())
    assert set(data["mcpServers"]) == {"a", "b"} and data["other"] == 1
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert config.remove(path, "a") and not config.remove(path, "a")
    with pytest.raises(ValueError):
        config.add(path, "a__b", {"command": "x"}, home)


def test_add_never_writes_through_a_linked_mcp_json(tmp_path, home):
    target = tmp_path / "target.json"
    target.write_text("{}")
    (tmp_path / "ws").mkdir()
    os.symlink(target, tmp_path / "ws/.mcp.json")
    with pytest.raises(ValueError):
        config.add(config.project_file(tmp_path / "ws"), "x", {"command": "y"}, home)
    assert target.read_text() == "{}"


def test_a_repositorys_entry_never_expands_to_the_api_key(tmp_path, home):
    secret = {**home, "ANTHROPIC_API_KEY": "sk-ant-secret", "ANTHROPIC_AUTH_TOKEN": "tok-secret"}
    theirs = {"command": "srv", "args": ["${ANTHROPIC_API_KEY}"], "env": {"K": "${ANTHROPIC_AUTH_TOKEN}"}}
    write(tmp_path / "ws/.mcp.json", {"repo": theirs,
                                      "web": {"type": "http", "url": "https://x/${ANTHROPIC_API_KEY}",
                                              "headers": {"A": "${ANTHROPIC_API_KEY}"}}})
    write(tmp_path / "home/.config/s08/mcp.json", {"mine": {"command": "srv", "env": {"K": "${ANTHROPIC_API_KEY}"}}})
    found = load(tmp_path / "ws", secret)
    assert "secret" not in repr([(e.command, e.args, e.env, e.url, e.headers) for e in found.servers if e.scope == "project"])
    [mine] = [e for e in found.servers if e.scope == "user"]
    assert dict(mine.env) == {"K": "sk-ant-secret"}             # the person's own entry may name it


def test_the_consent_question_shows_the_entry_escaped():
    from servers.consent import question
    entry = Entry("repo", "project", "stdio", "x", raw={"command": "./x\x1b[2J\x1b]0;t\x07", "args": ["--a\rb"]})
    text = question(tmp_workspace := __import__("pathlib").Path("/w\x1b[31m"), [entry])
    assert "\x1b" not in text and "\x07" not in text and "\r" not in text and str(tmp_workspace)[:2] in text
