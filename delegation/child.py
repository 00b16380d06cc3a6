"""One sub-agent: a child agent loop with a context of its own, run in a thread of its own.

    Child(number, definition, description, prompt, parent, …).start()
      ├─ a fresh history: the parent's system prompt and AGENTS.md, the definition's prompt, the task
      ├─ loop/agent_loop.run_turn — the same loop as the main conversation, with its own Compactor
      │  (its own pipeline, budget and window) and its own work ledger
      ├─ the parent's tools without `task`, narrowed by the definition; the parent's approvals (the same
      │  grants and mode: never more), held to reading for a read-only definition or in plan mode;
      │  the parent's sandbox; its questions go to the parent's thread (delegation/tasks.py), one at a time
      └─ its transcript: .transcripts/<session>-NNN-task.jsonl, rewritten before every model call

Stopping it (Esc, TASK_MAX_STEPS): `stop(why)` kills every process its commands started and makes its
next event raise KeyboardInterrupt inside its own thread, where run_turn closes its history as it
does for Ctrl-C. What it read and wrote is collected from its ToolFinished events.
"""

from __future__ import annotations

import dataclasses
import queue
import threading
import time
from pathlib import Path

from approvals.policy import Refusal
from compaction import Continuity
from compaction.ledger import FILE_ACTIONS, _relative
from events import (Compaction, Notice, RequestStarted, ResponseDone, TextDelta, ToolFinished, ToolOutput,
                    ToolStarted)
from loop.agent_loop import Agent, run_turn
from session.costs import TokenTally
from storage import relative, reserve_transcript, transcript_header, write_transcript
from tools.background import Jobs

from .definitions import Definition

SUBAGENT_SECTION = """

# You are a sub-agent
Another agent handed you one task (the user message). You work in a context of your own: the agent that
delegated sees none of your tool calls, only your final answer, which is your report. Do the task
completely with the tools you have, then answer with a concise, self-contained report (findings with
file paths and line numbers, what you changed, what failed). You cannot ask the other agent anything."""
READ_ONLY_REFUSAL = ("Not run: this sub-agent may only read — read_file and commands that only read (ls, cat, "
                     "grep, find, git log/diff) run. Do not retry it; report what should change instead.")
STOPPING_EVENTS = (RequestStarted, TextDelta, ToolStarted, ToolOutput)   # where a stopped child stops
STEP_CHARS = 80
_DECIDING = threading.Lock()           # one approval decision at a time: the parser and the questions are shared


class ChildApprovals:
    """The parent's approvals as a child sees them: every decision is the parent's (its mode, its
    grants — an "always" a child is given is the session's), and a read-only child is refused anything
    plan mode would refuse, whatever the mode."""

    def __init__(self, parent, read_only: bool):
        self.parent, self.read_only = parent, read_only

    def decide(self, name: str, args, change, ask, where: str = ""):
        with _DECIDING:
            if self.read_only and self.parent.plan_refuses(name, args):
                return Refusal(READ_ONLY_REFUSAL, "", "not run: this sub-agent only reads"), ""
            return self.parent.decide(name, args, change, ask, where)

    def __getattr__(self, name):
        return getattr(self.parent, name)


@dataclasses.dataclass
class Question:
    """A child's approval question, answered by the parent's thread."""
    request: object
    answered: threading.Event = dataclasses.field(default_factory=threading.Event)
    answer: object = None


def step_of(event: ToolStarted) -> str:
    args = event.input if isinstance(event.input, dict) else {}
    what = args.get("command") or args.get("path") or ""
    return " ".join(f"{event.name} {what}".split())[:STEP_CHARS]


