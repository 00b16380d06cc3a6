"""The small event objects the loop, the model boundary and the compaction layers emit.

Nothing outside ui/ prints. Producers call `emit(event)`; the UI decides
how each one looks (`[auto_compact triggered]`, a spinner, a dim status line).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable

@dataclass
class RequestStarted:
    purpose: str = "answer"          # "answer" or "summary"


@dataclass
class TextDelta:
    text: str


@dataclass
class ResponseDone:
    stop_reason: str | None
    usage: dict = field(default_factory=dict)
    purpose: str = "answer"          # "answer" or "summary"


@dataclass
class Retrying:
    delay: float
    reason: str
    attempt: int
    max_attempts: int


@dataclass
class ToolStarted:
    tool_use_id: str
    name: str
    input: Any


@dataclass
class ToolOutput:
    """A piece of a running command's output, as it arrives (for the live tail)."""
    tool_use_id: str
    text: str


@dataclass
class ToolFinished:
    tool_use_id: str
    name: str
    content: str
    is_error: bool
    seconds: float
    meta: dict = field(default_factory=dict)    # exit_code, timed_out, interrupted, change (a FileChange)…
    input: Any = None


@dataclass
class ShowToolResult:
    """/last: the whole result of the latest tool call, for paging."""
    finished: ToolFinished | None


@dataclass
class Notice:
    """A one-line remark: `kind` is "info", "warning" or "error"."""
    text: str
    kind: str = "info"


@dataclass
class Interrupted:
    where: str = "turn"


class CompactionKind(str, Enum):
    """What a Compaction event reports: a str (== its value), printed as its value; `.label` is the
    name notices show. (enum.StrEnum would do, but s08 still runs on Python 3.10.)"""
    TOOL_RESULT_BUDGET = "tool_result_budget"
    SNIP_COMPACT = "snip_compact"
    MICRO_COMPACT = "micro_compact"
    AUTO_COMPACT = "auto_compact"
    MANUAL_COMPACT = "manual_compact"
    REACTIVE_COMPACT = "reactive_compact"
    COMPACTED = "compacted"              # a summary replaced the history (auto or manual)
    TRANSCRIPT = "transcript"            # the history was saved before a summary
    FALLBACK = "fallback"                # the summary failed: cut without the model

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    @property
    def label(self) -> str:
        """How the screen names it: `[manual compact]`, `[auto_compact triggered]`."""
        return "manual compact" if self is CompactionKind.MANUAL_COMPACT else self.value


@dataclass
class Compaction:
    """Something compaction did; `layer` names it: a CompactionKind (above), a str enum
    whose value is what the screen shows (e.g. "snip_compact"; `.label` gives "manual compact")."""
    layer: CompactionKind
    message: str
    details: dict = field(default_factory=dict)


@dataclass
class SummaryWait:
    """A compaction is due and the summary prepared in the background is not ready yet: the loop waits
    for it (the UI shows the seconds since it was started, `since`: time.monotonic())."""
    since: float


@dataclass
class TaskStarted:
    """A sub-agent started (delegation/): its number in the session, agent, description; `since`: monotonic."""
    number: int
    agent: str
    description: str
    since: float


@dataclass
class TaskProgress:
    """The running sub-agents: (number, agent, description, current step, since) each — one live line each."""
    running: list


@dataclass
class TaskFinished:
    """A sub-agent ended: status done, failed, interrupted or stopped; what it cost; where its transcript is."""
    number: int
    agent: str
    description: str
    status: str
    tokens: int
    cost: float | None
    seconds: float
    transcript: str
    calls: int = 0
    tally: Any = None                   # its calls (session.costs.TokenTally): /cost counts them apart
    peak: int = 0                       # the largest prompt it sent, in tokens


@dataclass
class TaskList:
    """/tasks: the session's sub-agents (delegation.child.Child objects, read-only for the screen)."""
    children: list


@dataclass
class TurnStatus:
    """After a turn: the prompt's size now, the turn's cache hit rate, the session's cost so far."""
    context: int
    limit: int
    hit_rate: float | None
    cost: float | None
    caching: bool = True
    demo: bool = False               # the built-in demo model answered, not a real one
    mode: str = ""                   # the approval mode, when it is worth showing
    preparing: str = ""              # a summary being prepared in the background ("preparing summary… 12s")


