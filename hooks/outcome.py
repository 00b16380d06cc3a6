"""What a hook's exit code and output mean, in Claude Code's terms, and the outcome of all the hooks of
one event.

    read_run(spec, run, event) -> (Outcome, line)   one hook's outcome and at most one line for the screen
    Outcome.merge(other)                            several hooks of one event: deny wins, contexts add up

Exit 0 goes on; its stdout, when it starts with `{`, is Claude Code's JSON (`continue`, `stopReason`,
`decision`, `reason`, `systemMessage`, `hookSpecificOutput.permissionDecision` / `additionalContext`);
otherwise plain stdout is context for UserPromptSubmit and SessionStart and ignored elsewhere. Exit 2
blocks, with stderr as the reason. Any other code, a timeout, output that is not valid JSON: one line,
ignored.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from access.pins import shown
from .process import MAX_OUTPUT, HookRun
from .settings import HookSpec

MAX_REASON = 4_000                # characters of a reason or context the model (or the person) gets
MAX_EVENT_TEXT = 16_000           # characters of reasons, and of context, from all the hooks of one event
CONTEXT_EVENTS = ("UserPromptSubmit", "SessionStart")
RANK = {None: 0, "allow": 1, "ask": 2, "deny": 3}


@dataclass
class Outcome:
    blocked: bool = False
    reason: str = ""                      # exit-2 stderr, a block's or a deny's reason
    context: list[str] = field(default_factory=list)     # additionalContext (or plain stdout where that counts)
    permission: str | None = None         # PreToolUse: allow / ask / deny
    stop: str | None = None               # "continue": false — its stopReason ("" when none)
    messages: list[str] = field(default_factory=list)    # systemMessage: for the person

    def merge(self, other: "Outcome") -> None:
        self.blocked = self.blocked or other.blocked
        if other.reason and (other.blocked or other.permission == "deny" or not self.reason):
            self.reason = _within("\n".join(r for r in (self.reason, other.reason) if r), MAX_EVENT_TEXT)
        for text in other.context:                 # 200 hooks of one event cannot flood the context
            room = MAX_EVENT_TEXT - sum(len(c) for c in self.context)
            if room > 0:
                self.context.append(_within(text, room))
        if RANK[other.permission] > RANK[self.permission]:
            self.permission = other.permission
        if other.stop is not None and self.stop is None:
            self.stop = other.stop
        self.messages += other.messages


def _within(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f" … [{len(text) - limit:,} characters more]"


def _clip(text: str) -> str:
    return _within(text.strip(), MAX_REASON)


def label(spec: HookSpec) -> str:
    return f"{shown(spec.names(), 80)} hook `{shown(spec.command.strip().splitlines()[0] if spec.command.strip() else '', 60)}`"


def read_run(spec: HookSpec, run: HookRun, event: str) -> tuple[Outcome, str]:
    notes = []
    if run.dropped:
        notes.append(f"printed more than {MAX_OUTPUT // 1024} KB (the rest was dropped)")
    if run.left:
        notes.append(f"left {run.left} process{'es' * (run.left > 1)} running (killed)")
    out = Outcome()
    if run.code is None:
        return out, _line(spec, [run.problem, *notes], "ignored")
    if run.code == 2:
        out.blocked, out.reason = True, _clip(run.stderr) or f"blocked by a {spec.event} hook"
        return out, _line(spec, notes, "") if notes else ""
    if run.code != 0:
        first = shown(run.stderr.strip().splitlines()[0], 120) if run.stderr.strip() else ""
        return out, _line(spec, [f"exit code {run.code}" + (f": {first}" if first else ""), *notes], "ignored")
    text = run.stdout.strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
            if not isinstance(data, dict):
                raise ValueError("not an object")
        except (ValueError, RecursionError):
            return out, _line(spec, ["printed invalid JSON", *notes], "its output is ignored")
        _read_json(data, out, event)
    elif text and event in CONTEXT_EVENTS:
        out.context.append(_clip(text))
    return out, _line(spec, notes, "") if notes else ""


def _read_json(data: dict, out: Outcome, event: str) -> None:
    if data.get("continue") is False:
        out.stop = _clip(str(data.get("stopReason") or ""))
    if isinstance(data.get("systemMessage"), str) and data["systemMessage"].strip():
        out.messages.append(_clip(data["systemMessage"]))
    decision, reason = data.get("decision"), data.get("reason")
    reason = _clip(reason) if isinstance(reason, str) else ""
    if decision == "block":
        out.blocked, out.reason = True, reason or f"blocked by a {event} hook"
    elif decision == "approve" and event == "PreToolUse":        # the older form of permissionDecision
        out.permission, out.reason = "allow", reason
    specific = data.get("hookSpecificOutput")
    if not isinstance(specific, dict):
        return
    permission = specific.get("permissionDecision")
    if event == "PreToolUse" and permission in ("allow", "ask", "deny"):
        out.permission = permission
        why = specific.get("permissionDecisionReason")
        if isinstance(why, str) and why.strip():
            out.reason = _clip(why)
    context = specific.get("additionalContext")
    if isinstance(context, str) and context.strip():
        out.context.append(_clip(context))


def _line(spec: HookSpec, notes: list[str], after: str) -> str:
    said = "; ".join(n for n in notes if n)
    return f"[{label(spec)}: {said}{'; ' + after if after else ''}]"