class Child:
    def __init__(self, number: int, definition: Definition, description: str, prompt: str, parent: Agent,
                 tools: list[dict], settings, questions: queue.Queue, changed: threading.Event, price):
        self.number, self.definition, self.description, self.prompt = number, definition, description, prompt
        self.parent, self.questions, self.changed, self.price = parent, questions, changed, price
        self.workspace: Path = parent.workspace
        self.status = "running"          # running, done, failed, interrupted, stopped
        self.step, self.steps, self.calls = "starting", [], 0
        self.read: list[str] = []
        self.written: list[str] = []
        self.tally = TokenTally()
        self.peak = 0                    # the largest prompt it sent (tokens, from the usage)
        self.compactions = 0             # its own compaction events
        self.text, self.error, self.stopped_why = "", "", ""
        self.started, self.ended = time.monotonic(), 0.0
        self.stopping = threading.Event()
        self.done = threading.Event()
        self.jobs = Jobs()               # its commands' processes, ended with it
        self.transcript = reserve_transcript(self.workspace, "task")
        self.messages: list[dict] = []
        self.agent = Agent(settings, self.workspace, parent.provider, self.on_event, tools=tools,
                           base_system=parent.base_system + SUBAGENT_SECTION
                           + (f"\n\n# Your instructions ({definition.name})\n{definition.prompt}"
                              if definition.prompt else ""),
                           continuity=Continuity(workspace=self.workspace),
                           approvals=ChildApprovals(parent.approvals, definition.read_only),  # type: ignore[arg-type]
                           ask=self.ask if parent.ask is not None else None, secrets=parent.secrets, plain_form=parent.plain_form)
        ctx, own = self.agent.tool_ctx, parent.tool_ctx
        ctx.sandbox, ctx.settings_files, ctx.jobs = own.sandbox, own.settings_files, self.jobs
        self.agent.compactor.prepare_between_turns = False
        self.thread = threading.Thread(target=self._run, name=f"s08-task-{number}", daemon=True)

    @property
    def label(self) -> str:
        return f"task {self.number} ({self.definition.name}: {self.description})"

    @property
    def seconds(self) -> float:
        return (self.ended or time.monotonic()) - self.started

    @property
    def shown_transcript(self) -> str:
        return relative(self.workspace, self.transcript)

    def start(self) -> "Child":
        self.thread.start()
        return self

    # ---- in the child's thread ----------------------------------------------------------------
    def _run(self) -> None:
        try:
            result = run_turn(self.messages, self.prompt, self.agent)
            self.text = result.text
            if self.stopped_why:
                self.status = "stopped" if self.stopped_why != "interrupted" else "interrupted"
            elif result.interrupted:
                self.status = "interrupted"
            elif not result.ok:
                self.status, self.error = "failed", result.error
            else:
                self.status = "done"
        except BaseException as exc:  # noqa: BLE001 — a bug in a child must not end the session
            self.status, self.error = "failed", f"{type(exc).__name__}: {exc}"
        finally:
            self.jobs.end_all()
            self._save()
            self.agent.compactor.background.close()
            self.ended = time.monotonic()
            self.done.set()
            self.changed.set()

    def _save(self) -> None:
        header = transcript_header(self.workspace, "task", trigger=f"{self.definition.name}: {self.description}",
                                   end=len(self.messages), of=len(self.messages))
        try:
            write_transcript(self.workspace, list(self.messages), header, self.transcript)
        except OSError:
            pass

    def on_event(self, event) -> None:
        if isinstance(event, STOPPING_EVENTS) and self.stopping.is_set():
            raise KeyboardInterrupt
        if isinstance(event, RequestStarted) and event.purpose == "answer":
            self.calls += 1
            limit = getattr(self.agent.settings, "task_max_steps", 60)
            if self.calls > limit:
                self.stopped_why = f"stopped after TASK_MAX_STEPS={limit} model calls"
                self.stopping.set()
                raise KeyboardInterrupt
            self._save()
        elif isinstance(event, ResponseDone) and event.usage:
            self.tally.add(event.usage, event.purpose == "summary", self.price, self.agent.settings.model_id)
            u = event.usage
            self.peak = max(self.peak, sum(int(u.get(k) or 0) for k in ("input_tokens", "cache_read_input_tokens",
                                                                         "cache_creation_input_tokens")))
        elif isinstance(event, ToolStarted):
            self._note(step_of(event))
        elif isinstance(event, ToolFinished):
            self._files(event)
        elif isinstance(event, Compaction):
            self.compactions += 1
            self._note(f"[{event.layer.label}] {event.message}"[:STEP_CHARS])
        elif isinstance(event, Notice) and event.kind != "info":
            self._note(event.text[:STEP_CHARS])

    def _note(self, step: str) -> None:
        self.step = step
        self.steps.append((time.monotonic() - self.started, step))
        self.changed.set()

    def _files(self, event: ToolFinished) -> None:
        action = FILE_ACTIONS.get(event.name)
        path = event.input.get("path") if isinstance(event.input, dict) else None
        if action is None or event.is_error or not isinstance(path, str):
            return
        shown = _relative(self.workspace, path)
        into = self.read if action == "read" else self.written
        if shown not in into:
            into.append(shown)

    def ask(self, request):
        """A question for the person: asked by the parent's thread, one at a time; says who asks."""
        request.asker = self.label
        question = Question(request)
        self.questions.put(question)
        self.changed.set()
        while not question.answered.wait(0.1):
            if self.stopping.is_set():
                raise KeyboardInterrupt
        return question.answer

    # ---- from the parent's thread --------------------------------------------------------------
    def stop(self, why: str) -> None:
        if self.done.is_set():
            return
        self.stopped_why = self.stopped_why or why
        self.stopping.set()
        self.jobs.end_all()            # a running command ends now, and nothing it started survives
