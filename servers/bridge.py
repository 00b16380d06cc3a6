"""What crosses between an MCP server and the model: tool names, cleaned schemas, results as blocks.

    mcp__SERVER__TOOL     Claude Code's naming, so allow lists and hooks carry over. A server name has no
                          "__" (servers/config.py), so the first "__" after "mcp__" always ends it.

Everything a server sends is untrusted text. Names that the API would refuse, or that collide once cleaned,
leave the tool out with one line; descriptions and schemas lose control characters (escape sequences
included) and are bounded; a schema that is not a JSON object schema, too deep or too big leaves the tool
out. Results: text as text, images as image blocks (a few, of the types the API takes, bounded), structured
content as JSON text where there is no text, anything else as a one-line note; `isError` is a tool error
the model reads. The text is bounded here (MAX_RESULT_CHARS); the compaction layers do the rest — a big
result goes to .task_outputs/ with a preview like any other tool's.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from messages import clean_text

PREFIX = "mcp__"
API_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")
MAX_DESCRIPTION = 2_000          # chars of one tool's description sent to the model
ONE_LINE = 120                   # chars of the one-line description a deferred tool keeps
MAX_SCHEMA_CHARS = 20_000        # a tool's input schema, as JSON
MAX_SCHEMA_DEPTH = 12
MAX_TOOLS = 200                  # per server
MAX_RESULT_CHARS = 2_000_000     # the text of one result; the budget layer saves what is over PERSIST_THRESHOLD
MAX_IMAGES = 4
MAX_IMAGE_BASE64 = 5_000_000     # the API's limit for one image is 5 MB
IMAGE_TYPES = {"image/png", "image/jpeg", "image/gif", "image/webp"}


def field_of(obj: Any, name: str, camel: str = "") -> Any:
    """An attribute of an SDK object by its name in SDK 2.x (snake_case) or 1.x (camelCase)."""
    value = getattr(obj, name, None)
    return getattr(obj, camel, None) if value is None and camel else value


def clean(text: Any, limit: int) -> str:
    """Untrusted text for the model: valid UTF-8, no control character or escape sequence, at most `limit`."""
    text = CONTROL.sub("", clean_text(str(text)))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def tool_name(server: str, tool: str) -> str:
    return f"{PREFIX}{server}__{tool}"


def split_name(name: str) -> tuple[str, str] | None:
    """(server, tool) of an MCP tool's name, or None when it is not one."""
    if not name.startswith(PREFIX):
        return None
    server, sep, tool = name[len(PREFIX):].partition("__")
    return (server, tool) if sep and server and tool else None


def one_line(description: str) -> str:
    line = next((part.strip() for part in description.splitlines() if part.strip()), "")
    return line if len(line) <= ONE_LINE else line[: ONE_LINE - 1] + "…"


@dataclass(frozen=True)
class BridgedTool:
    name: str                  # mcp__server__tool, as the model calls it
    server: str
    original: str              # the tool's name on its server
    description: str
    schema: dict
    annotations: dict = field(default_factory=dict, compare=False, hash=False)   # shown, never trusted

    def api_schema(self) -> dict:
        return {"name": self.name, "description": self.description, "input_schema": self.schema}

    def summary_line(self) -> str:
        return f"{self.name}: {one_line(self.description)}"


