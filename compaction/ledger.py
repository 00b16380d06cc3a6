"""The work ledger: what the session did, kept by s08 from the tool calls themselves.

    read_file / write_file / edit_file   the path (relative to the workspace), what was done to it last, when
    bash                                 the command and how it ended; the last COMMANDS_KEPT are kept
    mcp__SERVER__TOOL                    an MCP call: its name and arguments, as a command, and how it ended
    transcripts, persisted outputs       every file s08 saved for the session (from the layers and the tools)

"When" is the turn: the number of the person's message the work answered. The ledger never reads
the summary, so a vague summary cannot make it forget. After a cut its rendering stands beside the
summary (or in the snip marker), in at most LEDGER_BUDGET tokens: past that, the oldest outputs and
then the oldest files collapse into counts per folder — they never silently vanish. Every change is
one small record (`{"t": "work", "w": {...}}` in the session log), so a resume rebuilds it exactly.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable

from storage import relative
from .tokens import estimate_text

FILE_ACTIONS = {"read_file": "read", "write_file": "written", "edit_file": "edited"}
COMMANDS_KEPT = 10
COMMAND_CHARS = 160
CUT_HEADER = ("Work ledger of the part cut out here (kept by s08 from the tool calls; what the rest of the "
              "history shows is not repeated; turn = the user's message number):")
HEADER = "Work ledger (kept by s08 from the tool calls, not from a summary; turn = the user's message number):"


def _relative(workspace: Path | None, path: str) -> str:
    """A tool call's path as the ledger keeps it: workspace-relative and normalised."""
    return os.path.normpath(relative(workspace, Path(path).expanduser()))


def _outcome(content: str, is_error: bool, meta: dict) -> str:
    """How a command ended, from what the bash tool reported (never from the output, which a command
    controls), else from the harness's own wording of the result."""
    if meta.get("timed_out"):
        return f"timed out after {meta.get('timeout', 0):g}s"
    code = meta.get("exit_code")
    if isinstance(code, int) and not isinstance(code, bool):
        return f"exit {code}" if code >= 0 else f"killed by signal {-code}"
    if content.startswith(("Interrupted by the user", "Not run: the user interrupted")):
        return "interrupted"
    if content.startswith("Refused:"):
        return "refused"
    if content.startswith("The user declined"):         # approvals.Refusal: the person said no
        return "declined by you"
    if content.startswith("Not run: this"):             # approvals.Refusal: nobody could be asked (-p)
        return "not run: needs approval"
    return "error" if is_error else "done"


def _folder(path: str) -> str:
    return (os.path.dirname(path) or ".") + "/"


def _top(path: str) -> str:
    parts = Path(path).parts
    return (parts[0] + "/") if len(parts) > 1 else "./"


def _turns(turns: list[int]) -> str:
    low, high = min(turns), max(turns)
    return f"turn {low}" if low == high else f"turns {low}–{high}"


