"""Reading a session log back: replaying its records into the history, the token totals, what the
continuity keeps and the window the API stated (the records are listed in session/log.py).

    load_session(path) -> LoadedSession    a torn last line dropped, the rest replayed
    replay(lines)                          a bad record stops the replay until the next full snapshot,
                                           so what is rebuilt is always a state that was real; the
                                           result is made sendable (session/repair.py)
    apply_record(messages, record)         one record's change of the history
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import json_text
from session.checkpoints import record_ok as checkpoint_record_ok
from compaction.continuity import Continuity
from compaction.ledger import WorkLedger
from compaction.markers import COMPACTED_PREFIX, SNIP_PREFIX, SUMMARY_PREFIX
from compaction.tokens import usage_tokens
from compaction.window import MAX_TOLD, MIN_BOUND, MIN_WINDOW
from messages import blocks
from llm.usage import Usage, clean_usage
from session.repair import STOPPED_RESULT, make_sendable
from storage import LOG_LIMIT, safe

CONTINUITY_RECORDS = ("typed", "typed_saved", "work", "kept", "rewound", "skill")
MAX_SKILL_CHARS = 256 * 1024        # prompts/files.py reads no more of a SKILL.md
CHECKPOINT_RECORDS = ("checkpoint", "checkpoint_after", "undone", "checkpoints")
INDEX_RECORDS = ("compaction", "output")       # what happened and where it went (session_index.py): not replayed
BACKGROUND_RECORDS = ("prepare", "prepared", "dropped", "applied")
MODEL_CHARS = 200             # of a usage record's model name


@dataclass
class LoadedSession:
    id: str
    path: Path
    messages: list[dict]
    header: dict = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)
    usages: list[tuple[dict, str, str]] = field(default_factory=list)   # (usage, purpose, model)
    anchor: tuple[int, int] | None = None      # (messages covered, tokens) of the last usage still valid
    unanswered: bool = False
    continuity: Continuity = field(default_factory=Continuity)
    window: int | None = None                  # the context window the API stated, if it did
    window_silent: int | None = None           # the empty answer's size it was learned from, if so
    repaired: bool = False                     # replay had to skip or fix something: resume writes a snapshot
    checkpoints: list[dict] = field(default_factory=list)   # checkpoint / undone records (session/checkpoints.py)
    model_choice: str | None = None            # the model the person chose (--model, /model), if they did
    task_usages: list[dict] = field(default_factory=list)   # the sub-agents' tallies (their "task" report records)
    prepared: dict | None = None               # a summary prepared in the background and never applied nor
                                               # dropped (its "prepared" record; compaction/background.py)

    @property
    def answered(self) -> int:
        """The largest prompt (and answer) the endpoint answered in this session, in its own count (0: none
        logged). A resumed session's first silence larger than it is an overflow (compaction/pipeline.py)."""
        return min(MAX_TOLD, max((usage_tokens(u) for u, purpose, _model in self.usages
                                  if purpose == "answer" and Usage.of(u).output > 0), default=0))


def _message_ok(m) -> bool:
    return isinstance(m, dict) and m.get("role") in ("user", "assistant") and isinstance(m.get("content"), (str, list))


