"""The task tool's side of the parent: which sub-agents run, waiting for them, and what they send back.

    Delegator(agent, note, environ)   attached to the parent agent (`agent.tool_ctx.extra["delegator"]`)
      .run(args) -> ToolResult        one `task` call: starts it — and the `task` calls that follow it in
                                      the same reply, so they run at the same time — and waits for its report
      .children                       every sub-agent of the session (/tasks)

While it waits, the parent's thread does what only it may: it asks the person the children's
questions (one at a time, in the order they came), and it emits TaskProgress events for the screen.
Ctrl-C or Esc there stops every running child (their processes killed, their histories closed) and
goes on as an interrupted tool call. The session log gets `{"t": "task", ...}` records: its start,
and its report with the tokens, cost, seconds, requests, peak prompt and compactions (the inspector's
lanes: session/timeline.py); the parent's work ledger the files a child read
and wrote, so a later summary of the main conversation still knows them.
"""

from __future__ import annotations

import dataclasses
import queue
import threading
import time
from typing import Callable, Mapping

from events import Notice, TaskFinished, TaskProgress, TaskStarted
from tools import ToolResult

from . import definitions as defs
from .child import Child, Question
from .report import report, trailer

TASK = "task"
STOP_WAIT = 10.0           # seconds a stopped child gets to close its history before it is left behind
TICK = 0.25                # the live lines' refresh while children run


