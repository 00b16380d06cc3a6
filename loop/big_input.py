"""An input too large for the context is stored on disk; the model gets a preview and the path.

A single paste bigger than half the model's window (CONTEXT_WINDOW) could never be answered: the
current request is kept verbatim through compaction, so every later call would be refused as too
long until /clear. Instead the text goes to `.task_outputs/<session>-NNN-input.txt` (owner-only,
never overwritten) and the message carries its size, its path, how to read it, and its head and
tail. If the disk refuses the file, only the head and tail are sent, and the message says so.
"""

from __future__ import annotations

from pathlib import Path

from compaction.tokens import estimate_text
from config import PREVIEW_CHARS
from events import Notice
from storage import relative, write_output

INPUTS_DIR = ".task_outputs/inputs"           # where older versions saved them (s08 clean still looks there)
MAX_SHARE_OF_WINDOW = 0.5


def fit_input(text: str, window: int, workspace: Path, emit) -> str:
    """`text`, or — when it is too large for the context (`window` tokens) — a preview that points at
    a saved copy."""
    limit = int(window * MAX_SHARE_OF_WINDOW)
    if len(text) <= limit // 2:                     # no estimate can make this one too large
        return text
    tokens = estimate_text(text)
    if tokens <= limit:
        return text
    half = PREVIEW_CHARS // 2
    try:
        saved = relative(workspace, write_output(workspace, "input", text))
        where = (f"It is saved in full at: {saved}\nRead it in pieces with read_file(path=\"{saved}\", "
                 "offset=<first line>, limit=<lines>), or search it with bash (grep, head, sed -n).")
        notice = f"[your input ({len(text):,} chars, ~{tokens:,} tokens) is too large for the context; saved to " \
                 f"{saved} and sent as a preview with its path]"
    except OSError as exc:
        where = f"It could not be saved ({exc.strerror or exc}): only its head and tail are here."
        notice = f"[your input ({len(text):,} chars) is too large for the context and could not be saved " \
                 f"({exc.strerror or exc}); only its head and tail were sent]"
    emit(Notice(notice, "warning"))
    return "\n".join([
        "<large-input>",
        f"The person's input was too large to send whole ({len(text):,} chars, about {tokens:,} tokens; the "
        f"context window is {window:,} tokens). {where}",
        "", f"Preview (first {half:,} chars):", text[:half],
        f"... [{max(0, len(text) - 2 * half):,} chars omitted] ...",
        f"Preview (last {half:,} chars):", text[-half:],
        "</large-input>",
    ])
