"""The person's ways back, as functions over the App (app.py): /undo and /rewind over the file checkpoints
(session/checkpoints.py), and /resume inside the REPL.

    undo(app) / rewind(app, arg)          /undo, /rewind [N [files|all]]; the model is told what was undone by a
                                          user text ("[undone by you] …")
    resume_other(app, arg)                /resume [ID]: the picker, then App.switch_to that session
    use_checkpoints, restore_checkpoints  what the App calls when a history starts and a session is resumed

Everything here goes through the App's history (a LoggedHistory, so it is logged) and its events.
"""

from __future__ import annotations

from pathlib import Path

from access.pins import YES
from events import Notice, Question, SessionChoices
from messages import add_user_text, close_dangling_tool_uses
from session.checkpoints import Checkpoints, cut_before

UNDONE = "[undone by you] "
REWOUND = "[rewound by you] "
NOT_COVERED = ("Changes made by shell commands (bash, !) and by MCP tools (what a server did) are not covered and "
               "were not undone.")
PICKER_MOST = 15
NEEDS_REPL = "command needs the REPL"      # commands.UNUSABLE (not imported: commands imports nothing of the App)


def _first_line(text: str, width: int = 70) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[:width - 1] + "…"


# ---- the session's checkpoints, and another session ----------------------------------------------------------------------------
def use_checkpoints(app, history) -> None:
    """A store of checkpoints for this history's session (its blobs next to the session log)."""
    app.checkpoints = Checkpoints(app.workspace, history.note)
    if history.log is not None:
        app.checkpoints.use_log(history.log.path)
    app.agent.checkpoints = app.checkpoints


def restore_checkpoints(app, loaded) -> None:
    """After a resume: the checkpoints it recorded."""
    for record in loaded.checkpoints:
        app.checkpoints.apply(record)


def resume_other(app, arg: str):
    from access.folder_trust import foreign_log_question, foreign_log_refused
    from session.log import (SessionBusy, SessionLog, decide_nothing, find_session, list_sessions, load_session,
                             written_elsewhere)
    here = app.messages.log.path if app.messages.log is not None else None
    skipped: list[str] = []
    paths = [p for p in list_sessions(app.workspace, skipped) if p != here]
    for line in skipped:
        app.emit(Notice(line, "warning"))
    if arg:
        path = find_session(app.workspace, arg)
        if path is None or path == here:
            app.emit(Notice(f"no other session matches {arg!r}; /resume without an id lists them", "warning"))
            return None
    else:
        if app.ask is None:
            app.emit(Notice("/resume without an id asks which session: run it in the REPL, or give an id",
                            "error"))
            return NEEDS_REPL
        if not paths:
            app.emit(Notice("no other saved session in this workspace", "warning"))
            return None
        shown = paths[:PICKER_MOST]
        app.emit(SessionChoices(shown))
        answer = (app.ask(Question(f"Resume which one? (this session stays resumable: {here.stem if here else ''})",
                                   f"[1-{len(shown)}, Enter = 1, q = cancel] ")) or "").strip().lower()
        if answer in ("q", "quit") or (answer and not answer.isdigit()):
            return None
        if answer and not 1 <= int(answer) <= len(shown):
            app.emit(Notice("not a number from the list", "warning"))
            return None
        path = shown[int(answer) - 1] if answer else shown[0]
    try:
        loaded = load_session(path)
        SessionLog(app.workspace, loaded.id, existing=True).close()     # busy elsewhere? say so, change nothing
    except SessionBusy as exc:
        app.emit(Notice(f"{exc}; close it there first", "error"))
        return None
    except (OSError, ValueError) as exc:
        app.emit(Notice(f"cannot open {Path(path).name}: {getattr(exc, 'strerror', None) or exc}", "error"))
        return None
    other = written_elsewhere(loaded.header, app.workspace, loaded.path)
    if other is not None:            # a log shipped with the repository: only with the person's yes
        if app.ask is None:
            app.emit(Notice(foreign_log_refused(loaded.id, other), "error"))
            return NEEDS_REPL
        if (app.ask(Question(foreign_log_question(loaded.id, other))) or "").strip().lower() not in YES:
            app.emit(Notice("[not resumed]", "info"))
            return None
        decide_nothing(loaded)
    app.switch_to(loaded)
    return None


# ---- /undo and /rewind -------------------------------------------------------------------
def _tell_model(app, text: str) -> None:
    close_dangling_tool_uses(app.messages)
    add_user_text(app.messages, text)


