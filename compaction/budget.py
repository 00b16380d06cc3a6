"""Layer 1 — tool_result_budget: outputs too large for the context go to disk.

    one output > PERSIST_THRESHOLD chars          ─┐
    the latest round's outputs > ROUND_BUDGET     ─┴→ .task_outputs/<session>-NNN-<tool>.txt
         (largest first, until the round fits)        the message keeps <persisted-output>:
                                                      path, size, head+tail preview, how to read more

Files are created exclusively, so no id — however odd or repeated — overwrites
another output. Results already persisted (by this layer or by the bash tool's
own spill) are left alone. Results of PRESERVE_RESULT_TOOLS count against the
round budget but are not chosen to be persisted for it (read_file pages itself).

The layer is ToolResultBudget (settings: BudgetSettings); tool_result_budget and
persist_outputs (which also returns the files written) are the same work as plain functions.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from config import PREVIEW_CHARS
from events import Compaction, CompactionKind, Emit, ignore
from storage import PERSISTED_OPEN, TASK_OUTPUTS_DIR, persisted_block, relative, write_output
from .boundaries import replace_blocks, result_text, tool_names
from .layer import LayerContext, SettingsLayer

PREVIEW_OVERHEAD = 600          # chars of the <persisted-output> frame around the preview


@dataclass(frozen=True)
class BudgetSettings:
    """PERSIST_THRESHOLD, ROUND_BUDGET, PREVIEW_CHARS, PRESERVE_RESULT_TOOLS (defaults = config.py's)."""
    persist_threshold: int = 30_000
    round_budget: int = 60_000
    preview_chars: int = PREVIEW_CHARS
    preserve: frozenset = frozenset({"read_file"})

    @classmethod
    def from_settings(cls, settings) -> "BudgetSettings":
        return cls(settings.persist_threshold, settings.round_budget, settings.preview_chars,
                   settings.preserved_tools)


DEFAULTS = BudgetSettings()


class ToolResultBudget(SettingsLayer):
    """The layer: thresholds scaled down under a small window; the files it wrote go into the work
    ledger; only what changed since its last look is looked at (the index's "budget" mark)."""
    settings_class = BudgetSettings
    name: ClassVar[CompactionKind] = CompactionKind.TOOL_RESULT_BUDGET


    def __call__(self, messages: list[dict], context: LayerContext) -> list[dict]:
        s, w, index = self.settings, context.window, context.index
        out, paths = persist_outputs(messages, w.persist_threshold(s.persist_threshold),
                                     w.round_budget(s.round_budget), s.preview_chars, preserve=s.preserve,
                                     workspace=context.workspace, start=index.marks.get("budget", 0),
                                     emit=context.emit)
        for path in paths:
            context.continuity.saved(relative(context.workspace, path), "output")
        index.sync(out)
        index.marks["budget"] = len(out)
        return out


def _persist(workspace: Path, block: dict, text: str, preview_chars: int, tool: str = "output") -> tuple[dict, Path]:
    path = write_output(workspace, tool, text)
    half = preview_chars // 2
    head, tail = text[:half], text[-half:] if len(text) > half else ""
    preview = persisted_block(relative(workspace, path), len(text), text.count("\n") + 1, head, tail)
    return {**block, "content": preview}, path


def tool_result_budget(messages: list[dict], threshold: int = DEFAULTS.persist_threshold,
                       round_budget: int = DEFAULTS.round_budget, preview_chars: int = DEFAULTS.preview_chars, *,
                       preserve: frozenset = DEFAULTS.preserve, workspace: Path | None = None,
                       start: int = 0, emit: Emit = ignore) -> list[dict]:
    """persist_outputs without the paths (for callers that do not keep a ledger)."""
    return persist_outputs(messages, threshold, round_budget, preview_chars, preserve=preserve,
                           workspace=workspace, start=start, emit=emit)[0]


def _choose(messages: list[dict], threshold: int, round_budget: int, preview_chars: int, preserve: frozenset,
            start: int) -> dict[tuple[int, int], str]:
    """(message, block) → text of every output to persist."""
    names: dict[str, str] | None = None
    chosen: dict[tuple[int, int], str] = {}
    last_round = len(messages) - 1
    for i in range(max(0, min(start, last_round)), len(messages)):
        m = messages[i]
        if m.get("role") != "user" or isinstance(m.get("content"), str):
            continue
        sizes, total = {}, 0
        for j, b in enumerate(m["content"]):
            if b.get("type") != "tool_result":
                continue
            text = result_text(b)
            total += len(text)
            if text.startswith(PERSISTED_OPEN) or len(text) <= preview_chars + PREVIEW_OVERHEAD:
                continue          # already on disk, or a preview would not be smaller
            sizes[j] = text
            if len(text) > threshold:
                chosen[(i, j)] = text
        if i == last_round:
            for j, text in sorted(sizes.items(), key=lambda kv: -len(kv[1])):
                if total <= round_budget:
                    break
                names = tool_names(messages) if names is None else names
                if (i, j) not in chosen and names.get(m["content"][j].get("tool_use_id")) in preserve:
                    continue
                chosen[(i, j)] = text
                total -= len(text)
    return chosen


def persist_outputs(messages: list[dict], threshold: int, round_budget: int, preview_chars: int, *,
                    preserve: frozenset, workspace: Path | None = None, start: int = 0,
                    emit: Emit = ignore) -> tuple[list[dict], list[Path]]:
    """(history in which no tool output is too large, the files written); never mutates `messages`.
    `start`: the messages before it were already put through this layer with the same settings (the
    pipeline's index knows), so only the rest — and always the latest round — is looked at."""
    workspace = Path(workspace or Path.cwd())
    chosen = _choose(messages, threshold, round_budget, preview_chars, preserve, start)
    if not chosen:
        return messages, []
    paths, chars, names = [], 0, tool_names(messages)
    changes: dict[int, dict[int, dict]] = {}
    outputs = []                          # for the session log's index of saved outputs
    for (i, j), text in chosen.items():
        block = messages[i]["content"][j]
        tool = names.get(block.get("tool_use_id"), "output")
        new_block, path = _persist(workspace, block, text, preview_chars, tool)
        changes.setdefault(i, {})[j] = new_block
        paths.append(path)
        chars += len(text)
        outputs.append({"path": relative(workspace, path), "tool_use_id": block.get("tool_use_id", ""),
                        "tool": tool, "size": len(text), "message": i})
    out = replace_blocks(messages, changes)
    where = relative(workspace, paths[0]) if len(paths) == 1 else f"{TASK_OUTPUTS_DIR}/"
    emit(Compaction(CompactionKind.TOOL_RESULT_BUDGET, f"persisted {len(paths)} output{'s' * (len(paths) > 1)} "
                    f"({chars:,} chars) → {where}", {"paths": [str(p) for p in paths], "outputs": outputs}))
    return out, paths