class WorkLedger:
    def __init__(self, on_record: Callable[[dict], None] | None = None):
        self.files: dict[str, tuple[str, int]] = {}     # path → (last action, turn); order = least recent first
        self.commands: list[tuple[str, str, int]] = []  # (command, outcome, turn), the last COMMANDS_KEPT
        self.command_count = 0
        self.saved: dict[str, tuple[str, int]] = {}     # path → ("transcript" | "output", turn), in order
        self.on_record = on_record

    # ---- recording ---------------------------------------------------------------------------
    def apply(self, w: dict) -> None:
        """Apply one entry (also used to replay the session log)."""
        kind, turn = w.get("k"), int(w.get("turn", 0))
        if kind == "file":
            self.files.pop(w["path"], None)
            self.files[w["path"]] = (w["do"], turn)
        elif kind == "cmd":
            self.commands = (self.commands + [(w["cmd"], w["end"], turn)])[-COMMANDS_KEPT:]
            self.command_count += 1
        elif kind == "saved" and w["path"] not in self.saved:
            self.saved[w["path"]] = (w["what"], turn)

    def record(self, w: dict) -> None:
        self.apply(w)
        if self.on_record is not None:
            self.on_record({"t": "work", "w": w})

    def note_tool(self, name: str, args, content: str, is_error: bool, turn: int,
                  workspace: Path | None = None, meta: dict | None = None) -> None:
        """What one finished tool call did (its name and arguments, the result it returned, and what the
        tool reported in `meta`)."""
        args, meta = (args if isinstance(args, dict) else {}), (meta or {})
        path = args.get("path")
        if name in FILE_ACTIONS and isinstance(path, str) and path.strip() and not is_error:
            self.record({"k": "file", "path": _relative(workspace, path), "do": FILE_ACTIONS[name], "turn": turn})
        command = args.get("command")
        if name == "bash" and isinstance(command, str) and command.strip():
            flat = " ".join(command.split())
            flat = flat if len(flat) <= COMMAND_CHARS else flat[:COMMAND_CHARS - 1] + "…"
            self.record({"k": "cmd", "cmd": flat, "end": _outcome(content, is_error, meta), "turn": turn})
        if name.startswith("mcp__"):       # an MCP tool call: its name and arguments, as a command
            flat = name + " " + " ".join(json.dumps(args, ensure_ascii=False, sort_keys=True).split())
            flat = flat if len(flat) <= COMMAND_CHARS else flat[:COMMAND_CHARS - 1] + "…"
            self.record({"k": "cmd", "cmd": flat, "end": _outcome(content, is_error, meta) if is_error else "ok",
                         "turn": turn})
        if isinstance(meta.get("saved"), str) and meta["saved"]:
            self.note_saved(meta["saved"], "output", turn)

    def note_saved(self, path: str, what: str, turn: int) -> None:
        """A transcript or a persisted output s08 wrote for this session."""
        if path not in self.saved:
            self.record({"k": "saved", "path": path, "what": what, "turn": turn})

    def transcripts(self) -> list[str]:
        return [p for p, (what, _) in self.saved.items() if what == "transcript"]

    def state(self) -> dict:
        return {"files": [[p, a, t] for p, (a, t) in self.files.items()], "commands": [list(c) for c in self.commands],
                "count": self.command_count, "saved": [[p, w, t] for p, (w, t) in self.saved.items()]}

    @staticmethod
    def state_ok(state) -> bool:
        """Is `state` what `state()` writes? (A session log is read back from disk: anything may be there.)"""
        def rows(key: str, kinds: tuple) -> bool:
            value = state.get(key, [])
            return isinstance(value, list) and all(
                isinstance(row, list) and len(row) == len(kinds) and all(isinstance(x, k) and not isinstance(x, bool)
                                                                         for x, k in zip(row, kinds))
                for row in value)
        return (isinstance(state, dict) and rows("files", (str, str, int)) and rows("commands", (str, str, int))
                and rows("saved", (str, str, int)) and isinstance(state.get("count", 0), int))

    @classmethod
    def from_state(cls, state: dict, on_record=None) -> "WorkLedger":
        ledger = cls(on_record)
        ledger.files = {p: (a, int(t)) for p, a, t in state.get("files", [])}
        ledger.commands = [(c, e, int(t)) for c, e, t in state.get("commands", [])][-COMMANDS_KEPT:]
        ledger.command_count = int(state.get("count", len(ledger.commands)))
        ledger.saved = {p: (w, int(t)) for p, w, t in state.get("saved", [])}
        return ledger

    def __bool__(self) -> bool:
        return bool(self.files or self.commands or self.saved)

    # ---- rendering ---------------------------------------------------------------------------
    def _view(self, pending: tuple, seen: str) -> tuple:
        """What to list, filtered once: (files newest first, commands, transcripts, outputs newest first).
        `seen` (the text a snip keeps anyway) is searched once per entry, not once per rendering tried."""
        files = [(p, v) for p, v in reversed(self.files.items()) if p not in seen]
        commands = [c for c in self.commands if c[0] not in seen]
        transcripts = [(p, t) for p, (w, t) in self.saved.items() if w == "transcript" and p not in seen]
        transcripts += [(p, t) for p, t in pending if p not in seen]
        outputs = [(p, ("output", t)) for p, (w, t) in self.saved.items() if w == "output" and p not in seen][::-1]
        return files, commands, transcripts, outputs

    def _text(self, view: tuple, cut: bool, files_shown: int, group, outputs_shown: int, commands_shown: int,
              transcripts_shown: int) -> str:
        files, commands, transcripts, outputs = view
        lines = [CUT_HEADER if cut else HEADER]
        if files:
            lines.append("Files (last action, turn), newest first:")
            lines += [f"- {p}: {a}, turn {t}" for p, (a, t) in files[:files_shown]]
            lines += _groups(files[files_shown:], group, "older file")
        if commands:
            shown = commands[-commands_shown:] if commands_shown else []
            lines.append(f"Commands (the last {len(shown)} of {self.command_count}; how each ended, turn):")
            lines += [f"- `{c}`: {e}, turn {t}" for c, e, t in shown]
        if transcripts:
            hidden = max(0, len(transcripts) - transcripts_shown)
            listed = ", ".join(f"{p} (turn {t})" for p, t in transcripts[hidden:])
            lines.append("Transcripts of this session (the whole history at each cut, JSONL; read or grep them "
                         f"for any detail), oldest first: {listed}"
                         + (f"; and {hidden} older ones in .transcripts/, named in the older transcripts"
                            if hidden else ""))
        if outputs:
            lines.append("Outputs saved to disk, newest first: " + ", ".join(
                f"{p} (turn {t})" for p, (_, t) in outputs[:outputs_shown]))
            lines += _groups(outputs[outputs_shown:], _folder, "older output")
        return "\n".join(lines) if len(lines) > 1 else ""

    def render(self, budget: int, pending: list[str] | tuple = (), turn: int = 0, seen: str = "") -> str:
        """The ledger in at most about `budget` tokens (see the module docstring for what collapses), or
        "" when there is nothing to say. `pending`: transcripts of the cut being made, listed as if already
        recorded (at `turn`). `seen`: text the history keeps anyway — entries it names are left out."""
        if budget <= 0:
            return ""
        pending = tuple((p, turn) for p in dict.fromkeys(pending) if p and p not in self.saved)
        view, cut = self._view(pending, seen), bool(seen)
        files, outputs, transcripts = len(view[0]), len(view[3]), len(view[2])

        def fits(text: str) -> bool:
            return estimate_text(text) <= budget

        def most(limit: int, make) -> str | None:
            """The text for the largest n ≤ limit that fits (binary search), or None."""
            low, high, best = 0, limit, None
            while low <= high:
                mid = (low + high) // 2
                text = make(mid)
                if fits(text):
                    best, low = text, mid + 1
                else:
                    high = mid - 1
            return best

        whole = self._text(view, cut, files, _folder, outputs, COMMANDS_KEPT, transcripts)
        if fits(whole):
            return whole
        few = min(3, COMMANDS_KEPT)
        steps = (   # in order: give up outputs, then commands, then files (per folder, then per top folder)
            lambda n: self._text(view, cut, files, _folder, n, COMMANDS_KEPT, transcripts),
            lambda n: self._text(view, cut, files, _folder, 0, max(few, min(n, COMMANDS_KEPT)), transcripts),
            lambda n: self._text(view, cut, n, _folder, 0, few, transcripts),
            lambda n: self._text(view, cut, n, _top, 0, few, transcripts),
            lambda n: self._text(view, cut, 0, lambda _p: "", 0, few, max(1, min(n, transcripts))))
        for step in steps:
            text = most(max(files, outputs, transcripts, COMMANDS_KEPT), step)
            if text is not None:
                return text
        return self._counts(len(pending))

    def _counts(self, pending: int) -> str:
        """The last resort for a tiny budget: how much there is, and where to look."""
        outputs = sum(w == "output" for w, _ in self.saved.values())
        return (f"Work ledger: {len(self.files)} files, {self.command_count} commands, "
                f"{len(self.transcripts()) + pending} transcripts, {outputs} saved outputs (LEDGER_BUDGET is too "
                "small to list them; the transcripts in .transcripts/ hold everything)")


def _groups(entries: list, group, noun: str) -> list[str]:
    """Collapsed entries as one line per folder: "- src/: 7 older files (read 5, edited 2; turns 1–4)"."""
    folders: dict[str, list] = {}
    for path, (action, turn) in entries:
        folders.setdefault(group(path), []).append((action, turn))
    lines = []
    for folder, items in folders.items():
        actions: dict[str, int] = {}
        for action, _ in items:
            actions[action] = actions.get(action, 0) + 1
        what = ", ".join(f"{a} {n}" for a, n in actions.items())
        where = f"{folder}: " if folder else ""
        lines.append(f"- {where}{len(items)} {noun}{'s' * (len(items) > 1)} ({what}; {_turns([t for _, t in items])})")
    return lines
