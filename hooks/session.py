"""The hooks of one session: which are active, the one question about a project's hooks, and firing.

    Hooks(workspace, consent_path, environ)     reads both settings files once, at the start
      .settle(ask, emit)        a project's hooks not agreed to yet: one question listing every command
                                (yes is remembered for this folder and this exact content; a change asks
                                again); with nobody to ask (-p, piped input) they are ignored, said in one line
      .fire(event, payload, target) -> Outcome     every matching active hook, in order (lines to .emit)
      .pre_tool / .post_tool / .pre_compact / .post_compact / .start     the events with their payloads
      .listing()                what /hooks shows: active, waiting for agreement, and problems

The files are read when the session starts: a settings file changed afterwards (the model can write
.s08/settings.json) changes nothing until the next session, where a changed project file asks again.
A project's hook cannot relax approvals: its `permissionDecision: allow` is ignored (deny and ask count).
The agreement covers the scripts in the workspace a project's hook command names too (`bash
.s08/hooks/fmt.sh`, `$CLAUDE_PROJECT_DIR/scripts/x.py`): a hook whose script changed since is not run
(said in one line), and the next session asks again — a model that can write files cannot change what
runs outside the sandbox.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from access import settings_json
from access.credentials import agreed_values, remember_values
from access.pins import YES, shown
from events import Emit, Notice, Question
from .outcome import Outcome, label, read_run
from .payloads import tool_fields, tool_response
from .process import hook_env, run_hook
from .settings import HookSpec, digest, matches, parse, scripts_of, unsafe_scripts

CONSENT_NAME = "hooks"            # the value name in the consent record (credentials.remember_values)
SHOWN_COMMAND = 1_000
CANNOT_BLOCK = ("SessionStart", "SessionEnd", "Notification", "PostCompact")


class Hooks:
    def __init__(self, workspace: Path, consent_path: Path | None, environ: Mapping[str, str] | None = None):
        self.workspace, self.consent_path = workspace, consent_path
        self.env = hook_env(workspace)
        self.emit: Emit | None = None           # where their lines go (the session's bus)
        self.pending_context: list[str] = []    # SessionStart's context, for the next message
        self.problems: list[str] = []
        self.user_path = settings_json.user_file(environ)
        self.project_path = settings_json.project_file(workspace)
        self.user = self._read(self.user_path, "user")[0]
        self.project, self.project_value = self._read(self.project_path, "project")
        memo: dict[str, str] = {}
        self.scripts = {s.command: scripts_of(s.command, workspace, memo) for s in self.project}   # as agreed to
        self.project_digest = digest({"hooks": self.project_value, "scripts": self.scripts}) if self.project else ""
        self.agreed = bool(self.project) and consent_path is not None and \
            agreed_values(consent_path, workspace).get(CONSENT_NAME) == self.project_digest
        self.settled = not self.project or self.agreed
        self.session_id, self.transcript = "", ""
        self.permission_mode = "default"

    def _read(self, path: Path, source: str) -> tuple[list[HookSpec], object]:
        loaded = settings_json.read(path)
        if loaded.problem:
            self.problems.append(loaded.problem)
        value = loaded.data.get("hooks")
        specs, problems = parse(value, source, str(path))
        self.problems += problems
        return specs, value

    @property
    def active(self) -> list[HookSpec]:
        return self.user + (self.project if self.agreed else [])

    def __bool__(self) -> bool:
        return bool(self.user or self.project)

    # ---- the project's hooks: the person's agreement ------------------------------------
    def question(self) -> str:
        lines = [f"This project's {self.project_path.relative_to(self.workspace)} defines {len(self.project)} "
                 f"hook{'s' * (len(self.project) > 1)}: commands s08 would run on your behalf, outside the "
                 "sandbox, when these events happen:"]
        for spec in self.project:
            lines.append(f"  {shown(spec.names(), 200)} (timeout {spec.timeout:g} s):")
            lines += [f"      {shown(line, SHOWN_COMMAND)}" for line in spec.command.splitlines() or [""]]
            lines += [f"      (never run: {shown(path, 200)} is {self.scripts[spec.command][path]})"
                      for path in unsafe_scripts(self.scripts[spec.command])]
        lines.append("Anyone who could write this folder (a cloned repository, a model in an earlier session) could "
                     "have written them. Run them? Yes is remembered for this folder and exactly these hooks (a "
                     "change asks again); no ignores them for this session.")
        return "\n".join(lines)

    def settle(self, ask, emit: Emit) -> None:
        if self.settled:
            return
        self.settled = True
        if ask is None:
            emit(Notice(f"s08: ignoring the {len(self.project)} hook(s) of {self.project_path}: a project's hooks "
                        "run only after you agreed to them; run s08 here once in a terminal and answer yes.",
                        "warning"))
            return
        answer = ask(Question(self.question()))
        if (answer or "").strip().lower() not in YES:
            emit(Notice(f"[ignoring the hooks of {self.project_path} for this session]", "warning"))
            return
        self.agreed = True
        try:
            if self.consent_path is not None:
                where = remember_values(self.consent_path, self.workspace, {CONSENT_NAME: self.project_digest})
                emit(Notice(f"[running them; remembered for these exact hooks in {where}]", "info"))
        except OSError as exc:
            emit(Notice(f"[running them for this session; could not remember it: {exc.strerror or exc}]", "warning"))

    # ---- firing ------------------------------------------------------------------------
    def fire(self, event: str, payload: dict, target: str = "") -> Outcome:
        """Run every active hook of `event` whose matcher takes `target`, one after another (the same
        command once). KeyboardInterrupt passes through (the running hook's group is killed first)."""
        total, emit = Outcome(), self.emit
        chosen = [s for s in self.active if s.event == event and matches(s, target)]
        if not chosen:
            return total
        data = json.dumps({"session_id": self.session_id, "transcript_path": self.transcript,
                           "cwd": str(self.workspace), "permission_mode": self.permission_mode,
                           "hook_event_name": event, **payload}, ensure_ascii=False, default=str).encode()
        seen: set[str] = set()
        memo: dict[str, str] = {}
        for spec in chosen:
            if spec.command in seen:
                continue
            seen.add(spec.command)
            bad = unsafe_scripts(self.scripts[spec.command]) if spec.source == "project" else []
            if bad:
                if emit is not None:
                    emit(Notice(f"[{label(spec)}: not run: {shown(bad[0], 120)} is {self.scripts[spec.command][bad[0]]} "
                                "(a link out of the folder, a device, a FIFO, or too much to read), so nobody can say "
                                "what it would run]", "warning"))
                continue
            if spec.source == "project" and scripts_of(spec.command, self.workspace, memo) != self.scripts[spec.command]:
                if emit is not None:
                    emit(Notice(f"[{label(spec)}: not run: a script it runs in this folder changed since you "
                                "agreed to it; start s08 again to be asked]", "warning"))
                continue
            run = run_hook(spec.command, data, self.workspace, spec.timeout, self.env)
            outcome, line = read_run(spec, run, event)
            if spec.source == "project" and outcome.permission == "allow":
                outcome.permission = None           # a repository's hook cannot skip a question
            if outcome.blocked and event in CANNOT_BLOCK:        # nothing to block: its stderr is for the person
                line = line or f"[{label(spec)}: exit code 2: {shown(outcome.reason, 200)}]"
            if line and emit is not None:
                emit(Notice(line, "warning"))
            for message in outcome.messages:
                if emit is not None:
                    emit(Notice(f"[{event} hook] {message}", "info"))
            total.merge(outcome)
            if outcome.stop is not None:
                break
        return total

    # ---- /hooks ---------------------------------------------------------------------------
    def listing(self) -> list[tuple[str, str, str]]:
        """(state, hook, where) rows: "active", "not agreed" (a project's, waiting or declined)."""
        rows = [("active", f"{s.names()}: {s.command}", s.where) for s in self.user]
        state = "active" if self.agreed else "not agreed"
        rows += [(state, f"{s.names()}: {s.command}", s.where) for s in self.project]
        return rows

    def changed_since_start(self) -> list[str]:
        """The settings files whose hooks differ from what this session read."""
        changed = []
        for path, specs in ((self.user_path, self.user), (self.project_path, self.project)):
            now = parse(settings_json.read(path).data.get("hooks"), "", str(path))[0]
            if [(s.event, s.matcher, s.command, s.timeout) for s in now] != \
                    [(s.event, s.matcher, s.command, s.timeout) for s in specs]:
                changed.append(str(path))
        return changed

    # ---- the tool events ---------------------------------------------------------------------
    def pre_tool(self, call: dict) -> Outcome:
        return self.fire("PreToolUse", {**tool_fields(call["name"], call.get("input"), self.workspace),
                                        "tool_use_id": call["id"]}, call["name"])

    def post_tool(self, call: dict, content: str, is_error: bool) -> tuple[str, str | None]:
        """PostToolUse after a call that ran: (what its hooks say to the model, appended to the result ("" none),
        the stopReason when one said "continue": false)."""
        if is_error:
            return "", None
        name, args = call["name"], call.get("input")
        out = self.fire("PostToolUse", {**tool_fields(name, args, self.workspace), "tool_use_id": call["id"],
                                        "tool_response": tool_response(name, args, content, is_error,
                                                                       self.workspace)}, name)
        said = ([f"[PostToolUse hook] {out.reason}"] if out.blocked else []) + \
            [f"[PostToolUse hook context] {c}" for c in out.context]
        return ("\n\n" + "\n".join(said) if said else ""), out.stop

    # ---- compaction and the session ----------------------------------------------------------
    def pre_compact(self, trigger: str, focus: str) -> tuple[str, str | None]:
        """(the summary's focus with what PreCompact adds, why it blocked or None). Claude Code's trigger:
        "manual" (/compact, the compact tool) or "auto"."""
        out = self.fire("PreCompact", {"trigger": trigger, "custom_instructions": focus}, trigger)
        if out.blocked or out.stop is not None:
            return focus, out.reason or out.stop or "a PreCompact hook blocked it"
        added = "\n".join(out.context)
        return ("\n".join(p for p in (focus, added) if p), None)

    def post_compact(self, trigger: str, summary: str) -> None:
        """PostCompact gets the summary; then SessionStart with source "compact" (its context goes with
        the next message)."""
        self.fire("PostCompact", {"trigger": trigger, "summary": summary})
        self.start("compact")

    def start(self, source: str) -> None:
        out = self.fire("SessionStart", {"source": source}, source)
        self.pending_context += out.context

    def take_context(self) -> list[str]:
        taken, self.pending_context = self.pending_context, []
        return taken


@dataclass
class PromptCheck:
    """UserPromptSubmit's answer: why the prompt was refused (None: it goes on) and context to add."""
    refused: str | None
    context: list[str]


def check_prompt(hooks: Hooks, prompt: str) -> PromptCheck:
    out = hooks.fire("UserPromptSubmit", {"prompt": prompt})
    if out.blocked or out.stop is not None:
        return PromptCheck(out.reason or out.stop or "a UserPromptSubmit hook refused it", [])
    return PromptCheck(None, out.context)
