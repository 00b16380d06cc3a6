"""MCP servers for the tests: the real third-party ones (mcp-server-time, mcp-server-git) from their own venv,
made by .ci/mcp-venv (.ci-venvs/mcp, or the folder S08_MCP_VENV names; outside CI a missing venv skips the
test with the reason, in CI it fails), and the tests' own edge-case server (support/mcp_edge_server.py,
on the SDK's MCPServer, run by this interpreter).

    user_servers(home, {"time": time_entry(), "edge": edge_entry("many")})   writes ~/.config/s08/mcp.json
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EDGE = str(Path(__file__).with_name("mcp_edge_server.py"))


def mcp_venv() -> Path:
    return Path(os.environ.get("S08_MCP_VENV") or ROOT / ".ci-venvs" / "mcp")


def program(name: str) -> str:
    """A third-party server's program; skips (fails in CI) when its venv is missing."""
    path = mcp_venv() / "bin" / name
    if not path.exists():
        reason = f"MCP test servers venv missing ({path}): run bash .ci/mcp-venv to make it"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return str(path)


def time_entry() -> dict:
    return {"command": program("mcp-server-time"), "args": ["--local-timezone", "UTC"]}


def git_entry(repository: Path) -> dict:
    return {"command": program("mcp-server-git"), "args": ["--repository", str(repository)]}


def edge_entry(mode: str = "", **env: str) -> dict:
    entry: dict = {"command": sys.executable, "args": [EDGE] + ([mode] if mode else [])}
    if env:
        entry["env"] = env
    return entry


def config_dir(home: Path) -> Path:
    return home / ".config" / "s08"


def user_servers(home: Path, servers: dict) -> Path:
    """The person's ~/.config/s08/mcp.json holding `servers`."""
    folder = config_dir(home)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def user_allow(home: Path, *allowed: str) -> Path:
    """The person's ~/.config/s08/settings.json allowing `allowed` (Claude Code's permissions.allow)."""
    folder = config_dir(home)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "settings.json"
    path.write_text(json.dumps({"permissions": {"allow": list(allowed)}}))
    return path
