"""What people bring from other agents, as methods of the App (app.py): the model choice, /resume
inside the REPL, `!command`, `@path` mentions, and /undo and /rewind over the file checkpoints.

    set_model(name) / pick_model(arg)     --model, /model [NAME]: the person's own choice (session_settings.Pins
                                          keeps it; a settings file cannot change it under them), logged
                                          ({"t": "model"}) so a resume keeps it; window and prices follow it
    resume_other(arg)                     /resume [ID]: the picker, then the App switches to that session
    run_own(command)                      !command (own_command.py)
    attachments_for(text)                 @path mentions of a message (mentions.py), in the work ledger
    undo() / rewind(arg)                  /undo, /rewind [N [files|all]] (checkpoints.py); the model is told
                                          what was undone by a user text ("[undone by you] …")

Everything here goes through the App's history (a SessionHistory, so it is logged) and its events.
"""

from __future__ import annotations

import re
from pathlib import Path

from checkpoints import Checkpoints, cut_before
from costs import known_models, price_of, window_of
from events import ClearScreen, Notice, Question, SessionChoices, SessionResumed
from history import add_user_text, close_dangling_tool_uses
from mentions import attach, budget_for
from session_settings import YES, fixed_values

MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}")
UNDONE = "[undone by you] "
REWOUND = "[rewound by you] "
NOT_COVERED = "Changes made by shell commands (bash, !) are not covered and were not undone."
PICKER_MOST = 15
NEEDS_REPL = "command needs the REPL"      # commands.UNUSABLE (not imported: commands imports nothing of the App)


def _first_line(text: str, width: int = 70) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[:width - 1] + "…"


