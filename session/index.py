"""What the session log records besides the history: each compaction and each saved output, so the
inspector (timeline.py) can say what happened at which request and where it went.

    {"t": "compaction", "layer": "snip_compact", "kind": "snip", "trigger": "63 messages > 50",
     "before": 41200, "after": 12800, "path": ".transcripts/<session>-003-snip.jsonl",
     "messages": [3, 44], "of": 63, "request": 12, "limit": 140000, "text": "snipped 41 messages → …"}
    {"t": "output", "path": ".task_outputs/<session>-004-bash.txt", "tool": "bash", "command": "…",
     "exit_code": 0, "size": 1843921, "request": 12}

A summary writes two: "transcript" when the history is saved (before the summary call), then
"compacted" / "reactive_compact" with the sizes after — or nothing more when the summary failed.
`request` is how many model calls the session had made when it happened (it sits between the
usage record of that call and the next). IndexRecorder is a Bus subscriber, like session.log.UsageRecorder:
the compaction layers and the bash tool only emit events; this turns them into records.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from events import Compaction, ToolFinished
from storage import relative

TOOLS_REMEMBERED = 256          # recent tool calls kept, to name the command of an output saved later
TEXT_CHARS = 400
COMMAND_CHARS = 2000
RECORDED_WITHOUT_DETAILS = ("micro_compact", "fallback")


class IndexRecorder:
    """Writes compaction and output records into the session log (`note(record)`)."""

    def __init__(self, workspace: Path, history: Callable[[], Any], limit: Callable[[], int]):
        self.workspace, self.history, self.limit = workspace, history, limit
        self.tools: dict[str, ToolFinished] = {}

    def _note(self, record: dict) -> None:
        history = self.history()
        record["request"] = len(history.usages)
        history.note(record)

    def __call__(self, event) -> None:
        if isinstance(event, ToolFinished):
            self.tools[event.tool_use_id] = event
            while len(self.tools) > TOOLS_REMEMBERED:
                del self.tools[next(iter(self.tools))]
            saved = event.meta.get("saved") if isinstance(event.meta, dict) else None
            if saved:
                self._note(self._output(saved, event.tool_use_id, event.name, event.meta.get("bytes")))
        elif isinstance(event, Compaction):
            self._compaction(event)

    def _output(self, path: str, tool_use_id: str, tool: str, size) -> dict:
        finished = self.tools.get(tool_use_id)
        record: dict = {"t": "output", "path": path, "tool": tool, "size": size}
        if finished is not None:
            given = finished.input if isinstance(finished.input, dict) else {}
            command = given.get("command", given.get("path", ""))
            record["command"] = str(command)[:COMMAND_CHARS]
            record["exit_code"] = finished.meta.get("exit_code") if isinstance(finished.meta, dict) else None
        return record

    def _compaction(self, event: Compaction) -> None:
        layer, details = str(event.layer), event.details or {}
        if not details and layer not in RECORDED_WITHOUT_DETAILS:
            return                       # a "… triggered" notice: the record comes with the result
        record: dict = {"t": "compaction", "layer": layer, "text": event.message[:TEXT_CHARS], "limit": self.limit()}
        header = details.get("header")
        if isinstance(header, dict):
            record.update(kind=header.get("kind"), trigger=header.get("trigger"), before=header.get("tokens_before"),
                          after=header.get("tokens_after"), messages=header.get("messages"), of=header.get("of"))
        if "before" in details:
            record.update(before=details.get("before"), after=details.get("after"))
        if "tokens" in details:
            record["saved"] = details["tokens"]
        path = details.get("transcript") or details.get("path")
        if path:
            record["path"] = relative(self.workspace, str(path))
        outputs = details.get("outputs")
        if isinstance(outputs, list):
            record["paths"] = [o.get("path") for o in outputs if isinstance(o, dict)]
        self._note(record)
        for o in outputs or []:
            if isinstance(o, dict):
                self._note(self._output(o.get("path", ""), o.get("tool_use_id", ""), o.get("tool", ""), o.get("size")))