def _clean_value(value: Any, depth: int) -> Any:
    if depth > MAX_SCHEMA_DEPTH:
        raise ValueError("nested too deeply")
    if isinstance(value, dict):
        return {clean(k, 200): _clean_value(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean_value(v, depth + 1) for v in value]
    if isinstance(value, str):
        return clean(value, MAX_DESCRIPTION)
    if isinstance(value, float) and value != value:
        raise ValueError("holds NaN")
    return value


def schema_of(raw: Any) -> dict:
    """A tool's input schema, cleaned; ValueError when it cannot be sent."""
    if not isinstance(raw, dict):
        raise ValueError("its input schema is not an object")
    schema = _clean_value(raw, 0)
    if schema.get("type", "object") != "object":
        raise ValueError("its input schema is not of type object")
    schema["type"] = "object"
    if len(json.dumps(schema, ensure_ascii=False, allow_nan=False)) > MAX_SCHEMA_CHARS:
        raise ValueError(f"its input schema is larger than {MAX_SCHEMA_CHARS:,} characters")
    return schema


def bridge_tools(server: str, listed: list, taken: set[str]) -> tuple[list[BridgedTool], list[str]]:
    """The tools of `listed` (the SDK's Tool objects) the model may see, and a line for each left out.
    `taken`: names already in use (the built-in tools, other servers'): a collision leaves the tool out."""
    tools: list[BridgedTool] = []
    problems: list[str] = []
    seen = set(taken)
    for raw in listed[:MAX_TOOLS]:
        original = getattr(raw, "name", "")
        shown = clean(original, 60) or "(no name)"
        name = tool_name(server, original) if isinstance(original, str) else ""
        try:
            if not API_NAME.match(name):
                raise ValueError("its name is not one the API accepts (letters, digits, _ and -, at most 64 in all)")
            if name in seen:
                raise ValueError("another tool has that name")
            schema = schema_of(field_of(raw, "input_schema", "inputSchema"))
        except ValueError as e:
            problems.append(f"{server}: tool {shown!r} left out: {e}")
            continue
        seen.add(name)
        description = clean(getattr(raw, "description", None) or getattr(raw, "title", None) or "", MAX_DESCRIPTION)
        notes: Any = getattr(raw, "annotations", None)
        annotations = notes.model_dump(exclude_none=True) if notes is not None and hasattr(notes, "model_dump") else {}
        tools.append(BridgedTool(name, server, original, description or f"{original} (from MCP server {server})",
                                 schema, annotations))
    if len(listed) > MAX_TOOLS:
        problems.append(f"{server}: only the first {MAX_TOOLS} of its {len(listed)} tools are used")
    return tools, problems


@dataclass
class Converted:
    text: str
    images: list[dict] = field(default_factory=list)
    is_error: bool = False


def convert_result(result: Any) -> Converted:
    """A CallToolResult as the model reads it."""
    texts: list[str] = []
    images: list[dict] = []
    for item in (getattr(result, "content", None) or [])[:10_000]:
        kind = getattr(item, "type", "")
        if kind == "text":
            texts.append(clean_text(str(getattr(item, "text", ""))))
        elif kind == "image":
            media, data = str(field_of(item, "mime_type", "mimeType") or ""), getattr(item, "data", "")
            if isinstance(data, bytes):
                data = data.decode("ascii", "replace")
            if media not in IMAGE_TYPES:
                texts.append(f"[an image of type {clean(media, 40)!r} the model cannot read was left out]")
            elif len(images) >= MAX_IMAGES or len(data) > MAX_IMAGE_BASE64:
                texts.append(f"[an image was left out: at most {MAX_IMAGES} images of up to 5 MB each]")
            else:
                images.append({"type": "image", "source": {"type": "base64", "media_type": media, "data": data}})
        elif kind == "resource":
            inner = getattr(item, "resource", None)
            text = getattr(inner, "text", None)
            uri = clean(getattr(inner, "uri", ""), 300)
            texts.append(clean_text(str(text)) if isinstance(text, str) else f"[binary resource {uri} not shown]")
        elif kind == "resource_link":
            texts.append(f"[resource: {clean(getattr(item, 'uri', ''), 300)}]")
        else:
            texts.append(f"[{clean(kind, 30) or 'content'} content not shown]")
    structured = field_of(result, "structured_content", "structuredContent")
    if not any(t.strip() for t in texts) and structured is not None:
        try:
            texts = [json.dumps(structured, ensure_ascii=False, default=str)]
        except (TypeError, ValueError, RecursionError):      # nested past what json can write: a note
            texts = ["[structured content that is not JSON, or nested too deeply]"]
    text = "\n".join(texts)
    if len(text) > MAX_RESULT_CHARS:
        text = text[:MAX_RESULT_CHARS] + f"\n[… cut: the server sent {len(text):,} characters; s08 keeps {MAX_RESULT_CHARS:,}]"
    if not text.strip() and not images:
        text = "(no output)"
    return Converted(text, images, bool(field_of(result, "is_error", "isError")))
