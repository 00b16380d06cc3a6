"""All MCP servers of a session: which start, their tools as the model sees them, the calls, the end.

    Servers(workspace, settings, environ, secrets, user_file, folder)
      .start(ask, emit)       once: the person's servers, and the project's the person agreed to
                              (servers/consent.py), started side by side within MCP_TIMEOUT each; one that
                              does not start is skipped with one line
      .schemas()              the MCP part of the tools list (servers/deferral.py decides full or deferred)
      .handles(name) / .run(name, args, ctx)      a tool call: a ToolResult, never an exception
      .report()               for /mcp and /context: each server, its state, tools and schema tokens
      .close()                servers end with s08

A server that died is started again at its next use, after a backoff (servers/connection.py); the call
that found it dead is a tool error the model reads. Nothing a server sends reaches the model uncleaned
(servers/bridge.py) or the screen unescaped (the UI's sanitizer).
"""

from __future__ import annotations

import concurrent.futures
import os
from dataclasses import dataclass, field
from pathlib import Path

from compaction.tokens import estimate_tools
from events import Notice
from tools.registry import ToolResult
from . import config as server_config
from .bridge import BridgedTool, bridge_tools, clean, convert_result, split_name
from .connection import CallFailed, Connection, Runner, StartFailed
from .consent import settle
from .deferral import LOAD_TOOL, Deferral, budget_for, cost


@dataclass
class ServerState:
    """One line of /mcp."""
    name: str
    scope: str
    shown: str
    state: str                   # running, failed, not started (not agreed), stopped
    problem: str = ""
    tools: int = 0
    tokens: int = 0
    stderr: str = ""


@dataclass
class Report:
    servers: list[ServerState] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    budget: int = 0
    total_tokens: int = 0
    deferred: bool = False
    loaded: int = 0
    rewrites: int = 0


