"""Continuity: what s08 keeps for the model through every cut, whatever a summary says.

    Continuity
      ├─ typed    every message the person typed, recorded at the prompt      (user_messages.py)
      ├─ ledger   files, commands, transcripts and outputs, from the tool calls (ledger.py)
      ├─ skills   the body of every skill the model loaded (tools/skill.py), up to SKILL_KEEP tokens each
      │           and SKILL_SHARE of CONTEXT_LIMIT for all of them (the latest loaded first)
      └─ blocks_for_cut(kept, transcript)
            the text blocks for the message that replaces a cut: the work ledger, the loaded skills,
            then the person's messages that `kept` no longer shows, oldest first

Every layer that removes messages (snip_compact, compact_history, reactive_compact, the fallback)
puts these blocks in the message that stands where the removed ones were, so every typed message
(within USER_MESSAGES_BUDGET) and every path the tools touched (within LEDGER_BUDGET) stays in the
history the model sees — after any number of compactions, and after a resume (the session log
records both; see session/log.py). Both budgets shrink with a small CONTEXT_LIMIT (to 40% and 10% of it;
the defaults, 20,000 and 4,000, are exactly that at the default 50,000) and with a small window (to 15%
and 5% of it; the skills to 5%), so what is kept never crowds out the conversation it is kept for. A cut
that must fit the window (room.py) gives them only the room it has left (`blocks_for_cut(room=…)`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from messages import STOP_MARKS, blocks
from .ledger import WorkLedger
from .tokens import estimate_text
from .user_messages import Typed, UserMessages

USER_MESSAGES_BUDGET, LEDGER_BUDGET = 20_000, 4_000     # tokens (defaults = config.py's)
USER_SHARE, LEDGER_SHARE = 0.4, 0.1      # the budgets are at most these shares of CONTEXT_LIMIT
SKILL_KEEP = 5_000                       # tokens of each loaded skill re-attached (default = config.py's)
SKILL_SHARE = 0.2                        # all re-attached skills together: at most this share of CONTEXT_LIMIT
USER_WINDOW_SHARE, LEDGER_WINDOW_SHARE, SKILL_WINDOW_SHARE = 0.15, 0.05, 0.05   # and of the window: at 4,096
                                         # tokens about 600, 200 and 200 (no change at 200,000)
MAX_SKILL_CHARS, MAX_SKILLS_KEPT = 256 * 1024, 200     # what a session log may bring back (a SKILL.md's bounds)
SKILL_LABEL = "[skill {name}, loaded earlier: its instructions, kept by s08 through compaction]\n"


class Continuity:
    def __init__(self, typed: UserMessages | None = None, ledger: WorkLedger | None = None,
                 user_budget: int = USER_MESSAGES_BUDGET, ledger_budget: int = LEDGER_BUDGET,
                 workspace: Path | None = None):
        self.typed, self.ledger = typed or UserMessages(), ledger or WorkLedger()
        self.user_budget, self.ledger_budget, self.workspace = user_budget, ledger_budget, workspace
        self.skills: dict[str, str] = {}         # name → body, in the order loaded
        self.skill_keep = SKILL_KEEP
        self.skills_budget = int(USER_MESSAGES_BUDGET / USER_SHARE * SKILL_SHARE)
        self.on_record: Callable[[dict], None] | None = None

    def use_settings(self, settings, limit: int | None = None, window: int | None = None) -> None:
        """The budgets, for CONTEXT_LIMIT or the `limit` in use (lower under a window the API stated), and
        for the `window` (a small one leaves little beside the system prompt, the tools and the answer)."""
        limit = limit or settings.context_limit
        window = window or getattr(settings, "context_window", None) or limit * 4
        self.user_budget = min(settings.user_messages_budget, int(limit * USER_SHARE), int(window * USER_WINDOW_SHARE))
        self.ledger_budget = min(settings.ledger_budget, int(limit * LEDGER_SHARE), int(window * LEDGER_WINDOW_SHARE))
        self.skill_keep = getattr(settings, "skill_keep", SKILL_KEEP)
        self.skills_budget = min(int(limit * SKILL_SHARE), int(window * SKILL_WINDOW_SHARE))

    def connect(self, on_record: Callable[[dict], None] | None) -> None:
        """Where records go (the session log)."""
        self.typed.on_record = self.ledger.on_record = self.on_record = on_record

    @property
    def turn(self) -> int:
        return len(self.typed)

    # ---- what happens --------------------------------------------------------------------------
    def typed_message(self, text: str) -> int:
        return self.typed.add(text)

    def tool_done(self, call: dict, content: str, is_error: bool, meta: dict | None = None) -> None:
        """One finished tool call; `meta` is what the tool said of it (bash: exit code, timeout, the file
        its output spilled to) — the ledger trusts that, never the output's text."""
        self.ledger.note_tool(call.get("name", ""), call.get("input"), content, is_error, self.turn, self.workspace,
                              meta)

    def skill_loaded(self, name: str, body: str) -> None:
        self.skills.pop(name, None)
        self.skills[name] = body
        if self.on_record is not None:
            self.on_record({"t": "skill", "name": name, "body": body})

    def skill_blocks(self, seen: str = "", budget: int | None = None) -> list[dict]:
        """One text block per loaded skill (its body up to skill_keep tokens), except those `seen` shows;
        all of them within skills_budget (or `budget`, when smaller), the latest loaded first (a model that
        loads every skill of a repository cannot fill the window with them); the rest are named in one line."""
        out, used, left = [], 0, []
        skills_budget = self.skills_budget if budget is None else min(budget, self.skills_budget)
        for name, body in reversed(self.skills.items()):
            kept = body.strip()
            if self.skill_keep <= 0 or (seen and json.dumps(kept[:2000], ensure_ascii=False)[1:-1] in seen):
                continue
            tokens = estimate_text(kept)
            keep = min(self.skill_keep, skills_budget - used)
            if keep < min(tokens, self.skill_keep) and keep < 200:
                left.append(name)
                continue
            if tokens > keep:
                kept = kept[:int(len(kept) * keep / tokens)] + \
                    f"\n[… cut at SKILL_KEEP={self.skill_keep:,} tokens; the skill tool loads it whole]"
            used += min(tokens, keep)
            out.append({"type": "text", "text": SKILL_LABEL.format(name=name) + kept})
        out.reverse()
        if left:
            out.append({"type": "text", "text": "[skills loaded earlier, not re-attached (their share of the "
                        f"context is full): {', '.join(list(reversed(left))[:20])}" + (f" and {len(left) - 20} more" if len(left) > 20
                        else "") + "; load one again with the skill tool]"})
        return out

    def saved(self, path: str, what: str) -> None:
        self.ledger.note_saved(path, what, self.turn)

    # ---- what a cut keeps ----------------------------------------------------------------------
    def blocks_for_cut(self, kept: list[dict], transcript: str, only_unseen: bool = False,
                       room: int | None = None) -> tuple[list[dict], list[int]]:
        """(blocks, moved): the ledger and the carried messages for a cut whose messages are saved in
        `transcript`; `moved` goes to `commit` once the cut is kept. `only_unseen` (a snip): the ledger
        lists only what `kept` does not show (a summary gets the whole ledger). `room`: all the blocks
        together within about these tokens (a cut that must fit a small window, room.py) — the ledger in
        at most a quarter, the person's messages in what is left (within their budget), then the skills."""
        seen = json.dumps(kept, ensure_ascii=False) if only_unseen else ""
        if room is None:
            carried, moved = self.typed.carry(kept, self.user_budget, transcript)
            ledger = self.ledger.render(self.ledger_budget, [transcript], self.turn, seen)
            skills = self.skill_blocks(seen)
        else:
            ledger = self.ledger.render(min(self.ledger_budget, room // 4), [transcript], self.turn, seen)
            left = room - (estimate_text(ledger) + 3 if ledger else 0)
            user_budget = max(1, min(self.user_budget, left - 3 * (len(self.typed) + 2)))   # 1: no room, yet
            carried, moved = self.typed.carry(kept, user_budget if self.user_budget > 0 else 0, transcript)
            # the line that counts the messages left out, and where they are whole
            left -= sum(estimate_text(b["text"]) + 3 for b in carried)
            skills = self.skill_blocks(seen, max(0, left))
        return ([{"type": "text", "text": ledger}] if ledger else []) + skills + carried, moved

    def commit(self, moved: list[int], transcript: str) -> None:
        for i in moved:
            self.typed.saved(i, transcript)
        self.saved(transcript, "transcript")

    # ---- the session log -----------------------------------------------------------------------
    def apply(self, record: dict) -> None:
        """Replay one logged record ("typed", "typed_saved", "rewound", "work" or a "kept" snapshot)."""
        kind = record.get("t")
        if kind in ("typed", "typed_saved", "rewound"):
            self.typed.apply(record)
        elif kind == "work":
            self.ledger.apply(record["w"])
        elif kind == "skill" and isinstance(record.get("name"), str) and isinstance(record.get("body"), str):
            self.skills.pop(record["name"], None)
            self.skills[record["name"]] = record["body"]
        elif kind == "kept":
            self.typed.entries = [Typed(t, s) for t, s in record["typed"]]
            self.ledger = WorkLedger.from_state(record["ledger"], self.ledger.on_record)
            skills = record.get("skills")
            if isinstance(skills, dict):
                self.skills = {k: v for k, v in list(skills.items())[:MAX_SKILLS_KEPT] if isinstance(k, str)
                               and isinstance(v, str) and len(v) <= MAX_SKILL_CHARS}

    def snapshot(self) -> dict:
        """The whole state as one record (written with a full snapshot of the history); messages /rewind
        dropped follow it as "rewound" records (rewound_records)."""
        return {"t": "kept", "typed": [[e.text, e.saved_in] for e in self.typed.entries],
                "ledger": self.ledger.state(), "skills": dict(self.skills)}

    def rewound_records(self) -> list[dict]:
        return [{"t": "rewound", "first": i + 1, "last": i + 1}
                for i, e in enumerate(self.typed.entries) if e.dropped]

    @classmethod
    def from_history(cls, messages: list[dict], workspace: Path | None = None) -> "Continuity":
        """For a history s08 did not record as it happened (a direct call of a layer, an old session
        log): every user text block counts as typed, every answered tool call goes into the ledger."""
        new = cls(workspace=workspace)
        calls = {}
        for m in messages:
            for b in blocks(m):
                if m.get("role") == "assistant" and b.get("type") == "tool_use":
                    calls[b.get("id")] = b
                elif m.get("role") == "user" and b.get("type") == "text" and b.get("text", "").strip() \
                        and b["text"] not in STOP_MARKS:
                    new.typed.entries.append(Typed(b["text"]))
                elif b.get("type") == "tool_result" and b.get("tool_use_id") in calls:
                    content = b.get("content")
                    new.tool_done(calls[b["tool_use_id"]], content if isinstance(content, str) else "",
                                  bool(b.get("is_error")))
        return new
