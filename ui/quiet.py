"""Output for -p and piped input: the answer on stdout (by the caller), progress and errors on stderr,
one line each, every one made safe first."""

from __future__ import annotations

import sys

from events import (Compaction, ContextReport, CostReport, HelpReport, Interrupted, McpReport, MemoryReport, Notice,
                    Retrying,
                    ShowToolResult, ToolFinished, ToolStarted, TurnStatus)
from events import CleanReport, HooksReport, TaskFinished, TimelineReport
from .render import compaction_line, retry_line
from .reports import context_report, cost_report, help_report, hooks_report, mcp_report, memory_report, status_line
from .sanitize import safe, safe_data, safe_line
from .tasks_view import finished_line as tasks_finished_line
from .toolview import bash_status, seconds, summarize_input, summarize_output


def say_err(text: str) -> None:
    print(safe(text), file=sys.stderr, flush=True)


def say_out(text: str) -> None:
    """The answer on stdout: exactly as written for a file or a pipe, made safe for a terminal."""
    print(safe(text) if sys.stdout.isatty() else text, flush=True)


def finished_line(event: ToolFinished) -> str:
    if event.name == "bash" and ("exit_code" in event.meta or event.meta.get("interrupted")):
        status = bash_status(event.meta)[0]
    else:
        status = summarize_output(event.content)
    return f"  ⎿ {safe_line(status, 160)} · {seconds(event.seconds)}"


class QuietRenderer:
    def __init__(self, stream=None):
        self.stream = stream

    def __call__(self, event) -> None:
        event = safe_data(event)
        line = None
        if isinstance(event, ToolStarted):
            line = f"● {safe_line(event.name)} {safe_line(summarize_input(event.name, event.input))}"
        elif isinstance(event, ToolFinished) and not event.meta.get("declined"):   # its notice said it all
            line = finished_line(event)
        elif isinstance(event, Retrying):
            line = retry_line(event)
        elif isinstance(event, Notice):
            line = event.text
        elif isinstance(event, Interrupted):
            line = "[interrupted]"
        elif isinstance(event, Compaction):
            line = compaction_line(event)
        elif isinstance(event, TaskFinished):            # a sub-agent ended: one line (ui/tasks_view.py)
            line = tasks_finished_line(event).plain
        elif isinstance(event, TurnStatus):
            line = status_line(event)
        elif isinstance(event, (ContextReport, CostReport, MemoryReport, HelpReport, HooksReport, McpReport)):
            line = {ContextReport: context_report, CostReport: cost_report, MemoryReport: memory_report,
                    HelpReport: help_report, HooksReport: hooks_report, McpReport: mcp_report}[type(event)](event).plain
        elif isinstance(event, ShowToolResult):
            line = event.finished.content if event.finished else "no tool has run in this session yet"
        elif isinstance(event, (TimelineReport, CleanReport)):
            from rich.console import Console
            from .timeline_view import show_report
            show_report(Console(file=self.stream or sys.stderr, highlight=False, width=120), event)
        if line:
            print(line, file=self.stream or sys.stderr, flush=True)

    def finish(self) -> None:
        pass
