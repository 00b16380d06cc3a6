"""`s08 mcp add|list|remove` (ui/mcp_commands.py), run as a person would, in this process."""

from __future__ import annotations

import json

from cli import main


def test_add_list_remove(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["mcp", "add", "time", "--", "uvx", "mcp-server-time", "--local-timezone", "UTC"]) == 0
    assert main(["mcp", "add", "-t", "http", "docs", "https://d.example/mcp", "-H", "X-Key: ${KEY}"]) == 0
    assert main(["mcp", "add", "--project", "-e", "A=1", "repo", "--", "./server"]) == 0
    user = json.loads((tmp_path / "home/.config/s08/mcp.json").read_text())["mcpServers"]
    assert user == {"time": {"command": "uvx", "args": ["mcp-server-time", "--local-timezone", "UTC"]},
                    "docs": {"type": "http", "url": "https://d.example/mcp", "headers": {"X-Key": "${KEY}"}}}
    assert json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]["repo"] == {
        "command": "./server", "args": [], "env": {"A": "1"}}
    capsys.readouterr()
    assert main(["mcp", "list"]) == 0
    out = capsys.readouterr().out
    assert "time  user  uvx mcp-server-time --local-timezone UTC" in out and "repo  project  ./server" in out
    assert main(["mcp", "remove", "time"]) == 0 and main(["mcp", "remove", "time"]) == 1
    assert main(["mcp", "add", "a__b", "--", "x"]) == 2
    assert main(["mcp", "add", "nothing"]) == 2
    assert "say what to start" in capsys.readouterr().err
