"""The JSON each event's hooks get on stdin, with Claude Code's field names, so hooks carry over unchanged.

    tool_fields(name, args, workspace)     tool_name (Claude Code's name for s08's four: Bash, Read, Write,
                                           Edit), tool_input (s08's arguments plus Claude Code's:
                                           file_path — absolute —, old_string, new_string), s08_tool_name
    tool_response(name, args, content, is_error, workspace)    what PostToolUse gets as tool_response

Every payload also has session_id, transcript_path (s08's session log), cwd, permission_mode and
hook_event_name (added by Hooks.fire).
"""

from __future__ import annotations

from pathlib import Path

from .settings import TOOL_NAMES

ALIASES = {"old_text": "old_string", "new_text": "new_string"}
MAX_RESPONSE = 1_000_000          # characters of a tool's output sent to PostToolUse hooks


def _file_path(args: dict, workspace: Path) -> str:
    path = args.get("path")
    return str(workspace / path) if isinstance(path, str) and path else ""


def tool_fields(name: str, args, workspace: Path) -> dict:
    args = dict(args) if isinstance(args, dict) else {}
    given = dict(args)
    if name in ("read_file", "write_file", "edit_file"):
        given["file_path"] = _file_path(args, workspace)
        for ours, theirs in ALIASES.items():
            if ours in args:
                given[theirs] = args[ours]
    return {"tool_name": TOOL_NAMES.get(name, name), "s08_tool_name": name, "tool_input": given}


def tool_response(name: str, args, content: str, is_error: bool, workspace: Path) -> dict:
    text = content if len(content) <= MAX_RESPONSE else content[:MAX_RESPONSE]
    response: dict = {"output": text, "is_error": is_error, "success": not is_error}
    if name == "bash":
        response["stdout"] = text
    if name in ("write_file", "edit_file", "read_file") and isinstance(args, dict):
        response["filePath"] = _file_path(args, workspace)
    return response
