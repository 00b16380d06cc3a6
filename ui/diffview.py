"""A file change as coloured lines: a new file's first lines, or a unified diff with line numbers.

Used under a write_file / edit_file line after it ran, and in the approval question before it runs.
Every line is cut to the width (never wrapped), so the numbers stay in one column.
"""

from __future__ import annotations

import difflib
import re

from rich.text import Text

from .sanitize import safe_line

NEW_FILE_LINES = 8
DIFF_CONTEXT = 2
HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")
STYLES = {"+": "green", "-": "red", " ": "dim"}


def _row(number: int | None, sign: str, text: str, width: int, indent: str) -> Text:
    line = Text().append(f"{indent}{'' if number is None else number:>5} {sign} ", style="dim")
    line.append(safe_line(text), style=STYLES[sign])
    line.truncate(width, overflow="ellipsis")
    return line


def change_lines(change, width: int, most: int = 30, indent: str = "    ") -> list[Text]:
    """The lines showing `change` (a tools.preview.FileChange), at most `most` of them plus a count."""
    if change is None:
        return []
    after = change.after.splitlines()
    if change.before is None:
        rows = [_row(n, "+", line, width, indent) for n, line in enumerate(after[:NEW_FILE_LINES], 1)]
        rest = len(after) - NEW_FILE_LINES
        if rest > 0:
            rows.append(Text(f"{indent}      … {rest:,} more line{'s' * (rest > 1)} ({len(after):,} in all)",
                             style="dim"))
        return rows
    rows, old_n, new_n = [], 0, 0
    diff = difflib.unified_diff(change.before.splitlines(), after, lineterm="", n=DIFF_CONTEXT)
    for line in list(diff)[2:]:                       # skip the ---/+++ header
        hunk = HUNK.match(line)
        if hunk:
            if rows:
                rows.append(Text(f"{indent}    ⋮", style="dim"))
            old_n, new_n = int(hunk.group(1)), int(hunk.group(2))
            continue
        sign, text = line[:1] or " ", line[1:]
        if sign == "-":
            rows.append(_row(old_n, "-", text, width, indent))
            old_n += 1
        elif sign == "+":
            rows.append(_row(new_n, "+", text, width, indent))
            new_n += 1
        elif sign == " ":
            rows.append(_row(new_n, " ", text, width, indent))
            old_n, new_n = old_n + 1, new_n + 1
    if not rows:
        return [Text(f"{indent}(no change to the text)", style="dim")]
    if len(rows) > most:
        hidden = len(rows) - most
        rows = rows[:most] + [Text(f"{indent}      … {hidden:,} more diff line{'s' * (hidden > 1)}", style="dim")]
    return rows


def change_summary(change) -> str:
    """`+3 -1` style counts of a change (empty for none)."""
    if change is None:
        return ""
    if change.before is None:
        return f"+{len(change.after.splitlines())}"
    added = removed = 0
    for line in difflib.unified_diff(change.before.splitlines(), change.after.splitlines(), lineterm="", n=0):
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return f"+{added} -{removed}"
