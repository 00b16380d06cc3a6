"""Whether a tool call names a tool s08 has, and the error for one that does not — small models call
"Read", "functions.read_file" or a tool they imagined.

    unknown_tool(name, agent) -> the error to answer the call with, or None when the tool exists

A tool exists when it is offered to the model (agent.tools), built in (tools.REGISTRY), or handled by a
connected MCP server (a deferred one too). A call to any other name is answered at once with this
error — no hook, no approval question (an invented "mcp__…" name would otherwise ask the person to
approve a call to a server that is not there) — naming the closest offered tool when one is close.
"""

from __future__ import annotations

import difflib

from tools import REGISTRY

MAX_LISTED = 40          # offered tools named in the error


def _closest(name: str, offered: list[str]) -> str | None:
    """The offered tool `name` most likely meant: the same name in other case or behind a prefix
    ("functions_read_file"), else the nearest spelling."""
    low = name.lower()
    for tool in offered:
        if low == tool.lower() or low.endswith(("_" + tool.lower(), "." + tool.lower())):
            return tool
    near = difflib.get_close_matches(low, [t.lower() for t in offered], n=1, cutoff=0.6)
    return next((t for t in offered if near and t.lower() == near[0]), None)


def unknown_tool(name: str, agent) -> str | None:
    offered = [t["name"] for t in agent.tools if isinstance(t, dict) and isinstance(t.get("name"), str)]
    servers = agent.tool_ctx.servers
    if name in offered or name in REGISTRY or (servers is not None and servers.handles(name)):
        return None
    guess = _closest(name, offered)
    listed = ", ".join(offered[:MAX_LISTED]) + (", …" if len(offered) > MAX_LISTED else "")
    return (f"Unknown tool '{name}': there is no tool by that name, so nothing was run."
            + (f" Did you mean {guess}?" if guess else "") + f" The tools are: {listed}.")
