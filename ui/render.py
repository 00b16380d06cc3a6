"""The interactive renderer: events → what a person sees in the REPL.

Every event is passed through `safe_data` first (ui/sanitize.py), so no string in it can reach the
terminal with a control character in it, whichever field it sits in. Then:

    RequestStarted   spinner "thinking… 3s · esc to interrupt"
    TextDelta        the answer as Markdown: closed blocks printed once, the open tail live
    ToolStarted      "● bash  ls -la", then the spinner and the command's live output tail
    ToolFinished     output head and tail, exit code, time, diff (ui/toolview.py, ui/diffview.py)
    Notice, Retrying, Compaction, TurnStatus, reports: one line (or a block), above the live area
    TaskProgress, TaskFinished, TaskList   sub-agents: live lines, a line each at the end, /tasks (tasks_view.py)
    ShowToolResult   /last: the whole latest tool result in a pager
    SessionChoices, SessionResumed   /resume: the sessions to pick from (sessions_view.py), then the one resumed
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

from rich.console import Console, Group
from rich.text import Text

from events import CleanReport, TimelineReport
from events import (ClearScreen, HooksReport, Compaction, ContextReport, CostReport, HelpReport, Interrupted, McpReport, MemoryReport, Notice,
                    RequestStarted, ResponseDone, Retrying, SessionChoices, SessionResumed, ShowToolResult, SummaryWait,
                    TextDelta, ToolFinished, ToolOutput, ToolStarted, TurnStatus)
from storage.safe import read_head
from events import TaskFinished, TaskList, TaskProgress
from .activity import Activity
from .markdown_stream import MarkdownStream
from .reports import context_report, cost_report, help_report, hooks_report, mcp_report, memory_report, status_line
from .timeline_view import show_report
from .tasks_view import finished_line, live_lines, task_list
from .sanitize import safe, safe_data
from .toolview import finished_lines, live_tail, parse_persisted, seconds, summarize_input, tool_header

NOTICE_STYLES = {"info": "dim", "warning": "yellow", "error": "bold red"}
COMPACTION_STYLE = "magenta"
OUTPUT_KEPT = 16384                  # chars of a running command's output kept for its live tail
PAGE_LIMIT = 8 * 1024 * 1024         # bytes of a saved output /last reads into the pager


def retry_line(event: Retrying) -> str:
    return f"[retrying in {seconds(event.delay)}: {event.reason} ({event.attempt}/{event.max_attempts})]"


def compaction_line(event: Compaction) -> str:
    return event.message if event.message.startswith("[") else f"[{event.layer}] {event.message}"


class Renderer:
    """Interactive output: one instance is the `emit` callable of the agent. `keys` (a KeyWatcher)
    is paused whenever the person must answer or read something in a pager."""

    def __init__(self, console: Console, keys=None, workspace: Path | None = None):
        self.console, self.keys, self.workspace = console, keys, workspace
        self.activity = Activity(console)
        self.answer = MarkdownStream(console, self.activity)
        self.output = ""
        self.diff_shown = False          # the approval question showed the running call's diff

    # ---- plumbing ----------------------------------------------------------------------
    def _settle(self) -> None:
        """Close the answer being streamed and take the live area down."""
        self.answer.finish()
        self.activity.stop()

    def _print(self, renderable, style: str | None = None) -> None:
        self.answer.finish()
        if isinstance(renderable, str):
            renderable = Text(renderable)
        self.console.print(renderable, style=style, highlight=False)    # wrapped at words

    @contextmanager
    def interactive(self):
        """For a question or a pager: nothing live on screen, and the keys go to whoever asks. The
        spinner that was showing comes back afterwards (a command approved with y runs on under it),
        counting from then; not after Ctrl-C, which ends the turn."""
        label = self.activity.label
        self._settle()
        if self.keys is None:
            yield
        else:
            with self.keys.paused():
                yield
        if label:
            self.activity.show(label)

    def finish(self) -> None:
        self._settle()

    # ---- events ------------------------------------------------------------------------
    def __call__(self, event) -> None:
        if isinstance(event, (SessionChoices, SessionResumed)):     # sessions_view.py makes each value safe
            self._sessions(event)
            return
        event = safe_data(event)
        if isinstance(event, RequestStarted):
            self._settle()
            self.activity.show("summarizing…" if event.purpose == "summary" else "thinking…")
        elif isinstance(event, TextDelta):
            if self.activity.label == "thinking…":
                self.activity.label = "answering…"
            self.answer.feed(event.text)
        elif isinstance(event, ResponseDone):
            self._settle()
        elif isinstance(event, ToolStarted):
            self._settle()
            self.console.print(tool_header(event.name, event.input), highlight=False, no_wrap=True,
                               overflow="ellipsis")
            self.output, self.diff_shown = "", False
            self.activity.show(f"running {event.name}…")
        elif isinstance(event, ToolOutput):
            self.output = (self.output + event.text)[-OUTPUT_KEPT:]
            self.activity.set_tail(live_tail(self.output, self.console.width))
        elif isinstance(event, ToolFinished):
            self._settle()
            for line in finished_lines(event, self.console.width, diff=not self.diff_shown):
                self.console.print(line, highlight=False, no_wrap=True, overflow="ellipsis")
        elif isinstance(event, Retrying):
            self._print(retry_line(event), "yellow")
        elif isinstance(event, Notice):
            self._print(event.text, NOTICE_STYLES.get(event.kind, "dim"))
        elif isinstance(event, Interrupted):
            self._settle()
            self._print("[interrupted]", "bold red")
        elif isinstance(event, Compaction):
            self._print(compaction_line(event), COMPACTION_STYLE)
        elif isinstance(event, SummaryWait):
            self._settle()
            self.activity.show("waiting for the summary being prepared…", since=event.since)
        elif isinstance(event, TurnStatus):
            self._print(status_line(event, self.console.width - 1), "dim")
        elif isinstance(event, ContextReport):
            self._print(context_report(event, self.console.width - 2))
        elif isinstance(event, CostReport):
            self._print(cost_report(event))
        elif isinstance(event, MemoryReport):
            self._print(memory_report(event))
        elif isinstance(event, McpReport):
            self._print(mcp_report(event))
        elif isinstance(event, HelpReport):
            self._print(help_report(event))
        elif isinstance(event, HooksReport):
            self._print(hooks_report(event))
        elif isinstance(event, ClearScreen):
            self._settle()
            self.console.clear()
        elif isinstance(event, ShowToolResult):
            self.page(event.finished)
        elif isinstance(event, TaskProgress):         # sub-agents: one live line each under the spinner
            self.activity.set_tail(Group(*live_lines(event.running, self.console.width)))
        elif isinstance(event, TaskFinished):
            self._print(finished_line(event))
        elif isinstance(event, TaskList):
            self._settle()
            for line in task_list(event.children, self.console.width):
                self.console.print(line, highlight=False, no_wrap=True, overflow="ellipsis")
        elif isinstance(event, (TimelineReport, CleanReport)):
            self._settle()
            show_report(self.console, event)

    def _sessions(self, event) -> None:
        from .sessions_view import session_lines, show_resumed
        self._settle()
        if isinstance(event, SessionResumed):
            show_resumed(self.console, event.loaded, event.messages)
            return
        for n, path in enumerate(event.paths, 1):
            for line in session_lines(n, path, self.console.width):
                self.console.print(line, no_wrap=True, overflow="ellipsis")

    def page(self, finished: ToolFinished | None) -> None:
        """/last: the whole result of the latest tool call (a saved output read from its file)."""
        if finished is None:
            self._print("no tool has run in this session yet", "yellow")
            return
        text = f"{finished.name}  {summarize_input(finished.name, finished.input)}\n\n{finished.content}"
        saved = parse_persisted(finished.content)
        if saved and self.workspace is not None:
            try:
                data = read_head(self.workspace / saved["path"], PAGE_LIMIT + 1)
                more = f"\n[… only the first {PAGE_LIMIT:,} bytes are shown; the file is {saved['path']}]" \
                    if len(data) > PAGE_LIMIT else ""
                text = f"{finished.name}: {saved['path']}\n\n" + data[:PAGE_LIMIT].decode("utf-8", "replace") + more
            except OSError as exc:
                text += f"\n[cannot read {saved['path']}: {exc.strerror}]"
        with self.interactive():
            with self.console.pager(styles=False):
                self.console.print(Text(safe(text)), highlight=False, markup=False)