def _record_ok(r, length: int) -> bool:
    """Is this record well-formed, and does it fit a history of `length` messages?"""
    if not isinstance(r, dict):
        return False
    kind = r.get("t")
    if kind == "append":
        return _message_ok(r.get("m"))
    if kind == "set":
        return isinstance(r.get("i"), int) and 0 <= r["i"] < length and _message_ok(r.get("m"))
    if kind == "extend":
        return (isinstance(r.get("i"), int) and 0 <= r["i"] < length and isinstance(r.get("blocks"), list)
                and all(isinstance(b, dict) for b in r["blocks"]))
    if kind == "replace":
        return (isinstance(r.get("keep"), int) and 0 <= r["keep"] <= length and isinstance(r.get("tail"), list)
                and all(_message_ok(m) for m in r["tail"]))
    if kind == "usage":
        return isinstance(r.get("u"), dict) and isinstance(r.get("n"), int)
    if kind == "typed":
        return isinstance(r.get("text"), str)
    if kind == "window":
        silent, tokens = r.get("silent"), r.get("tokens")
        if not isinstance(tokens, int) or isinstance(tokens, bool) or not tokens <= MAX_TOLD:
            return False
        if silent is not None:          # learned from an empty answer at that size (window.py, silence_bound:
            return (isinstance(silent, int) and not isinstance(silent, bool)     # at least half of it)
                    and MIN_BOUND <= tokens <= silent <= min(MAX_TOLD, 2 * tokens + 1))
        return tokens >= MIN_WINDOW
    if kind == "typed_saved":
        return isinstance(r.get("i"), int) and isinstance(r.get("path"), str)
    if kind == "skill":                 # a loaded skill (tools/skill.py), as bounded as the file it was read from
        return (isinstance(r.get("name"), str) and 0 < len(r["name"]) <= 64 and isinstance(r.get("body"), str)
                and len(r["body"]) <= MAX_SKILL_CHARS)
    if kind == "work":
        return isinstance(r.get("w"), dict) and _work_ok(r["w"])
    if kind in BACKGROUND_RECORDS:
        return _background_ok(r)
    if kind in CHECKPOINT_RECORDS:
        return checkpoint_record_ok(r)
    if kind == "model":
        return isinstance(r.get("id"), str) and 0 < len(r["id"]) <= MODEL_CHARS
    if kind == "rewound":
        return (all(isinstance(r.get(k), int) and not isinstance(r.get(k), bool) for k in ("first", "last"))
                and 1 <= r["first"] <= r["last"])
    if kind == "kept":
        return (isinstance(r.get("typed"), list) and WorkLedger.state_ok(r.get("ledger"))
                and all(isinstance(e, list) and len(e) == 2 and all(isinstance(x, str) for x in e) for e in r["typed"]))
    if kind == "task":         # a sub-agent's start and report (delegation/tasks.py): not replayed but its usage
        return isinstance(r.get("n"), int) and not isinstance(r.get("n"), bool) and r.get("e") in ("start", "report")
    return kind == "session" or kind in INDEX_RECORDS


def _background_ok(r: dict) -> bool:
    """The records of a summary prepared in the background (compaction/background.py)."""
    n = r.get("n")
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        return False
    if r["t"] == "prepared":
        return (all(isinstance(r.get(k), str) for k in ("hash", "key", "text", "transcript"))
                and isinstance(r.get("seconds"), (int, float)) and not isinstance(r.get("seconds"), bool))
    return r["t"] != "prepare" or all(isinstance(r.get(k), str) for k in ("hash", "key"))


def _work_ok(w: dict) -> bool:
    needed = {"file": ("path", "do"), "cmd": ("cmd", "end"), "saved": ("path", "what")}.get(w.get("k"))
    turn = w.get("turn", 0)
    return (needed is not None and all(isinstance(w.get(k), str) for k in needed)
            and isinstance(turn, int) and not isinstance(turn, bool))


def apply_record(messages: list[dict], record: dict) -> list[dict]:
    """The history after one (checked) record: what an append, set, extend or replace did to it;
    other records leave it as it was. Replaying a LoggedHistory's records this way gives the
    history it held (tests/test_session_history.py)."""
    kind = record["t"]
    if kind == "append":
        messages.append(record["m"])
    elif kind == "set":
        messages[record["i"]] = record["m"]
    elif kind == "extend":
        grown = messages[record["i"]]
        messages[record["i"]] = {**grown, "content": blocks(grown) + record["blocks"]}
    elif kind == "replace":
        messages = messages[:record["keep"]] + record["tail"]
    return messages


def decide_nothing(loaded: LoadedSession) -> LoadedSession:
    """A log written in another workspace decides nothing of this session: the model it chose is not used, nor
    its file checkpoints (each said in a notice). The person agreed only to go on with its conversation."""
    if loaded.model_choice:
        loaded.notices.append(f"[the resumed log chose the model {loaded.model_choice[:MODEL_CHARS]!r}; it was "
                              "written in another workspace, so this session keeps yours (/model switches)]")
        loaded.model_choice = None
    if loaded.checkpoints:          # its "before" of a file is not the person's: /undo and /rewind would apply it
        loaded.notices.append("[the resumed log's file checkpoints are not used: it was written in another "
                              "workspace, so /undo and /rewind cover only the changes made from now on]")
        loaded.checkpoints = []
    return loaded


