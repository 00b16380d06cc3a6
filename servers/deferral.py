"""The MCP schemas a request carries, within MCP_SCHEMA_BUDGET (default 10 % of CONTEXT_LIMIT).

    all schemas within the budget    every MCP tool's full schema, after the built-in tools
    over it                          one tool, mcp_load_tools, whose description lists every MCP tool by
                                     name and one line; the model calls it (by names or a query) and the
                                     full schemas it loaded follow at the END of the tools list from the
                                     next request on, in the order they were loaded, never removed

Why the end: the prompt cache is a prefix (tools, then system, then messages). Appending keeps the built-in
tools and the load tool where they were, so the cache breakpoint after the system prompt is rewritten once
per load that added something (counted in `rewrites`), and never because of a tool that was already loaded.
"""

from __future__ import annotations

import re

from compaction.tokens import estimate_tools
from .bridge import BridgedTool

LOAD_TOOL = "mcp_load_tools"
MAX_LOADED_PER_CALL = 8
LOAD_DESCRIPTION = ("Load the full input schemas of MCP tools so you can call them. The MCP tools below are "
                    "available but only their names are listed here, to save context; call this with the "
                    "exact `names` you need (or a `query` of keywords), then call the tools by name. Loaded "
                    "tools stay loaded.\n\nAvailable MCP tools:\n")


def budget_for(settings) -> int:
    return settings.mcp_schema_budget or settings.context_limit // 10


def cost(tools: list[BridgedTool]) -> int:
    return estimate_tools([t.api_schema() for t in tools])


class Deferral:
    """Which MCP schemas go out; `loaded` keeps its order (the end of the tools list)."""

    def __init__(self) -> None:
        self.loaded: list[str] = []
        self.rewrites = 0                 # loads that changed the tools list (each rewrites the cached prefix)
        self.over_budget: list[str] = []  # what the last load left out: it would have passed the budget

    def deferred(self, tools: list[BridgedTool], budget: int) -> bool:
        return bool(tools) and cost(tools) > budget

    def schemas(self, tools: list[BridgedTool], budget: int) -> list[dict]:
        if not self.deferred(tools, budget):
            return [t.api_schema() for t in tools]
        by_name = {t.name: t for t in tools}
        listing = "\n".join(t.summary_line() for t in tools)
        load = {"name": LOAD_TOOL, "description": LOAD_DESCRIPTION + listing,
                "input_schema": {"type": "object", "properties": {
                    "names": {"type": "array", "items": {"type": "string"},
                              "description": "exact tool names from the list, e.g. mcp__git__git_status"},
                    "query": {"type": "string", "description": "keywords to find tools by name or description"}}}}
        return [load] + [by_name[n].api_schema() for n in self.loaded if n in by_name]

    def load(self, tools: list[BridgedTool], names, query, budget: int | None = None) -> tuple[list[str], list[str]]:
        """(newly loaded, unknown names). A query loads the best matches (all its words in the name or the
        description first), at most MAX_LOADED_PER_CALL in all, and nothing that would take the loaded
        schemas past `budget` tokens (those are left in `over_budget`)."""
        by_name = {t.name: t for t in tools}
        wanted = [str(n) for n in names] if isinstance(names, list) else []
        unknown = [n for n in wanted if n not in by_name]
        chosen = [n for n in wanted if n in by_name]
        if isinstance(query, str) and query.strip():
            words = [w for w in re.split(r"[^a-z0-9]+", query.lower()) if w]

            def score(t: BridgedTool) -> int:
                hay = (t.name + " " + t.description).lower()
                return sum(w in hay for w in words) * 2 + sum(w in t.name.lower() for w in words)
            ranked = sorted((t for t in tools if score(t)), key=lambda t: -score(t))
            chosen += [t.name for t in ranked[:MAX_LOADED_PER_CALL]]
        new = [n for n in dict.fromkeys(chosen) if n not in self.loaded][:MAX_LOADED_PER_CALL]
        # the model may load again and again: what is loaded stays within the budget (never the window)
        self.over_budget = []
        if budget is not None:
            spent = cost([by_name[n] for n in self.loaded if n in by_name])
            for n in list(new):
                more = cost([by_name[n]])
                if spent + more > budget:
                    new.remove(n)
                    self.over_budget.append(n)
                else:
                    spent += more
        if new:
            self.loaded += new
            self.rewrites += 1
        return new, unknown
