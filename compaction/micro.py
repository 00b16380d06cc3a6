"""Layer 3 — micro_compact: old tool results become one-line placeholders.

    tool_result (1,800 chars of `ls -R` output, 6 results ago)  →  "[Previous: used bash]"

The KEEP_RECENT newest results stay whole, and so does the recent work (recent.py: the newest results
the model has seen, up to RECENT_WORK of the limit in tokens); results of PRESERVE_RESULT_TOOLS
(read_file by default: reference material the model would otherwise read
again) are kept; results of 100 chars or less are not worth clearing; and
results the model has not seen yet — the round after the last assistant
message — are never touched. A placeholder for a persisted output keeps the
file's path, so the model can still read it.

Clearing rewrites the prompt from the first cleared result on, and every
token after it must be written to the prompt cache again. So it waits until
the results it may clear add up to MICRO_CLEAR_AT_LEAST tokens, then clears
them all at once: most turns leave the cached prefix byte-identical. With
MICRO_CLEAR_AT_LEAST=0 it clears every turn, as the tutorial does.

The layer is MicroCompact (settings: MicroSettings), which asks the pipeline's index
before it walks the history; micro_compact is the same work as a plain function.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from events import Compaction, CompactionKind, Emit, ignore
from storage import PERSISTED_OPEN, SAVED_TO, output_path_shape, relative, write_output
from .boundaries import replace_blocks, result_text, tool_names, unseen_start
from .layer import LayerContext, SettingsLayer
from .markers import MIN_CHARS, PLACEHOLDER_PREFIX, placeholder
from .recent import RECENT_WORK, recent_budget, recent_start
from .tokens import estimate_text



@dataclass(frozen=True)
class MicroSettings:
    """KEEP_RECENT, PRESERVE_RESULT_TOOLS, MICRO_CLEAR_AT_LEAST, RECENT_WORK (defaults = config.py's)."""
    keep_recent: int = 3
    preserve: frozenset = frozenset({"read_file"})
    clear_at_least: int = 20_000
    recent_work: float = RECENT_WORK

    @classmethod
    def from_settings(cls, settings) -> "MicroSettings":
        return cls(settings.keep_recent, settings.preserved_tools, settings.micro_clear_at_least,
                   settings.recent_work)


DEFAULTS = MicroSettings()


class MicroCompact(SettingsLayer):
    """The layer: asks the index first (O(the newest few results)), and walks the history only when
    a batch is due; on a cold turn clears whatever the batch size."""
    settings_class = MicroSettings
    name: ClassVar[CompactionKind] = CompactionKind.MICRO_COMPACT


    def __call__(self, messages: list[dict], context: LayerContext) -> list[dict]:
        s = self.settings
        at_least = 0 if context.cold else s.clear_at_least
        count, saving = context.index.clearable(s.keep_recent, unseen_start(messages))
        budget = recent_budget(s.recent_work, context.window.limit)
        if not count or saving < at_least + budget:     # (up to `budget` of it may be the recent work)
            return messages             # what micro_compact would decide, without walking the history
        keep_from = recent_start(messages, budget)
        return micro_compact(messages, s.keep_recent, s.preserve, clear_at_least=at_least, emit=context.emit,
                             keep_from=keep_from)


def clearable_results(messages: list[dict], keep_recent: int = DEFAULTS.keep_recent,
                      preserve: frozenset = DEFAULTS.preserve, min_chars: int = MIN_CHARS, keep_from: int | None = None):
    """(message index, block index, tool name, text) of every result micro_compact may clear (none from
    `keep_from` on: the recent work)."""
    names, seen_before = tool_names(messages), unseen_start(messages)
    if keep_from is not None:
        seen_before = min(seen_before, keep_from)
    results = [(i, j, b) for i, m in enumerate(messages) if m.get("role") == "user"
               and not isinstance(m.get("content"), str) for j, b in enumerate(m["content"])
               if b.get("type") == "tool_result"]
    older = results[:-keep_recent] if keep_recent > 0 else results
    for i, j, b in older:
        name = names.get(b.get("tool_use_id"), "tool")
        text = result_text(b)
        if i >= seen_before or name in preserve or len(text) <= min_chars or text.startswith(PLACEHOLDER_PREFIX):
            continue
        if not isinstance(b.get("content"), (str, list)):
            continue
        yield i, j, name, text


def micro_compact(messages: list[dict], keep_recent: int = DEFAULTS.keep_recent,
                  preserve: frozenset = DEFAULTS.preserve, min_chars: int = MIN_CHARS, *,
                  clear_at_least: int = DEFAULTS.clear_at_least, emit: Emit = ignore,
                  keep_from: int | None = None) -> list[dict]:
    """Return the history with old, large tool results replaced by placeholders — once they are worth
    at least `clear_at_least` tokens together; never mutates. Nothing from `keep_from` on is cleared."""
    changes: dict[int, dict[int, dict]] = {}
    saved = 0
    for i, j, name, text in clearable_results(messages, keep_recent, preserve, min_chars, keep_from):
        new_text = placeholder(name, text)
        if len(new_text) >= len(text):
            continue
        changes.setdefault(i, {})[j] = {**messages[i]["content"][j], "content": new_text}
        saved += estimate_text(text) - estimate_text(new_text)
    if not changes or saved < clear_at_least:
        return messages
    out = replace_blocks(messages, changes)
    count = sum(len(c) for c in changes.values())
    emit(Compaction(CompactionKind.MICRO_COMPACT, f"cleared {count} old tool result{'s' * (count > 1)} "
                    f"(~{saved:,} tokens)", {"count": count, "tokens": saved}))
    return out


def saved_pointer(name: str, text: str) -> str:
    """The pointer `clear_saving` leaves for a result, with its saved copy's path as it will look."""
    return placeholder(name, text if text.startswith(PERSISTED_OPEN) else f"{SAVED_TO}{output_path_shape(name)}")


def clear_saving(messages: list[dict], workspace: Path, only=None) -> tuple[list[dict], int, list[dict]]:
    """(history, count cleared, outputs): every result the model has seen (over MIN_CHARS, whatever its tool) —
    or those of them at the (message, block) positions in `only` — saved to
    .task_outputs/ and cleared to a placeholder naming the file — a persisted output (tool_result_budget's,
    the bash tool's spill) keeps the name of the file it is in. A result that cannot be written stays whole.
    `outputs` lists what was written: path, tool_use_id, tool, size (the session index's record)."""
    changes: dict[int, dict[int, dict]] = {}
    outputs: list[dict] = []
    for i, j, name, text in clearable_results(messages, 0, frozenset()):
        if only is not None and (i, j) not in only:
            continue
        new_text = placeholder(name, text)
        if not text.startswith(PERSISTED_OPEN):      # on disk already only as a persisted output
            try:
                path = relative(workspace, write_output(workspace, name, text))
            except OSError:
                continue
            block = messages[i]["content"][j]
            outputs.append({"path": path, "tool_use_id": block.get("tool_use_id", ""), "tool": name,
                            "size": len(text)})
            new_text = placeholder(name, f"{SAVED_TO}{path}")
        changes.setdefault(i, {})[j] = {**messages[i]["content"][j], "content": new_text}
    if not changes:
        return messages, 0, []
    return replace_blocks(messages, changes), sum(len(c) for c in changes.values()), outputs