class HabitsMixin:
    """Mixed into App; uses its access, agent, messages, continuity, emit, ask, settings and load()."""

    # ---- the model ---------------------------------------------------------------------------
    def set_model(self, name: str, quiet: bool = False) -> bool:
        name = name.strip()
        if not MODEL_NAME.fullmatch(name):
            self.emit(Notice(f"not a model name: {name[:80]!r} (letters, digits and . _ - : / @ +)", "warning"))
            return False
        access = self.access
        access.pins.choose(name, fixed_values(access.result.settings)["MODEL_ID"])
        self._rebuild()
        self._note_model(name)
        if quiet:
            return True
        window, price = window_of(name), price_of(name)
        said = f"[model: {name}"
        said += f" · context window {self.agent.compactor.window.tokens:,} tokens"
        said += f" · ${price[0]:g} / ${price[1]:g} per million tokens in / out]" if price else \
            " · price unknown (MODEL_PRICE sets one)]"
        if window is None:
            said += " — a model s08 does not know: check the name if the endpoint refuses it"
        if self.demo:
            said += " — the demo model answers until a key is in use (/login)"
        self.emit(Notice(said, "info"))
        return True

    def _note_model(self, name: str) -> None:
        """The choice goes into the session log: in the header while nothing is written yet (a start with
        --model leaves no session file behind), else as a record."""
        log = self.messages.log
        if log is None:
            return
        if log.fd is None:
            log.header["model_choice"] = name
        else:
            self.messages.note({"t": "model", "id": name})

    def model_records(self) -> list[dict]:
        chosen = self.access.pins.chosen
        return [{"t": "model", "id": chosen}] if chosen else []

    def pick_model(self, arg: str):
        if arg:
            self.set_model(arg)
            return None
        current = self.settings.model_id
        models = known_models()
        lines = ["Models s08 knows (price: USD per million tokens in / out; any other name works too: "
                 "/model NAME):"]
        for n, name in enumerate(models, 1):
            price, window = price_of(name), window_of(name)
            mark = "  ← now" if name == current else ""
            lines.append(f"  {n:>2}  {name:<20} window {window or 0:,} · ${price[0]:g} / ${price[1]:g}{mark}"
                         if price else f"  {n:>2}  {name}{mark}")
        if self.ask is None:
            self.emit(Notice("\n".join(lines + [f"now: {current}"]), "info"))
            return None
        answer = (self.ask(Question("\n".join(lines), f"model [1-{len(models)} or a name, Enter keeps {current}]: "))
                  or "").strip()
        if not answer:
            return None
        if answer.isdigit():
            if not 1 <= int(answer) <= len(models):
                self.emit(Notice("not a number from the list", "warning"))
                return None
            answer = models[int(answer) - 1]
        self.set_model(answer)
        return None

    # ---- sessions ----------------------------------------------------------------------------
    def use_checkpoints(self, history) -> None:
        """A store of checkpoints for this history's session (its blobs next to the session log)."""
        self.checkpoints = Checkpoints(self.workspace, history.note)
        if history.log is not None:
            self.checkpoints.use_log(history.log.path)
        self.agent.checkpoints = self.checkpoints

    def restore_session_state(self, loaded, model: str | None = None) -> None:
        """After a resume: the checkpoints it recorded, and the model chosen (`model`: --model wins)."""
        for record in loaded.checkpoints:
            self.checkpoints.apply(record)
        choice = model or loaded.model_choice
        if choice and choice != self.access.pins.chosen:
            self.set_model(choice, quiet=True)

    def resume_other(self, arg: str):
        from session import SessionBusy, SessionLog, find_session, list_sessions, load_session
        here = self.messages.log.path if self.messages.log is not None else None
        paths = [p for p in list_sessions(self.workspace) if p != here]
        if arg:
            path = find_session(self.workspace, arg)
            if path is None or path == here:
                self.emit(Notice(f"no other session matches {arg!r}; /resume without an id lists them", "warning"))
                return None
        else:
            if self.ask is None:
                self.emit(Notice("/resume without an id asks which session: run it in the REPL, or give an id",
                                 "error"))
                return NEEDS_REPL
            if not paths:
                self.emit(Notice("no other saved session in this workspace", "warning"))
                return None
            shown = paths[:PICKER_MOST]
            self.emit(SessionChoices(shown))
            answer = (self.ask(Question(f"Resume which one? (this session stays resumable: {here.stem if here else ''})",
                                        f"[1-{len(shown)}, Enter = 1, q = cancel] ")) or "").strip().lower()
            if answer in ("q", "quit") or (answer and not answer.isdigit()):
                return None
            if answer and not 1 <= int(answer) <= len(shown):
                self.emit(Notice("not a number from the list", "warning"))
                return None
            path = shown[int(answer) - 1] if answer else shown[0]
        try:
            loaded = load_session(path)
            SessionLog(self.workspace, loaded.id, existing=True).close()     # busy elsewhere? say so, change nothing
        except SessionBusy as exc:
            self.emit(Notice(f"{exc}; close it there first", "error"))
            return None
        except (OSError, ValueError) as exc:
            self.emit(Notice(f"cannot open {Path(path).name}: {getattr(exc, 'strerror', None) or exc}", "error"))
            return None
        self.switch_to(loaded)
        return None

    def switch_to(self, loaded) -> None:
        """Leave this session (it stays resumable) and go on with `loaded`, as a start with --resume would."""
        self.close()
        self.continuity = loaded.continuity
        self.agent = None                   # type: ignore[assignment]
        self.load()                         # a fresh agent and compactor for that conversation
        self.ledger.new_session()
        self.resumed = loaded
        self._use_history(self._resume(loaded))
        self.restore_session_state(loaded)
        if loaded.repaired:
            for state in self._state_records():
                self.messages.note(state)
        self.approvals.forget()
        self.last_tool = None
        self.emit(ClearScreen())
        self.emit(SessionResumed(loaded, list(self.messages)))

    # ---- !command and @path ------------------------------------------------------------------
    def run_own(self, command: str) -> None:
        from own_command import run_own_command
        self._reload_if_changed()
        run_own_command(self, command)

    def attachments_for(self, text: str) -> tuple[str, ...]:
        if "@" not in text:
            return ()
        got = attach(text, self.workspace, budget_for(self.agent.compactor.limit), self.agent.tool_ctx.redact)
        for line in got.refused:
            self.emit(Notice(line, "warning"))
        turn = self.continuity.turn + 1          # the number the message gets when the turn records it
        for path in got.paths:
            self.continuity.ledger.record({"k": "file", "path": path, "do": "attached by you", "turn": turn})
        if got.paths:
            self.emit(Notice(f"[attached {', '.join(got.paths)}]", "info"))
        return tuple(got.blocks)

    # ---- /undo and /rewind -------------------------------------------------------------------
    def _tell_model(self, text: str) -> None:
        close_dangling_tool_uses(self.messages)
        add_user_text(self.messages, text)

    def _restored(self, indexes: list[int], why: str) -> list[str]:
        lines = self.checkpoints.restore(indexes)
        for path in self.checkpoints.paths(indexes):
            self.continuity.ledger.record({"k": "file", "path": path, "do": why, "turn": self.continuity.turn})
        return lines

    def undo(self) -> None:
        prompt = self.checkpoints.latest_prompt()
        if prompt is None:
            self.emit(Notice("nothing to undo: no file was changed by write_file or edit_file in this session "
                             "(or it was undone already). " + NOT_COVERED, "warning"))
            return
        lines = self._restored(self.checkpoints.for_prompt(prompt), "restored by /undo")
        about = self._message_label(prompt)
        self.emit(Notice(f"[undo] the file changes made in answer to your message {prompt}{about}:\n  "
                         + "\n  ".join(lines) + f"\n{NOT_COVERED}", "info"))
        self._tell_model(f"{UNDONE}The user ran /undo: the file changes made in answer to their message {prompt} "
                         "were reverted:\n" + "\n".join(f"- {line}" for line in lines) + f"\n{NOT_COVERED}")

    def _message_label(self, n: int) -> str:
        entries = self.continuity.typed.entries
        return f' ("{_first_line(entries[n - 1].text, 50)}")' if 0 < n <= len(entries) else ""

    def rewind(self, arg: str):
        entries = self.continuity.typed.entries
        candidates = [i + 1 for i, e in enumerate(entries) if not e.dropped]
        if not candidates:
            self.emit(Notice("nothing to rewind to: you have not sent a message in this session yet", "warning"))
            return None
        words = arg.split()
        if words and not words[0].isdigit():
            self.emit(Notice("/rewind [N [files|all]]: N is the number of one of your messages", "warning"))
            return None
        if words:
            n = int(words[0])
        elif self.ask is None:
            self.emit(Notice("/rewind without a number asks which message: run it in the REPL, or give one "
                             "(/rewind 3 files, /rewind 3 all)", "error"))
            return NEEDS_REPL
        else:
            n = self._ask_rewind_point(candidates)
            if n is None:
                return None
        if n not in candidates:
            self.emit(Notice(f"no message {n} to rewind to (yours are numbered {candidates[0]}–{candidates[-1]})",
                             "warning"))
            return None
        texts = [None if e.dropped else e.text for e in entries]
        cut = cut_before(list(self.messages), texts, n)
        mode = words[1].lower() if len(words) > 1 else ""
        conversation = mode == "all"
        if cut is None and conversation:
            self.emit(Notice(f"the conversation before message {n} was compacted: only the files can go back",
                             "warning"))
            conversation = False
        elif cut is not None and not mode and self.ask is not None:
            answer = self.ask(Question(f"Also take the conversation back to before message {n}? (what came after "
                                       "it is withdrawn from the model's view; it stays in the session log)"))
            conversation = (answer or "").strip().lower() in YES
        indexes = self.checkpoints.since_turn(n)
        lines = self._restored(indexes, f"restored by /rewind to before message {n}")
        if conversation and cut is not None:
            self.messages[:] = cut
            self.continuity.typed.drop(n, len(entries))
        files = ("\n  ".join(lines) if lines else "no file had been changed by write_file or edit_file since then")
        self.emit(Notice(f"[rewind] to before your message {n}{self._message_label(n)}: "
                         + ("the conversation and " if conversation else "") + f"the files:\n  {files}\n{NOT_COVERED}",
                         "info"))
        if conversation:
            note = f"{REWOUND}The user took the conversation back to this point (before their message {n})"
        else:
            note = f"{UNDONE}The user ran /rewind: the file changes made since their message {n} were reverted"
        if lines or conversation:
            self._tell_model(note + (":\n" + "\n".join(f"- {line}" for line in lines) if lines else ".")
                             + f"\n{NOT_COVERED}")
        return None

    def _ask_rewind_point(self, candidates: list[int]) -> int | None:
        entries = self.continuity.typed.entries
        lines = ["Your messages (files changed since each: by write_file / edit_file):"]
        for n in candidates[-PICKER_MOST:]:
            changed = len(self.checkpoints.paths(self.checkpoints.since_turn(n)))
            lines.append(f"  {n:>3}  {_first_line(entries[n - 1].text)}  · {changed} file{'s' * (changed != 1)}")
        answer = (self.ask(Question("\n".join(lines), "rewind to before which message? [number, Enter cancels] "))
                  or "").strip()
        if not answer.isdigit():
            return None
        return int(answer)