def _restored(app, indexes: list[int], why: str) -> list[str]:
    lines = app.checkpoints.restore(indexes)
    for path in app.checkpoints.paths(indexes):
        app.continuity.ledger.record({"k": "file", "path": path, "do": why, "turn": app.continuity.turn})
    return lines


def undo(app) -> None:
    prompt = app.checkpoints.latest_prompt()
    if prompt is None:
        app.emit(Notice("nothing to undo: no file was changed by write_file or edit_file in this session "
                        "(or it was undone already). " + NOT_COVERED, "warning"))
        return
    lines = _restored(app, app.checkpoints.for_prompt(prompt), "restored by /undo")
    about = _message_label(app, prompt)
    app.emit(Notice(f"[undo] the file changes made in answer to your message {prompt}{about}:\n  "
                    + "\n  ".join(lines) + f"\n{NOT_COVERED}", "info"))
    _tell_model(app, f"{UNDONE}The user ran /undo: the file changes made in answer to their message {prompt} "
                     "were reverted:\n" + "\n".join(f"- {line}" for line in lines) + f"\n{NOT_COVERED}")


def _message_label(app, n: int) -> str:
    entries = app.continuity.typed.entries
    return f' ("{_first_line(entries[n - 1].text, 50)}")' if 0 < n <= len(entries) else ""


def rewind(app, arg: str):
    entries = app.continuity.typed.entries
    candidates = [i + 1 for i, e in enumerate(entries) if not e.dropped]
    if not candidates:
        app.emit(Notice("nothing to rewind to: you have not sent a message in this session yet", "warning"))
        return None
    words = arg.split()
    if words and not words[0].isdigit():
        app.emit(Notice("/rewind [N [files|all]]: N is the number of one of your messages", "warning"))
        return None
    if words:
        n = int(words[0])
    elif app.ask is None:
        app.emit(Notice("/rewind without a number asks which message: run it in the REPL, or give one "
                        "(/rewind 3 files, /rewind 3 all)", "error"))
        return NEEDS_REPL
    else:
        picked = _ask_rewind_point(app, candidates)
        if picked is None:
            return None
        n = picked
    if n not in candidates:
        app.emit(Notice(f"no message {n} to rewind to (yours are numbered {candidates[0]}–{candidates[-1]})",
                        "warning"))
        return None
    texts = [None if e.dropped else e.text for e in entries]
    cut = cut_before(list(app.messages), texts, n)
    mode = words[1].lower() if len(words) > 1 else ""
    conversation = mode == "all"
    if cut is None and conversation:
        app.emit(Notice(f"the conversation before message {n} was compacted: only the files can go back",
                        "warning"))
        conversation = False
    elif cut is not None and not mode and app.ask is not None:
        answer = app.ask(Question(f"Also take the conversation back to before message {n}? (what came after "
                                  "it is withdrawn from the model's view; it stays in the session log)"))
        conversation = (answer or "").strip().lower() in YES
    indexes = app.checkpoints.since_turn(n)
    lines = _restored(app, indexes, f"restored by /rewind to before message {n}")
    if conversation and cut is not None:
        app.messages[:] = cut
        app.continuity.typed.drop(n, len(entries))
    files = ("\n  ".join(lines) if lines else "no file had been changed by write_file or edit_file since then")
    app.emit(Notice(f"[rewind] to before your message {n}{_message_label(app, n)}: "
                    + ("the conversation and " if conversation else "") + f"the files:\n  {files}\n{NOT_COVERED}",
                     "info"))
    if conversation:
        note = f"{REWOUND}The user took the conversation back to this point (before their message {n})"
    else:
        note = f"{UNDONE}The user ran /rewind: the file changes made since their message {n} were reverted"
    if lines or conversation:
        _tell_model(app, note + (":\n" + "\n".join(f"- {line}" for line in lines) if lines else ".")
                         + f"\n{NOT_COVERED}")
    return None


def _ask_rewind_point(app, candidates: list[int]) -> int | None:
    entries = app.continuity.typed.entries
    lines = ["Your messages (files changed since each: by write_file / edit_file):"]
    for n in candidates[-PICKER_MOST:]:
        changed = len(app.checkpoints.paths(app.checkpoints.since_turn(n)))
        lines.append(f"  {n:>3}  {_first_line(entries[n - 1].text)}  · {changed} file{'s' * (changed != 1)}")
    answer = (app.ask(Question("\n".join(lines), "rewind to before which message? [number, Enter cancels] "))
              or "").strip()
    if not answer.isdigit():
        return None
    return int(answer)