class Servers:
    def __init__(self, workspace: Path, settings, environ: dict[str, str] | None = None, secrets: tuple = (),
                 user_file: Path | None = None, folder: Path | None = None, taken: set[str] | None = None):
        self.workspace, self.settings = Path(workspace), settings
        self.environ = dict(os.environ if environ is None else environ)
        self.secrets, self.user_file = secrets, user_file
        self.folder = folder or (self.workspace / ".sessions" / "mcp")      # stderr files go here
        self.taken = set(taken or ())
        self.runner = Runner()
        self.connections: dict[str, Connection] = {}
        self.tools: list[BridgedTool] = []
        self.deferral = Deferral()
        self.problems: list[str] = []
        self.not_agreed: list[server_config.Entry] = []
        self.started = False
        loaded = server_config.load(self.workspace, self.environ, tuple(secrets))
        self.entries, self.problems = loaded.servers, list(loaded.problems)

    # ---- start ------------------------------------------------------------------------------
    def start(self, ask, emit) -> bool:
        """Start what may start (once per session). True when the tools list may have changed."""
        if self.started:
            return False
        self.started = True
        for line in self.problems:
            emit(Notice(f"[mcp] {clean(line, 300)}", "warning"))
        mine = [e for e in self.entries if e.scope == "user"]
        project = [e for e in self.entries if e.scope == "project"]
        agreed = settle(project, self.user_file, self.workspace, ask, emit) if project and self.user_file else []
        self.not_agreed = [e for e in project if e not in agreed]
        chosen = mine + agreed
        if not chosen:
            return False
        for e in chosen:
            self.connections[e.name] = Connection(e, self.runner, self.folder / f"{e.name}.stderr.log",
                                                  self.environ, self.secrets, self.workspace)
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=min(8, len(chosen)), thread_name_prefix="s08-mcp-start")
        outcomes = {name: pool.submit(self._start_one, c) for name, c in self.connections.items()}
        try:
            for name, outcome in outcomes.items():
                problem = outcome.result()
                if problem:
                    emit(Notice(f"[mcp] server {name} skipped: {clean(problem, 300)} (its stderr: "
                                f"{self._stderr_shown(name)})", "warning"))
        except KeyboardInterrupt:          # Esc / Ctrl-C while they start: what started is used, the rest later
            for connection in self.connections.values():
                if not connection.alive:
                    connection.stop()
            emit(Notice("[mcp] starting the MCP servers was interrupted; those not started yet are skipped "
                        "(/mcp shows which)", "warning"))
        finally:
            pool.shutdown(wait=False)
        self._bridge(emit)
        return True

    def _start_one(self, connection: Connection) -> str:
        try:
            connection.start(self.settings.mcp_timeout)
            return ""
        except StartFailed as exc:
            return str(exc)

    def _bridge(self, emit) -> None:
        taken = set(self.taken) | {LOAD_TOOL}
        tools: list[BridgedTool] = []
        for name, c in self.connections.items():
            if c.state != "ready":
                continue
            bridged, problems = bridge_tools(name, c.listed, taken | {t.name for t in tools})
            tools += bridged
            for line in problems:
                emit(Notice(f"[mcp] {line}", "warning"))
        self.tools = tools

    # ---- the tools list -------------------------------------------------------------------------
    @property
    def budget(self) -> int:
        return budget_for(self.settings)

    def schemas(self) -> list[dict]:
        return self.deferral.schemas(self.tools, self.budget)

    def handles(self, name: str) -> bool:
        return name == LOAD_TOOL and self.deferral.deferred(self.tools, self.budget) or \
            any(t.name == name for t in self.tools)

    def is_mcp(self, name: str) -> bool:
        return split_name(name) is not None

    # ---- calls --------------------------------------------------------------------------------
    def run(self, name: str, args, ctx) -> ToolResult:
        if name == LOAD_TOOL:
            return self._load(args)
        tool = next((t for t in self.tools if t.name == name), None)
        if tool is None:
            return ToolResult(f"Unknown MCP tool '{name}'.", True)
        if not isinstance(args, dict):
            return ToolResult(f"{name}: arguments must be a JSON object", True)
        if self.deferral.deferred(self.tools, self.budget) and name not in self.deferral.loaded:
            self.deferral.load(self.tools, [name], None, self.budget)    # called by name: its schema is sent from now on
        connection = self.connections[tool.server]
        if not connection.alive:
            wait = connection.backoff_left()
            if wait > 0:
                return ToolResult(f"MCP server {tool.server} is not running ({connection.problem}); s08 starts it "
                                  f"again in {wait:.0f} s — try later or do without it.", True)
            try:
                connection.start(self.settings.mcp_timeout)
            except StartFailed as exc:
                return ToolResult(f"MCP server {tool.server} could not be started again: {exc}", True)
        try:
            result = connection.call(tool.original, args, self.settings.mcp_tool_timeout)
        except CallFailed as exc:
            return ToolResult(f"Error: MCP server {tool.server}, tool {tool.original}: {exc}"
                              + (" It is started again at its next use." if exc.died else ""), True,
                              {"mcp": tool.server})
        converted = convert_result(result)
        return ToolResult(converted.text, converted.is_error, {"mcp": tool.server}, converted.images)

    def _load(self, args) -> ToolResult:
        args = args if isinstance(args, dict) else {}
        new, unknown = self.deferral.load(self.tools, args.get("names"), args.get("query"), self.budget)
        lines = []
        if new:
            lines.append(f"Loaded {len(new)} tool(s); call them by name from your next step: {', '.join(new)}")
        else:
            lines.append("No new tool was loaded" + (" (those asked for are loaded already)." if not unknown else "."))
        if unknown:
            lines.append(f"Not MCP tools of this session: {', '.join(clean(n, 80) for n in unknown[:20])}")
        if self.deferral.over_budget:
            lines.append(f"Not loaded, the loaded schemas would pass MCP_SCHEMA_BUDGET ({self.budget:,} tokens): "
                         f"{', '.join(self.deferral.over_budget[:20])}")
        return ToolResult("\n".join(lines), not new and bool(unknown or self.deferral.over_budget))

    # ---- reporting and the end -----------------------------------------------------------------
    def _stderr_shown(self, name: str) -> str:
        path = self.folder / f"{name}.stderr.log"
        try:
            return str(path.relative_to(self.workspace))
        except ValueError:
            return str(path)

    def report(self) -> Report:
        out = Report(problems=list(self.problems), budget=self.budget, total_tokens=cost(self.tools),
                     deferred=self.deferral.deferred(self.tools, self.budget), loaded=len(self.deferral.loaded),
                     rewrites=self.deferral.rewrites)
        for e in self.entries:
            c = self.connections.get(e.name)
            mine = [t for t in self.tools if t.server == e.name]
            if c is None:
                state = "not started (not agreed to)" if e in self.not_agreed else "not started"
                out.servers.append(ServerState(e.name, e.scope, e.shown(), state))
                continue
            state = {"ready": "running", "failed": "failed"}.get(c.state, c.state)
            out.servers.append(ServerState(e.name, e.scope, e.shown(), state, c.problem, len(mine), cost(mine),
                                           self._stderr_shown(e.name) if e.kind == "stdio" else ""))
        return out

    def schema_tokens(self) -> dict[str, int]:
        """What each server's tools cost in the requests as they are sent now (deferred: the listing's share)."""
        if not self.deferral.deferred(self.tools, self.budget):
            return {name: cost([t for t in self.tools if t.server == name]) for name in self.connections}
        load = estimate_tools(self.schemas()[:1])
        per = {name: cost([t for t in self.tools if t.server == name and t.name in self.deferral.loaded])
               for name in self.connections}
        return {**per, LOAD_TOOL: load}

    def close(self) -> None:
        for c in self.connections.values():
            c.stop()
        self.runner.close()
