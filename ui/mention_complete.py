"""Tab completion of `@path` mentions: the files and folders of the workspace, as read_file sees them.

Only names inside the workspace are offered (a `..` or an absolute path outside it completes to
nothing), hidden entries only when the typed part starts with a dot, folders end in `/`, a name with
spaces is offered quoted (`@"my notes.md"`), and at most MOST entries are listed, so a huge folder never
slows the prompt.
"""

from __future__ import annotations

import os
from pathlib import Path

from prompt_toolkit.completion import Completer, Completion

MOST = 200
SKIP = {".git", ".sessions", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", "node_modules"}


class MentionCompleter(Completer):
    def __init__(self, workspace: Path):
        self.root = Path(workspace).resolve()

    def get_completions(self, document, complete_event):
        text = document.text_before_cursor
        at = text.rfind("@")
        if at < 0 or (at > 0 and not text[at - 1].isspace()):
            return
        typed = text[at + 1:]
        if any(c.isspace() for c in typed):
            return
        folder_part, _, prefix = typed.rpartition("/")
        folder = (self.root / folder_part).resolve() if folder_part else self.root
        if folder != self.root and self.root not in folder.parents:
            return
        try:
            with os.scandir(folder) as found:
                entries = sorted((e for _, e in zip(range(MOST * 5), found)), key=lambda e: e.name)
        except OSError:
            return
        shown = 0
        for entry in entries:
            name = entry.name
            if not name.startswith(prefix) or name in SKIP or (name.startswith(".") and not prefix.startswith(".")):
                continue
            try:
                is_dir = entry.is_dir()
            except OSError:
                continue
            path = (f"{folder_part}/{name}" if folder_part else name) + ("/" if is_dir else "")
            if any(c.isspace() for c in path):
                path = f'"{path}"'                      # @"a b.txt": the form a mention with spaces takes
            yield Completion(path, start_position=-len(typed), display=name + ("/" if is_dir else ""))
            shown += 1
            if shown >= MOST:
                return
