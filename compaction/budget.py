"""Layer 1 — tool_result_budget: outputs too large for the context go to disk.

    one output > PERSIST_THRESHOLD chars          ─┐
    the latest round's outputs > ROUND_BUDGET     ─┴→ .task_outputs/tool-results/<id>.txt
         (largest first, until the round fits)        the message keeps <persisted-output>:
                                                      path, size, head+tail preview, how to read more

Files are created exclusively, so no id — however odd or repeated — overwrites
another output. Results already persisted (by this layer or by the bash tool's
own spill) are left alone. Results of PRESERVE_RESULT_TOOLS count against the
round budget but are not chosen to be persisted for it (read_file pages itself).
"""

from __future__ import annotations

from pathlib import Path

from config import Settings
from events import Compaction, Emit, ignore
from storage import TASK_OUTPUTS_DIR, persisted_block, relative, write_new_text
from .boundaries import replace_blocks, result_text, tool_names

D = Settings()
PERSISTED_TAG = "<persisted-output>"
PREVIEW_OVERHEAD = 600          # chars of the <persisted-output> frame around the preview


def _persist(workspace: Path, block: dict, text: str, preview_chars: int) -> tuple[dict, Path]:
    path = write_new_text(workspace / TASK_OUTPUTS_DIR, block.get("tool_use_id", "output"), ".txt", text)
    half = preview_chars // 2
    head, tail = text[:half], text[-half:] if len(text) > half else ""
    preview = persisted_block(relative(workspace, path), len(text), text.count("\n") + 1, head, tail)
    return {**block, "content": preview}, path


def tool_result_budget(messages: list[dict], threshold: int = D.persist_threshold,
                       round_budget: int = D.round_budget, preview_chars: int = D.preview_chars, *,
                       preserve: frozenset = D.preserved_tools, workspace: Path | None = None,
                       start: int = 0, emit: Emit = ignore) -> list[dict]:
    """Return a history in which no tool output is too large; never mutates `messages`. `start`: the
    messages before it were already put through this layer with the same settings (the pipeline's
    index knows), so only the rest — and always the latest round — is looked at."""
    workspace = Path(workspace or Path.cwd())
    names: dict[str, str] | None = None
    chosen: dict[tuple[int, int], str] = {}          # (message, block) → text to persist
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
            if text.startswith(PERSISTED_TAG) or len(text) <= preview_chars + PREVIEW_OVERHEAD:
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
    if not chosen:
        return messages
    out, changes, paths, chars = list(messages), {}, [], 0
    for (i, j), text in chosen.items():
        new_block, path = _persist(workspace, messages[i]["content"][j], text, preview_chars)
        changes.setdefault(i, {})[j] = new_block
        paths.append(path)
        chars += len(text)
    for i, blocks_changed in changes.items():
        out[i] = replace_blocks(messages[i], blocks_changed)
    where = relative(workspace, paths[0]) if len(paths) == 1 else f"{TASK_OUTPUTS_DIR}/"
    emit(Compaction("tool_result_budget", f"persisted {len(paths)} output{'s' * (len(paths) > 1)} "
                                          f"({chars:,} chars) → {where}", {"paths": [str(p) for p in paths]}))
    return out