def replay(lines: list[str]) -> LoadedSession:
    """Rebuild the history (and the usage) from log lines. A record that is unreadable or does not fit
    stops the replay until the next full snapshot, so what is rebuilt is always a state that was real."""
    loaded = LoadedSession("", Path(), [])
    messages, lost_at, skipped, recorded = [], None, 0, False
    for n, line in enumerate(lines, 1):
        try:
            record = json_text.loads(line)
        except (ValueError, RecursionError):
            record = None
        snapshot = isinstance(record, dict) and record.get("t") == "replace" and record.get("keep") == 0
        if lost_at is not None and not (snapshot and _record_ok(record, 0)):
            skipped += 1
            continue
        if not _record_ok(record, len(messages)):
            lost_at, skipped = n, 0
            continue
        if lost_at is not None:
            loaded.notices.append(f"the session log is damaged at line {lost_at}; {skipped} record(s) after it "
                                  "were skipped until a full snapshot")
            lost_at = None
        kind = record["t"]
        if kind == "session":
            loaded.header = record
            choice = record.get("model_choice")
            loaded.model_choice = choice[:MODEL_CHARS] if isinstance(choice, str) and choice else None
        if kind == "model":
            loaded.model_choice = record["id"]
        if kind in CHECKPOINT_RECORDS:     # a "checkpoints" record is the whole state: what came before it goes
            loaded.checkpoints = ([] if kind == "checkpoints" else loaded.checkpoints) + [record]
        messages = apply_record(messages, record)
        if kind in ("set", "extend", "replace") and loaded.anchor and (record.get("i", record.get("keep", 0)) < loaded.anchor[0]):
            loaded.anchor = None           # the prompt that usage measured was rewritten since
        if kind == "window":
            loaded.window, loaded.window_silent = record["tokens"], record.get("silent")
        if kind in BACKGROUND_RECORDS:        # only a "prepared" one no later record ended may be offered again
            loaded.prepared = record if kind == "prepared" else None
        if kind in CONTINUITY_RECORDS:
            loaded.continuity.apply(record)
            recorded = True
        if kind == "task" and record.get("e") == "report" and isinstance(record.get("usage"), dict):
            loaded.task_usages.append(record["usage"])          # checked where it is read (TokenTally.from_record)
        if kind == "usage":
            u = clean_usage(record["u"])
            model = record.get("model") if isinstance(record.get("model"), str) else loaded.header.get("model")
            model = model[:MODEL_CHARS] if isinstance(model, str) else ""      # older logs: the header's model
            loaded.usages.append((u, "summary" if record.get("p") == "summary" else "answer", model))
            loaded.anchor = (record["n"], usage_tokens(u)) if 0 < record["n"] <= len(messages) else None
    if lost_at is not None:
        loaded.notices.append(f"the session log is damaged at line {lost_at}; resumed the state before it "
                              f"({skipped} later record(s) could not be used)")
    loaded.repaired = bool(loaded.notices)
    sendable, fixes = make_sendable(messages, STOPPED_RESULT)
    if fixes:
        loaded.notices += fixes
        loaded.repaired = True
    if loaded.anchor and (loaded.anchor[0] > len(sendable) or sendable[:loaded.anchor[0]] != messages[:loaded.anchor[0]]):
        loaded.anchor = None
    loaded.messages = sendable
    if not recorded and sendable:          # a log from before s08 recorded what the person typed
        loaded.continuity = Continuity.from_history(legacy_typed_texts(sendable))
    return loaded


LEGACY_PREFIXES = {"The user's first request, verbatim:\n": True, "The user's last request (already answered):\n": True,
                   COMPACTED_PREFIX: False, SNIP_PREFIX: False, SUMMARY_PREFIX: False}


def legacy_typed_texts(messages: list[dict]) -> list[dict]:
    """An old log's history with the text older versions of s08 generated taken out (and the requests
    they kept verbatim put back as plain text), so what remains is what the person typed."""
    out = []
    for m in messages:
        if m.get("role") != "user":
            out.append(m)
            continue
        kept = []
        for b in blocks(m):
            text = b.get("text", "") if b.get("type") == "text" else None
            prefix = next((p for p in LEGACY_PREFIXES if text is not None and text.startswith(p)), None)
            if prefix is None:
                kept.append(b)
            elif LEGACY_PREFIXES[prefix] and text[len(prefix):].strip():
                kept.append({"type": "text", "text": text[len(prefix):]})
        out.append({**m, "content": kept})
    return out


def load_session(path: Path) -> LoadedSession:
    """Read a session log; a last line without its newline was cut off mid-write and is dropped. Only a
    regular file, not through a link, at most LOG_LIMIT bytes (storage.Refused / TooLarge otherwise)."""
    raw = safe.read_bytes(path, LOG_LIMIT).decode("utf-8", errors="replace")
    lines = raw.split("\n")
    torn = lines.pop() if lines else ""           # "" when the file ends with a newline
    loaded = replay([line for line in lines if line.strip()])
    if torn.strip():
        loaded.notices.insert(0, "dropped a half-written last line of the session log")
        loaded.repaired = True
    loaded.id, loaded.path = path.stem, path
    return loaded


