"""Layer 2 — snip_compact: past SNIP_MAX_MESSAGES, drop the middle of the history.

    [0 1 2] [3 … t-1] [t … n-1]   →   [0 1 2] [snipped N messages → .transcripts/…] [t … n-1]
     head    snipped    tail

The seed's arithmetic (keep 3 at the head, the rest from the tail), with two
changes. It cuts down to SNIP_TARGET_MESSAGES (20), well below the trigger
(50), so it fires once every ~30 messages instead of every turn (each snip
rewrites the prompt and breaks its cache; bench/cost.py chose the numbers). And nothing is lost: the snipped messages are
saved to a transcript of their own (one snip, one file, its header first: storage/) that the marker names, and what the cut hides rides along
in the marker (continuity.py): every message the person typed that the rest
of the history no longer shows, and the work ledger of the snipped part. The
snip must save tokens by itself; what rides along is the price of keeping
the person's words. Boundaries move, as in the seed, so no tool_use/tool_result
pair is split.

The layer is SnipCompact (settings: SnipSettings); snip_to_transcript returns the
transcript it wrote, so the caller keeps it (snip_compact drops it).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from events import Compaction, CompactionKind, Emit, ignore
from storage import SNIPPED, relative, reserve_transcript, transcript_header, write_transcript
from storage.safe import remove
from .boundaries import safe_cuts
from .continuity import Continuity
from .layer import LayerContext, SettingsLayer
from .markers import SNIP_PREFIX
from .tokens import estimate_tokens

KEEP_HEAD = 3


@dataclass(frozen=True)
class SnipSettings:
    """SNIP_MAX_MESSAGES, SNIP_TARGET_MESSAGES (defaults = config.py's)."""
    max_messages: int = 50
    target_messages: int = 20

    @classmethod
    def from_settings(cls, settings) -> "SnipSettings":
        return cls(settings.snip_max_messages, settings.snip_target_messages)


DEFAULTS = SnipSettings()


class SnipCompact(SettingsLayer):
    """The layer: writes each snip to a transcript of its own and leaves its path in the context."""
    settings_class = SnipSettings
    name: ClassVar[CompactionKind] = CompactionKind.SNIP_COMPACT


    def __call__(self, messages: list[dict], context: LayerContext) -> list[dict]:
        out, path = snip_to_transcript(messages, self.settings.max_messages, self.settings.target_messages,
                                       workspace=context.workspace, transcript=context.snip_transcript,
                                       continuity=context.continuity, emit=context.emit)
        if path is not None:
            context.snip_transcript = path
        return out


def snip_compact(messages: list[dict], max_messages: int = DEFAULTS.max_messages,
                 target_messages: int | None = None, keep_head: int = KEEP_HEAD, *,
                 workspace: Path | None = None, transcript: Path | None = None,
                 continuity: Continuity | None = None, emit: Emit = ignore) -> list[dict]:
    """snip_to_transcript without the path."""
    return snip_to_transcript(messages, max_messages, target_messages, keep_head, workspace=workspace,
                              transcript=transcript, continuity=continuity, emit=emit)[0]


def snip_to_transcript(messages: list[dict], max_messages: int = DEFAULTS.max_messages,
                       target_messages: int | None = None, keep_head: int = KEEP_HEAD, *,
                       workspace: Path | None = None, transcript: Path | None = None,
                       continuity: Continuity | None = None, emit: Emit = ignore,
                       trigger: str = "") -> tuple[list[dict], Path | None]:
    """(the history with its middle snipped if it has more than `max_messages` messages, the transcript
    the snipped messages were appended to — None when nothing was snipped)."""
    n = len(messages)
    if n <= max_messages:
        return messages, None
    target = min(target_messages or DEFAULTS.target_messages, max_messages)
    head_end, tail_start = keep_head, n - max(1, target - keep_head)
    safe = safe_cuts(messages)
    while head_end < n and not safe[head_end]:
        head_end += 1               # the head ends in a tool_use: keep its results too
    while tail_start > head_end and not safe[tail_start]:
        tail_start -= 1             # the tail starts with results: keep their tool_use too
    if head_end >= tail_start:
        return messages, None
    snipped = messages[head_end:tail_start]
    if all(_is_marker(m) for m in snipped):
        return messages, None       # only an earlier snip's marker: cutting it again gains nothing
    workspace = Path(workspace or Path.cwd())
    path = reserve_transcript(workspace, SNIPPED)       # one snip, one file (`transcript`: the last one)
    shown = relative(workspace, path)
    marker = {"type": "text", "text": f"{SNIP_PREFIX}{len(snipped)} messages → {shown}]"}
    kept = messages[:head_end] + [{"role": "user", "content": [marker]}] + messages[tail_start:]
    if estimate_tokens(kept) >= estimate_tokens(messages):
        remove(path)                       # nothing gained: keep the history as it is
        return messages, None
    keep = continuity or Continuity.from_history(messages, workspace)
    extra, moved = keep.blocks_for_cut(kept, shown, only_unseen=True)    # what the cut hides, riding along
    out = messages[:head_end] + [{"role": "user", "content": [marker] + extra}] + messages[tail_start:]
    header = transcript_header(workspace, SNIPPED, trigger or f"{n} messages > {max_messages}",
                               estimate_tokens(messages), estimate_tokens(out), head_end, tail_start, n)
    write_transcript(workspace, snipped, header, path)
    keep.commit(moved, shown)
    emit(Compaction(CompactionKind.SNIP_COMPACT, f"snipped {len(snipped)} messages → {shown}",
                    {"path": str(path), "count": len(snipped), "header": header}))
    return out, path


def _is_marker(message: dict) -> bool:
    content = message.get("content")
    return (message.get("role") == "user" and isinstance(content, list) and bool(content)
            and isinstance(content[0], dict) and str(content[0].get("text", "")).startswith(SNIP_PREFIX))
