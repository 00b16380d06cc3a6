"""What the approval question shows, and the whole of it for the pager: nothing that will run is hidden.

    ? run this command?
        ls
        ⋮ 40 blank lines
        touch x
    a long line is wrapped at the width, each continuation row marked
      ↪ like this one

A command longer than HEAD + TAIL rows shows its head, a counted line for the middle and its tail (the
end of a command is where an appended `touch` would hide). A new file or a diff shows its size and its
first lines. Key `v` (ui/approve.py) opens `full_text` in the pager (the one /last uses) and comes
back to the same question.
"""

from __future__ import annotations

import difflib

from rich.text import Text

from .diffview import change_summary
from .sanitize import safe
from .toolview import wrap_words

HEAD, TAIL = 14, 6         # rows of a long command shown at its start and at its end
BLANK_RUN = 2              # this many blank lines in a row (or more) are shown as one counted line
INDENT = "    "
MORE = "↪ "


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'s' * (n != 1)}"


def command_rows(command: str, width: int) -> tuple[list[Text], bool]:
    """The rows showing `command` at `width` cells, and whether part of it is left for the pager."""
    lines = safe(command).replace("\t", " ").split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    room = max(10, width - len(INDENT) - len(MORE))
    rows: list[Text] = []
    blank = 0
    hidden = False
    for line in lines + [None]:
        if line is not None and not line.strip():
            blank += 1
            continue
        if blank >= BLANK_RUN:
            rows.append(Text(f"{INDENT}⋮ {_plural(blank, 'blank line')}", style="dim"))
            hidden = True
        elif blank:
            rows.append(Text(""))
        blank = 0
        if line is None:
            break
        for i, piece in enumerate(wrap_words(line, room)):
            row = Text(INDENT)
            if i:
                row.append(MORE, style="dim")
            rows.append(row.append(piece, style="bold"))
    if len(rows) > HEAD + TAIL + 1:
        middle = len(rows) - HEAD - TAIL
        rows = rows[:HEAD] + [Text(f"{INDENT}⋮ {_plural(middle, 'more row')} (of {len(rows):,}; v shows them all)",
                                   style="dim")] + rows[-TAIL:]
        hidden = True
    return rows, hidden


def _size(text: str) -> str:
    size = len(text.encode("utf-8", "surrogatepass"))
    return f"{size:,} bytes" if size < 10_000 else f"{size / 1024:,.1f} KB"


def change_size(change) -> Text:
    """One line: how big the new file or the change is."""
    after = change.after.splitlines()
    if change.before is None:
        what = f"new file: {_plural(len(after), 'line')}, {_size(change.after)}"
    else:
        what = f"change {change_summary(change)} lines; the file becomes {_plural(len(after), 'line')}, " \
               f"{_size(change.after)}"
    return Text(f"{INDENT}{what}", style="dim")


def full_text(request) -> str:
    """Everything the question is about, for the pager: the command, numbered line by line (blank
    lines too), or the whole new file, or the whole diff."""
    if request.kind == "mcp":
        return f"the whole arguments of {request.tool}:\n\n{request.command}"
    if request.kind == "command":
        lines = request.command.split("\n")
        return "the whole command:\n\n" + "\n".join(f"{n:>5}  {line}" for n, line in enumerate(lines, 1))
    change = request.change
    if change is None:
        return f"{request.tool}: no preview available"
    if change.before is None:
        lines = change.after.split("\n")
        return f"new file {change.path}:\n\n" + "\n".join(f"{n:>5}  {line}" for n, line in enumerate(lines, 1))
    diff = difflib.unified_diff(change.before.splitlines(), change.after.splitlines(), f"a/{change.path}",
                                f"b/{change.path}", lineterm="")
    return "\n".join(diff) or "(no change to the text)"