class Delegator:
    def __init__(self, agent, note: Callable[[dict], None] = lambda record: None,
                 environ: Mapping[str, str] | None = None, price=None):
        self.agent, self.note, self.environ = agent, note, environ
        self.price = price or (lambda: None)         # the price of the model answering now
        self.children: list[Child] = []
        self.launched: dict[str, Child] = {}         # tool_use id → its child (this reply's)
        self.questions: queue.Queue[Question] = queue.Queue()
        self.changed = threading.Event()
        self.found = defs.load(agent.workspace, environ)
        self.warned: set[str] = set()

    # ---- what the model is told --------------------------------------------------------------
    def reload(self) -> None:
        self.found = defs.load(self.agent.workspace, self.environ)

    def problems(self) -> list[str]:
        return list(self.found.problems)

    def description(self) -> str:
        agents = "\n".join(f"- {d.name}: {d.description}" for d in self.found.definitions.values())
        return ("Hand a self-contained piece of work (a search across many files, a review) to a sub-agent with a "
                "fresh context: it has your tools except task and returns only its report. Calls in one reply run "
                "at the same time. The prompt must say everything: it knows nothing of this conversation.\n"
                f"agent: one of\n{agents}\n- general (default): all your tools")

    # ---- one call ------------------------------------------------------------------------------
    def run(self, args: dict) -> ToolResult:
        call_id = self._claim(args)
        child = self.launched.get(call_id) if call_id else None
        if child is None:
            started = self._start(call_id, args)
            if isinstance(started, str):
                return ToolResult(started, True)
            child = started
            self._start_following(call_id)
        try:
            self._wait(child)
        except KeyboardInterrupt:
            self.stop_all("interrupted")
            raise
        return self._finish(child)

    def _claim(self, args: dict) -> str | None:
        """The id of this reply's task call with these arguments (the first not claimed yet)."""
        for call in getattr(self.agent.tool_ctx, "round_calls", ()) or ():
            if call.get("name") == TASK and call.get("input") == args and not call.get("_claimed"):
                call["_claimed"] = True
                return call["id"]
        return None

    def _start_following(self, call_id: str | None) -> None:
        """Start the task calls that follow this one in the reply, up to the next other tool."""
        calls = list(getattr(self.agent.tool_ctx, "round_calls", ()) or ())
        ids = [c.get("id") for c in calls]
        if call_id not in ids:
            return
        for call in calls[ids.index(call_id) + 1:]:
            if call.get("name") != TASK:
                break
            if call["id"] not in self.launched and isinstance(call.get("input"), dict):
                self._start(call["id"], call["input"])

    def _definition(self, name: str) -> defs.Definition | str:
        name = (name or "").strip().lower()
        if not name or name == defs.GENERAL.name:
            return defs.GENERAL
        found = self.found.definitions.get(name)
        if found is None:
            known = ", ".join([*self.found.definitions, defs.GENERAL.name])
            return f"Error: task: no agent named {name!r}; the agents are: {known}"
        return found

    def _start(self, call_id: str | None, args: dict) -> Child | str:
        description, prompt = str(args.get("description", "")).strip(), str(args.get("prompt", "")).strip()
        if not description or not prompt:
            return "Error: task: description and prompt must not be empty"
        definition = self._definition(str(args.get("agent", "")))
        if isinstance(definition, str):
            return definition
        settings, why = self._settings_for(definition)
        if why:
            self.agent.emit(Notice(why, "warning"))
        number = len(self.children) + 1
        try:
            child = Child(number, definition, " ".join(description.split())[:80], prompt, self.agent,
                          self._tools_for(definition), settings, self.questions, self.changed, self.price())
        except OSError as exc:
            return f"Error: task: could not start the sub-agent ({exc.strerror or exc})"
        self.children.append(child)
        if call_id:
            self.launched[call_id] = child
        self.note({"t": "task", "n": number, "e": "start", "agent": definition.name, "description": child.description,
                   "transcript": child.shown_transcript, **({"call": call_id} if call_id else {})})
        self.agent.emit(TaskStarted(number, definition.name, child.description, child.started))
        return child.start()

    def _tools_for(self, definition: defs.Definition) -> list[dict]:
        """The parent's tools without task, narrowed by the definition (it can only take away)."""
        mine = [t for t in self.agent.tools if t.get("name") != TASK]
        if definition.tools is None:
            return mine
        return [t for t in mine if t.get("name") in definition.tools]

    def _settings_for(self, definition: defs.Definition):
        """The parent's settings, with the definition's model where it may choose one; and why not."""
        settings = dataclasses.replace(self.agent.settings, background_compact="off")
        model = definition.model
        if not model or model == settings.model_id:
            return settings, ""
        if not definition.trusted:
            from session.costs import price_of
            mine, theirs = price_of(settings.model_id), price_of(model)
            if mine is None or theirs is None or theirs[0] > mine[0] or theirs[1] > mine[1]:
                return settings, (f"[agent {definition.name} ({definition.source}) asks for model {model}, which may "
                                  f"cost more than {settings.model_id}: it runs on {settings.model_id}; put the "
                                  "agent in your own ~/.config/s08/agents/ to choose its model]")
        return dataclasses.replace(settings, model_id=model), ""

    def context_line(self) -> str:
        """/context: the sub-agents' contexts, which are not in this one."""
        if not self.children:
            return ""
        peak = max(c.peak for c in self.children)
        read = sum(c.tally.prompt_tokens for c in self.children)
        return (f"sub-agents: {len(self.children)} ran in contexts of their own (the largest prompt {peak:,} tokens, "
                f"{read:,} prompt tokens in all); only their reports are in this context — /tasks")

    # ---- waiting, in the parent's thread ---------------------------------------------------------
    def _wait(self, child: Child) -> None:
        while not child.done.is_set():
            self._answer_questions()
            self._progress()
            self.changed.wait(TICK)
            self.changed.clear()
        self._answer_questions()

    def _answer_questions(self) -> None:
        from approvals.policy import Answer
        ask = self.agent.ask
        self._drain(lambda request: ask(request) if ask is not None else Answer(False))

    def _drain(self, answer_for) -> None:
        """Answer every question the children have queued, one at a time, with `answer_for(request)`."""
        while True:
            try:
                question = self.questions.get_nowait()
            except queue.Empty:
                return
            question.answer = answer_for(question.request)
            question.answered.set()

    def _progress(self) -> None:
        running = [c for c in self.children if not c.done.is_set()]
        if running:
            self.agent.emit(TaskProgress([(c.number, c.definition.name, c.description, c.step, c.started)
                                          for c in running]))

    def stop_all(self, why: str) -> None:
        """Stop every running child and wait (a bounded time) for each to close its history."""
        running = [c for c in self.children if not c.done.is_set()]
        for child in running:
            child.stop(why)
        deadline = time.monotonic() + STOP_WAIT
        for child in running:
            while not child.done.wait(0.05):
                self._refuse_questions()
                if time.monotonic() > deadline:
                    break
        for child in running:
            self._finish(child)

    def _refuse_questions(self) -> None:
        from approvals.policy import Answer
        self._drain(lambda _request: Answer(False, reason="stopped"))

    def _finish(self, child: Child) -> ToolResult:
        """The child's report for the parent, said once on screen and in the session log."""
        if getattr(child, "_result", None) is not None:
            return child._result  # type: ignore[has-type]
        status = child.status if child.done.is_set() else "interrupted"
        if child.stopped_why and status != "done":
            status = "stopped" if child.stopped_why != "interrupted" else "interrupted"
        tally = child.tally
        tokens = tally.prompt_tokens + tally.output
        shown = child.shown_transcript
        body = report(child.text, getattr(self.agent.settings, "task_report_max", 2000), shown)
        if status == "failed":
            body = f"The sub-agent failed: {child.error}\n{body if child.text else ''}".rstrip()
        elif status in ("interrupted", "stopped"):
            why = child.stopped_why if child.stopped_why and child.stopped_why != "interrupted" else "interrupted"
            body = f"The sub-agent was {why}; what it had when it stopped:\n{body}"
        tail = trailer(child.number, child.definition.name, status, child.read, child.written, tokens, tally.cost,
                       child.seconds, shown)
        for path in child.read:
            self.agent.continuity.tool_done({"name": "read_file", "input": {"path": path}}, "", False)
        for path in child.written:
            self.agent.continuity.tool_done({"name": "write_file", "input": {"path": path}}, "", False)
        self.note({"t": "task", "n": child.number, "e": "report", "status": status, "tokens": tokens,
                   "usage": dataclasses.asdict(tally) if tally.calls else {}, "cost": tally.cost,
                   "requests": tally.calls, "peak": child.peak, "compactions": child.compactions,
                   "seconds": round(child.seconds, 1), "read": child.read, "written": child.written})
        self.agent.emit(TaskFinished(child.number, child.definition.name, child.description, status, tokens,
                                     tally.cost, child.seconds, shown, child.calls, tally, child.peak))
        result = ToolResult(f"{body}\n\n{tail}", status != "done", {"task": child.number})
        child._result = result  # type: ignore[attr-defined]
        return result
