"""The tool registry: schemas for the API and one dispatch function.

Adding a tool means writing one handler and decorating it with `@tool(...)`.
`run_tool` never raises for a bad call: an unknown name, a missing or
mistyped argument, or an exception inside a handler all become an
`is_error` result the model can read and correct. Only KeyboardInterrupt
passes through, so Ctrl-C can cancel a turn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from redact import redact
from .workspace import ToolError

JSON_TYPES: dict[str, type | tuple[type, ...]] = {"string": str, "integer": int, "boolean": bool, "object": dict, "number": (int, float)}


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    input_schema: dict
    handler: Callable[..., Any]


@dataclass
class ToolResult:
    content: str
    is_error: bool = False
    meta: dict = field(default_factory=dict)   # for the screen only (e.g. bash's exit code); never sent
    images: list = field(default_factory=list) # image blocks that follow the text (an MCP tool's)


@dataclass
class ToolContext:
    """What a handler may use: the workspace, the settings, and requests back to the loop."""

    workspace: Path
    settings: Any = None
    compact_request: str | None = None        # set by the compact tool; read by the loop
    compact_done: bool = False                # compaction already ran in this user turn
    progress: Callable[[str], None] | None = None   # gets a running command's output as it arrives
    extra: dict = field(default_factory=dict)
    secrets: tuple = ()                       # key and token values, redacted from every result
    settings_files: tuple = ()                # s08's own settings files: never written by file tools
    jobs: Any = None                          # background processes commands left running (Jobs)
    sandbox: Any = None                       # the bash tool's kernel sandbox (tools.sandbox.Sandbox)
    servers: Any = None                       # the session's MCP servers (servers.manager.Servers): their tools
    run_as: str = ""                          # how the approval let this call run: "read-only" or "" (approved)
    round_calls: list = field(default_factory=list)   # the tool calls of the reply being run (task: parallel)

    def redact(self, text: str) -> str:
        return redact(text, self.secrets)


REGISTRY: dict[str, Tool] = {}


def tool(name: str, description: str, properties: dict, required: list[str] | tuple = ()):
    """Register a handler `fn(ctx, **arguments)` under `name` with a JSON schema."""
    schema = {"type": "object", "properties": properties, "required": list(required)}

    def register(fn):
        REGISTRY[name] = Tool(name, description, schema, fn)
        return fn
    return register


OPTIONAL = {"skill"}                 # offered only when named (there are skills to load)


def tool_schemas(names: list[str] | None = None) -> list[dict]:
    """The `tools` parameter of a Messages API request (without OPTIONAL tools unless named)."""
    chosen = [REGISTRY[n] for n in names] if names else [t for t in REGISTRY.values() if t.name not in OPTIONAL]
    return [{"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in chosen]


def _check_arguments(t: Tool, args: Any) -> dict:
    if not isinstance(args, dict):
        raise ToolError(f"{t.name}: arguments must be a JSON object, got {type(args).__name__}")
    props, required = t.input_schema["properties"], t.input_schema.get("required", [])
    missing = [r for r in required if r not in args]
    if missing:
        raise ToolError(f"{t.name}: missing required argument(s): {', '.join(missing)}")
    unknown = [k for k in args if k not in props]
    if unknown:
        raise ToolError(f"{t.name}: unknown argument(s): {', '.join(unknown)}; "
                        f"accepted: {', '.join(props)}")
    checked = {}
    for key, value in args.items():
        expected = props[key].get("type")
        if expected == "integer" and isinstance(value, str) and value.strip().lstrip("-").isdigit():
            value = int(value)          # models sometimes quote numbers; accept "10"
        py_type = JSON_TYPES.get(expected)
        bad_bool = expected in ("integer", "number") and isinstance(value, bool)
        if py_type and (not isinstance(value, py_type) or bad_bool):
            raise ToolError(f"{t.name}: argument '{key}' must be {expected}, got "
                            f"{type(value).__name__} {str(value)[:40]!r}")
        if "minimum" in props[key] and isinstance(value, (int, float)) and value < props[key]["minimum"]:
            raise ToolError(f"{t.name}: argument '{key}' must be at least {props[key]['minimum']}")
        checked[key] = value
    return checked


def run_tool(name: str, args: Any, ctx: ToolContext) -> ToolResult:
    """Execute one tool call; every failure is returned, not raised."""
    t = REGISTRY.get(name)
    if t is None and ctx.servers is not None and ctx.servers.handles(name):
        try:
            return ctx.servers.run(name, args, ctx)
        except Exception as exc:  # nothing an MCP server sends may end the session
            return ToolResult(f"Error: {name} failed unexpectedly: {type(exc).__name__}: {exc}", True)
    if t is None:
        return ToolResult(f"Unknown tool '{name}'. Available tools: {', '.join(REGISTRY)}", True)
    try:
        result = t.handler(ctx, **_check_arguments(t, args))
    except ToolError as exc:
        return ToolResult(f"Error: {exc}", True)
    except OSError as exc:
        return ToolResult(f"Error: {name} failed: {exc.strerror or exc} ({getattr(exc, 'filename', '') or ''})", True)
    except Exception as exc:  # a bug in a handler must not end the session
        return ToolResult(f"Error: {name} failed unexpectedly: {type(exc).__name__}: {exc}", True)
    if isinstance(result, ToolResult):
        return result if result.content else ToolResult("(no output)", result.is_error, result.meta, result.images)
    return ToolResult(str(result) if result not in (None, "") else "(no output)")
