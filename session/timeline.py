"""A session as a timeline: one row per model request, the compaction events between them, and the
sub-agents (the task tool) started from it.

    read_timeline(path, limit=140_000) -> Timeline      rows (Request), events (Event), children
                                                        (Child: a lane beside the main line), notices
    event_detail(timeline, workspace, n) -> Detail      what event n removed: the transcript's header
                                                        and messages, or the summary that replaced them

Read from the session log (session/log.py lists its records) the way a crashed session left it: a torn
last line is dropped, an unreadable or unknown record is skipped (other lanes add record types), and
nothing here trusts what it reads — the UI sanitizes every value before showing it (ui/timeline_view.py,
ui/timeline_html.py). Older logs have no compaction records: their events are recognised from the
markers compaction wrote into the history ([snipped …], [compacted] …), with the file they name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import json_text
from compaction.markers import COMPACTED_PREFIX, SNIP_PREFIX, SUMMARY_PREFIX
from llm.usage import Usage, clean_usage
from session.costs import TokenTally, price_of
from storage import LOG_LIMIT, read_transcript, safe

DEFAULT_LIMIT = 140_000
SUMMARY_KINDS = ("summary", "manual", "reactive", "cold")
_SNIP_PATH = re.compile(re.escape(SNIP_PREFIX) + r"(\d+) messages → (\S+?)\]")
_SUMMARY_PATH = re.compile(r"all of it is in (\S+?) \(")
MAX_LINE = 64 * 1024 * 1024          # a line longer than this is not read (a damaged or planted log)


@dataclass
class Request:
    n: int                   # 1-based, in the order the calls were made
    purpose: str             # "answer" or "summary"
    model: str
    context: int             # the prompt's tokens: uncached + cache reads + cache writes
    uncached: int
    reads: int
    writes: int
    output: int
    cost: float | None       # None: the model's price is unknown
    total: float | None      # the session's cost up to and with this call

    @property
    def hit(self) -> float | None:
        return self.reads / self.context if self.context else None


@dataclass
class Event:
    n: int                   # 1-based, in the order they happened
    after: int               # the number of requests made before it (it sits between rows after and after+1)
    layer: str               # snip_compact, tool_result_budget, micro_compact, compacted, reactive_compact, …
    kind: str = ""           # a transcript's kind: snip, summary, manual, reactive, cold
    trigger: str = ""
    before: int | None = None
    after_tokens: int | None = None
    path: str = ""           # the file that holds what was removed
    paths: list = field(default_factory=list)
    text: str = ""
    summary: str = ""        # the summary that replaced the history (summary kinds)
    messages: list | None = None      # [first, end) of the history it covers


@dataclass
class Child:
    """A sub-agent, from its "task" start and report records (delegation/tasks.py)."""
    n: int                   # its task number in the session
    after: int               # the requests made before it started: it ran from request `after`'s tool call
    agent: str = ""
    description: str = ""
    transcript: str = ""
    status: str = "interrupted"      # no report: the session stopped while it ran
    requests: int | None = None
    peak: int | None = None
    compactions: int | None = None
    cost: float | None = None
    seconds: float | None = None
    reported: bool = False


@dataclass
class Timeline:
    id: str
    path: Path
    header: dict = field(default_factory=dict)
    limit: int = DEFAULT_LIMIT
    requests: list[Request] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    children: list[Child] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)

    @property
    def model(self) -> str:
        return _text(self.header.get("model"))

    @property
    def cost(self) -> float | None:
        return self.requests[-1].total if self.requests else 0.0

    def items(self) -> list:
        """Requests, events and children in the order they happened."""
        out: list = []
        beside: list[Event | Child] = [*self.events, *self.children]
        events = iter(sorted(beside, key=lambda e: e.after))
        pending = next(events, None)
        for r in self.requests:
            while pending is not None and pending.after < r.n:
                out.append(pending)
                pending = next(events, None)
            out.append(r)
        while pending is not None:
            out.append(pending)
            pending = next(events, None)
        return out


def _text(value, most: int = 400) -> str:
    return value[:most] if isinstance(value, str) else ""


def _int(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _lines(path: Path, notices: list[str]) -> list[str]:
    raw = safe.read_bytes(path, LOG_LIMIT).decode("utf-8", errors="replace")
    lines = raw.split("\n")
    if lines and lines[-1].strip():
        notices.append("the last line of the log was cut off (the session stopped mid-write); it is left out")
    return [line for line in lines[:-1] if line.strip() and len(line) <= MAX_LINE]


def read_timeline(path: Path, limit: int = DEFAULT_LIMIT) -> Timeline:
    """The timeline of one session log (see the module docstring)."""
    timeline = Timeline(path.stem, path, limit=limit)
    notices = timeline.notices
    running = TokenTally()
    markers: set[str] = set()
    recorded = False
    waiting: Event | None = None          # a summary event whose summary text comes with the next replace
    skipped = 0
    for line in _lines(path, notices):
        try:
            record = json_text.loads(line)
        except (ValueError, RecursionError):
            skipped += 1
            continue
        if not isinstance(record, dict):
            skipped += 1
            continue
        kind = record.get("t")
        if kind == "session":
            timeline.header = record
            timeline.limit = _int(record.get("limit")) or timeline.limit
        elif kind == "usage" and isinstance(record.get("u"), dict):
            model = _text(record.get("model")) or timeline.model
            u = Usage.of(clean_usage(record["u"]))
            one = TokenTally()
            one.add(u, price=price_of(model), model=model)
            running.add(u, price=price_of(model), model=model)
            timeline.requests.append(Request(len(timeline.requests) + 1, "summary" if record.get("p") == "summary"
                                             else "answer", model, u.input + u.cache_read + u.cache_write, u.input,
                                             u.cache_read, u.cache_write, u.output, one.cost, running.cost))
        elif kind == "compaction":
            recorded = True
            event = _recorded_event(record, len(timeline.events) + 1, len(timeline.requests))
            timeline.limit = _int(record.get("limit")) or timeline.limit
            saved = timeline.events[-1] if timeline.events else None
            if saved is not None and saved.layer == "transcript" and event.path and saved.path == event.path:
                event.n, event.after = saved.n, saved.after       # the summary it was saved for succeeded
                timeline.events.pop()
            elif event.layer == "transcript":
                event.text = "the history was saved; the summary failed, so it was kept"
            timeline.events.append(event)
            if event.kind in SUMMARY_KINDS:
                waiting = event
        elif kind == "output":
            path_ = _text(record.get("path"))
            if path_ and not any(path_ in e.paths for e in timeline.events):
                size = _int(record.get("size"))
                command = _text(record.get("command"), 200)
                timeline.events.append(Event(len(timeline.events) + 1, len(timeline.requests), "saved_output",
                                             kind=_text(record.get("tool"), 40), trigger=command, path=path_,
                                             paths=[path_], text=f"{size:,} bytes" if size is not None else ""))
        elif kind == "replace" and isinstance(record.get("tail"), list):
            for message in record["tail"]:
                found = _marker_event(message, markers, len(timeline.events) + 1, len(timeline.requests))
                if found is None:
                    continue
                if waiting is not None and found.kind == "summary":
                    waiting.summary, waiting = found.summary, None
                elif not recorded:
                    timeline.events.append(found)
        elif kind == "task":
            _task(record, timeline)
        elif kind == "window" and _int(record.get("tokens")):
            pass                      # the limit a learned window implies comes with the next compaction record
    if skipped:
        notices.append(f"{skipped} unreadable line(s) of the log were skipped")
    return timeline


MAX_CHILDREN = 1000          # lanes read from one log (a planted log could hold millions)


def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 else None


def _task(r: dict, timeline: Timeline) -> None:
    n = _int(r.get("n"))
    if n is None:
        return
    if r.get("e") == "start" and len(timeline.children) < MAX_CHILDREN:
        timeline.children.append(Child(n, len(timeline.requests), _text(r.get("agent"), 40),
                                       _text(r.get("description"), 200), _text(r.get("transcript"), 1000)))
    elif r.get("e") == "report":
        child = next((c for c in reversed(timeline.children) if c.n == n and not c.reported), None)
        if child is None:
            return
        child.reported, child.status = True, _text(r.get("status"), 20) or "?"
        usage = r["usage"] if isinstance(r.get("usage"), dict) else {}
        child.requests = _int(r.get("requests")) if "requests" in r else _int(usage.get("calls"))
        child.peak, child.compactions = _int(r.get("peak")), _int(r.get("compactions"))
        child.cost, child.seconds = _number(r.get("cost")), _number(r.get("seconds"))


def _recorded_event(r: dict, n: int, after: int) -> Event:
    messages = r.get("messages")
    return Event(n, after, _text(r.get("layer"), 40) or "compaction", kind=_text(r.get("kind"), 20),
                 trigger=_text(r.get("trigger")), before=_int(r.get("before")), after_tokens=_int(r.get("after")),
                 path=_text(r.get("path"), 1000), text=_text(r.get("text")),
                 paths=[p for p in r.get("paths", []) if isinstance(p, str)][:100] if isinstance(r.get("paths"), list) else [],
                 messages=messages if isinstance(messages, list) and all(_int(x) is not None for x in messages) else None)


def _first_texts(message) -> list[str]:
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [b["text"] for b in content[:3] if isinstance(b, dict) and isinstance(b.get("text"), str)]
    return []


def _marker_event(message, seen: set[str], n: int, after: int) -> Event | None:
    """A compaction an older log shows only by the marker it left in the history (new markers only)."""
    texts = _first_texts(message)
    if not texts or texts[0] in seen:
        return None
    first = texts[0]
    if first.startswith(SNIP_PREFIX):
        seen.add(first)
        m = _SNIP_PATH.match(first)
        return Event(n, after, "snip_compact", kind="snip", path=m.group(2) if m else "",
                     text=f"snipped {m.group(1)} messages" if m else first[:200])
    if first.startswith(COMPACTED_PREFIX):
        seen.add(first)
        m = _SUMMARY_PATH.search(first)
        summary = next((t[len(SUMMARY_PREFIX):] for t in texts[1:] if t.startswith(SUMMARY_PREFIX)), "")
        return Event(n, after, "compacted", kind="summary", path=m.group(1) if m else "", summary=summary,
                     text="the history was summarized")
    return None


@dataclass
class Detail:
    event: Event
    header: dict | None = None
    messages: list = field(default_factory=list)
    text: str = ""               # a saved output's beginning
    problem: str = ""            # why the file could not be read


DETAIL_TEXT_CHARS = 20_000


def event_detail(timeline: Timeline, workspace: Path, n: int) -> Detail:
    """Event n and what it points at. The path comes from a log, so it is only followed inside the
    workspace's own folders (.transcripts/, .task_outputs/)."""
    event = timeline.events[n - 1]
    detail = Detail(event)
    shown = event.path or (event.paths[0] if event.paths else "")
    if not shown:
        return detail
    target = _inside(workspace, shown)
    if target is None:
        detail.problem = f"{shown} is not in this workspace's .transcripts/ or .task_outputs/"
        return detail
    try:
        if target.suffix == ".jsonl":
            detail.header, detail.messages = read_transcript(target)
        else:
            detail.text = safe.read_head(target, DETAIL_TEXT_CHARS * 4).decode("utf-8", "replace")[:DETAIL_TEXT_CHARS]
    except OSError as exc:
        detail.problem = f"cannot read {shown}: {exc.strerror or exc}"
    return detail


def _inside(workspace: Path, shown: str) -> Path | None:
    """The file a log names, if it is in .transcripts/ or .task_outputs/ as written (no `..`; it is then
    opened without following any link: storage/safe.py)."""
    for base in (Path(workspace), Path(workspace).resolve()):
        try:
            target = safe.own_path(shown, base)
        except OSError:
            continue
        if target.relative_to(base).parts[0] in (".transcripts", ".task_outputs"):
            return target
    return None