@dataclass
class ContextReport:
    """/context: the prompt by part (tokens), against CONTEXT_LIMIT and the model's window."""
    parts: dict
    total: int
    limit: int
    window: int
    window_source: str = "CONTEXT_WINDOW"     # or where else it came from (compaction/window.py)
    sandbox: str = ""                         # the bash tool's sandbox in one line (tools.sandbox.Sandbox.status)
    usage_doubt: str = ""                     # why the endpoint's usage is not trusted (compaction/endpoint_window.py)
    summary: str = ""                         # the summary prepared in the background, if any
    mcp: dict = field(default_factory=dict)   # MCP schema tokens per server, as sent now (servers/manager.py)
    mcp_note: str = ""                        # MCP schemas deferred or not, against MCP_SCHEMA_BUDGET
    tasks: str = ""                           # the sub-agents' contexts, kept out of this one (delegation/)
    window_shrunk: bool = False               # the window is below CONTEXT_WINDOW: the limit is 75% of it


@dataclass
class McpReport:
    """/mcp: the MCP servers (servers.manager.Report): each one's state, tools and schema tokens, the budget."""
    report: Any


@dataclass
class MemoryReport:
    """/memory: what s08 keeps through every compaction — the project instructions (an Instructions),
    the person's messages and their budget, the work ledger (a WorkLedger), its rendering and budget."""
    instructions: Any
    typed: list
    typed_budget: int
    ledger: Any
    ledger_text: str
    ledger_budget: int


@dataclass
class CostReport:
    """/cost: the session's token totals and its price (None when the model's price is unknown)."""
    model: str
    price: tuple | None
    tally: Any
    run: Any = None                  # the whole run's tally, when it differs from the session's
    children: Any = None             # what of it the sub-agents spent (a TokenTally), when any ran


@dataclass
class HelpReport:
    """/help: the slash commands, as (name, help text) pairs in the order they were registered."""
    entries: list


@dataclass
class HooksReport:
    """/hooks: (state, event [matcher]: command, file) per hook, the settings files' problems, and the files
    whose hooks changed since the session read them (used from the next session)."""
    rows: list
    problems: list
    changed: list


@dataclass
class TimelineReport:
    """/timeline: the session's timeline (a timeline.Timeline); with `detail`, one event's (a timeline.Detail)."""
    timeline: Any
    detail: Any = None


@dataclass
class CleanReport:
    """/clean: what s08's folders take and what is old (a session.clean.Plan); `removed`: (files, bytes) once
    removed."""
    plan: Any
    removed: Any = None


@dataclass
class ClearScreen:
    """/clear: a new conversation starts on a clean screen."""


@dataclass
class SessionChoices:
    """/resume: the sessions to choose from (paths of their logs, newest first)."""
    paths: list


@dataclass
class SessionResumed:
    """/resume: the App now holds this session (a LoadedSession) and its history."""
    loaded: Any
    messages: list


@dataclass
class Question:
    """Something only the person can decide (a changed endpoint, a key to store). Not emitted: the
    UI's `ask(question)` shows `text`, reads one line after `prompt` and returns it (None: no answer)."""
    text: str
    prompt: str = "[y/N] "
    secret: bool = False      # hidden input (a key)


Emit = Callable[[Any], None]
Ask = Callable[[Question], "str | None"]


def ignore(_event: Any) -> None:
    """An emitter that drops everything (for calls whose progress nobody watches)."""


class Bus:
    """Where a session's events go: `emit(event)` hands each one to every subscriber, in the order they
    subscribed (the App subscribes the cost ledger and the usage log first, the UI last)."""

    def __init__(self) -> None:
        self.subscribers: list[Emit] = []

    def subscribe(self, fn: Emit) -> Emit:
        self.subscribers.append(fn)
        return fn

    def unsubscribe(self, fn: Emit) -> None:
        if fn in self.subscribers:
            self.subscribers.remove(fn)

    def emit(self, event: Any) -> None:
        for fn in list(self.subscribers):
            fn(event)
