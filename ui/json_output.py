"""Machine-readable output of a -p run: `--output-format json` and `--output-format stream-json`.

    json          one JSON object on stdout when the run ends (the result record below)
    stream-json   one JSON object per line on stdout, as things happen:
                    {"type": "init", "session_id", "model", "workspace", "approval_mode", "tools", "mcp_servers"}
                    {"type": "text", "text"}                      a piece of the answer as it streams
                    {"type": "tool_use", "id", "name", "input"}   a tool call starts
                    {"type": "tool_output", "id", "text"}         a running command's output (redacted)
                    {"type": "tool_result", "id", "name", "is_error", "content", "seconds", "exit_code"?}
                    {"type": "compaction", "layer", "message"}
                    {"type": "retry", "delay", "reason", "attempt", "max_attempts"}
                    {"type": "notice", "kind", "text"}
                    {"type": "response", "stop_reason", "purpose", "usage"}   one model call ended
                    {"type": "interrupted"}
                  and last the result record.

The result record: {"type": "result", "subtype": "success" | "error" | "interrupted", "is_error",
"exit_code", "exit_reason" (completed, error, interrupted, bad_input), "result" (the final answer's text), "error", "session_id", "model", "stop_reason" (of the
last answer: end_turn, max_tokens, refusal, …), "usage" (the session's tokens), "cost_usd" (null when
the price is unknown), "model_calls", "compactions" (each {"layer", "message"}), "duration_s"}.

Progress for people still goes to stderr (ui/quiet.py); stdout holds only JSON. Everything is written
with ensure_ascii, so no control character or other raw text from the model reaches a terminal.
"""

from __future__ import annotations

import sys
import time

import json_text
from events import (Compaction, Interrupted, Notice, ResponseDone, Retrying, TextDelta, ToolFinished, ToolOutput,
                    ToolStarted)
from .quiet import QuietRenderer

FORMATS = ("text", "json", "stream-json")
CONTENT_CHARS = 20000           # a tool result's content in a stream-json line is cut here


def write_json(record: dict, stream=None) -> None:
    print(json_text.dumps(record, ensure_ascii=True, default=str), file=stream or sys.stdout, flush=True)


class JsonEvents:
    """The emitter of a -p run with a JSON format: stderr lines for people (QuietRenderer), the stream-json
    lines on stdout when `streaming`, and what the result record needs (compactions, the last stop reason)."""

    def __init__(self, streaming: bool, stream=None):
        self.streaming, self.stream = streaming, stream
        self.quiet = QuietRenderer()
        self.compactions: list[dict] = []
        self.stop_reason: str | None = None
        self.started = time.monotonic()

    def _out(self, record: dict) -> None:
        if self.streaming:
            write_json(record, self.stream)

    def __call__(self, event) -> None:
        self.quiet(event)
        if isinstance(event, TextDelta):
            self._out({"type": "text", "text": event.text})
        elif isinstance(event, ToolStarted):
            self._out({"type": "tool_use", "id": event.tool_use_id, "name": event.name, "input": event.input})
        elif isinstance(event, ToolOutput):
            self._out({"type": "tool_output", "id": event.tool_use_id, "text": event.text})
        elif isinstance(event, ToolFinished):
            record = {"type": "tool_result", "id": event.tool_use_id, "name": event.name, "is_error": event.is_error,
                      "content": event.content[:CONTENT_CHARS], "seconds": round(event.seconds, 3)}
            for key in ("exit_code", "timed_out", "interrupted", "declined"):
                if key in (event.meta or {}):
                    record[key] = event.meta[key]
            self._out(record)
        elif isinstance(event, Compaction):
            self.compactions.append({"layer": str(event.layer), "message": event.message})
            self._out({"type": "compaction", **self.compactions[-1]})
        elif isinstance(event, Retrying):
            self._out({"type": "retry", "delay": event.delay, "reason": event.reason, "attempt": event.attempt,
                       "max_attempts": event.max_attempts})
        elif isinstance(event, Notice):
            self._out({"type": "notice", "kind": event.kind, "text": event.text})
        elif isinstance(event, ResponseDone):
            if event.purpose == "answer":
                self.stop_reason = event.stop_reason
            self._out({"type": "response", "stop_reason": event.stop_reason, "purpose": event.purpose,
                       "usage": event.usage})
        elif isinstance(event, Interrupted):
            self._out({"type": "interrupted"})

    def init(self, app) -> None:
        log, servers = app.messages.log, getattr(app, "servers", None)
        self._out({"type": "init", "session_id": log.id if log is not None else None,
                   "model": app.settings.model_id, "workspace": str(app.workspace),
                   "approval_mode": app.approvals.mode, "tools": [t["name"] for t in app.agent.tools],
                   "mcp_servers": [{"name": s.name, "status": s.state} for s in servers.report().servers]
                   if servers is not None else []})

    def result(self, app, result, exit_code: int) -> None:
        """The result record, on stdout (the last line in stream-json)."""
        tally, log = app.ledger.session, app.messages.log
        interrupted = bool(getattr(result, "interrupted", False))
        failed = exit_code != 0
        reason = ("interrupted" if interrupted else "bad_input" if exit_code == 2 else "error" if failed
                  else "completed")
        write_json({
            "type": "result", "subtype": "interrupted" if interrupted else "error" if failed else "success",
            "is_error": failed, "exit_code": exit_code, "exit_reason": reason,
            "result": getattr(result, "text", "") or "", "error": getattr(result, "error", "") or "",
            "session_id": log.id if log is not None else None, "model": app.settings.model_id,
            "stop_reason": self.stop_reason,
            "usage": {"input_tokens": tally.uncached, "cache_creation_input_tokens": tally.writes,
                      "cache_read_input_tokens": tally.reads, "output_tokens": tally.output},
            "cost_usd": None if tally.cost is None else round(tally.cost, 6),
            "model_calls": tally.calls, "compactions": self.compactions,
            "duration_s": round(time.monotonic() - self.started, 3)}, self.stream)

    def finish(self) -> None:
        pass
