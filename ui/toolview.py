"""How a tool call looks: its line, the live tail while it runs, and what it did once finished.

    ● bash  seq 1 50000
      ⎿ 1
        2
        3
        … 49,994 more lines (/last shows them all)
        49998
        49999
        50000
        exit 0 · 0.1s

The exit code is red when it is not 0; a timeout, a signal or an interruption is said in words; the
elapsed time always ends the last line. Output lines are cut to the width (never wrapped); messages
(errors, refusals) wrap at words under the ⎿ and keep its indentation. The events reaching this
module were made safe by the renderer.
"""

from __future__ import annotations

import re

from rich.cells import cell_len
from rich.text import Text

from storage import PERSISTED_CLOSE, PERSISTED_OPEN, SAVED_TO
from .diffview import change_lines, change_summary
from .sanitize import safe, safe_line

HEAD_LINES, TAIL_LINES = 3, 3
LIVE_LINES = 5
MESSAGE_LINES = 8
FIRST, INDENT = "  ⎿ ", "    "
TRAILER = re.compile(r"^\[(exit code -?\d+|timed out after [^\]]*|killed by signal \d+)\]$")
PERSISTED = re.compile(r"Output too large for the context \(([\d,]+) chars, ([\d,]+) lines\)\. "
                       + re.escape(SAVED_TO) + r"(.+)")


def seconds(delay: float) -> str:
    return f"{delay:.1f}s" if delay < 10 else f"{delay:.0f}s"


def summarize_input(name: str, args) -> str:
    """One short line describing a tool call's arguments."""
    if not isinstance(args, dict):
        return ""
    if name == "bash":
        command = str(args.get("command", ""))
        first = command.splitlines()[0] if command else ""
        return first[:100] + (" …" if len(first) > 100 or "\n" in command else "")
    if "path" in args:
        extra = "".join(f" {k}={args[k]}" for k in ("offset", "limit") if k in args)
        if name == "write_file":
            count = len(str(args.get('content', '')).splitlines())
            extra = f" ({count} line{'s' * (count != 1)})"
        return f"{args['path']}{extra}"
    return " ".join(f"{k}={str(v)[:40]}" for k, v in args.items())


def summarize_output(content: str) -> str:
    """The first line of a result and how many lines it has (for one-line views such as -p's stderr)."""
    lines = output_lines(content) or ["(no output)"]
    first = lines[0][:100]
    return first if len(lines) == 1 else f"{first}  … ({len(lines)} lines)"


def output_lines(content: str) -> list[str]:
    lines = content.strip("\n").splitlines()
    if lines and TRAILER.match(lines[-1]):
        lines.pop()                      # the bash trailer is not part of the output
    return [] if lines == ["(no output)"] else lines


def tool_header(name: str, args) -> Text:
    line = Text().append("● ", style="cyan")
    return line.append(safe_line(name), style="bold cyan").append(f"  {safe_line(summarize_input(name, args))}")


def parse_persisted(content: str) -> dict | None:
    """The parts of a `<persisted-output>` block (storage.persisted_block), or None."""
    if not content.startswith(PERSISTED_OPEN):
        return None
    found = PERSISTED.search(content)
    if not found:
        return None
    head = re.search(r"Preview \(first [\d,]+ chars\):\n(.*?)(?:\n\.\.\. \[[\d,]+ chars omitted\] \.\.\.|"
                     r"\n" + re.escape(PERSISTED_CLOSE) + ")", content, re.S)
    tail = re.search(r"Preview \(last [\d,]+ chars\):\n(.*?)\n" + re.escape(PERSISTED_CLOSE), content, re.S)
    return {"chars": found.group(1), "lines": int(found.group(2).replace(",", "")), "path": found.group(3).strip(),
            "head": head.group(1).splitlines() if head else [], "tail": tail.group(1).splitlines()[1:] if tail else []}


def wrap_words(text: str, width: int) -> list[str]:
    """Greedy word wrap by terminal cells; a word longer than the width is cut into pieces."""
    out: list[str] = []
    for paragraph in text.split("\n"):
        line = ""
        for word in paragraph.split(" "):
            while cell_len(word) > width:
                room = width - cell_len(line) - (1 if line else 0)
                if room <= 0:
                    out.append(line)
                    line, room = "", width
                cut = 0
                while cut < len(word) and cell_len(word[:cut + 1]) <= room:
                    cut += 1
                line = (line + " " if line else "") + word[:cut]
                word = word[cut:]
                out.append(line)
                line = ""
            if not line:
                line = word
            elif cell_len(line) + 1 + cell_len(word) <= width:
                line += " " + word
            else:
                out.append(line)
                line = word
        out.append(line)
    return out


def message_lines(text: str, width: int, style: str, suffix: str = "", most: int = MESSAGE_LINES,
                  first: str = FIRST) -> list[Text]:
    """`text` wrapped at words under the ⎿, indentation kept; `suffix` ends the last line and never
    stands alone on a line of its own."""
    room = max(10, width - cell_len(INDENT))
    lines = [line for line in wrap_words(safe(text).strip(), room)] or [""]
    hidden = max(0, len(lines) - most)
    lines = lines[:most]
    if hidden:
        lines.append(f"… {hidden} more line{'s' * (hidden > 1)} (/last shows them all)")
    if suffix:
        last = lines.pop()
        joined = wrap_words(f"{last}{suffix}", room)
        if len(joined) > 1 and " " in last:          # carry the last word down with the suffix
            word_at = last.rfind(" ")
            joined = [last[:word_at], last[word_at + 1:] + suffix]
        lines += joined
    return [Text().append(first if i == 0 else INDENT, style="dim").append(line, style=style)
            for i, line in enumerate(lines)]


def _cut(line: Text, width: int) -> Text:
    line.truncate(width, overflow="ellipsis")
    return line


def _ends(lines: list[str]) -> tuple[list[str], list[str]]:
    """All the lines when they are few, else the first and the last few."""
    if len(lines) <= HEAD_LINES + TAIL_LINES + 2:        # hiding one or two lines is not worth a line
        return lines, []
    return lines[:HEAD_LINES], lines[-TAIL_LINES:]


def _preview(head: list[str], tail: list[str], total: int, width: int) -> list[Text]:
    """First and last lines of an output, with how many were left out between them."""
    hidden = total - len(head) - len(tail)
    rows = [_cut(Text().append(FIRST if i == 0 else INDENT, style="dim").append(safe_line(line)), width)
            for i, line in enumerate(head)]
    if hidden > 0:
        rows.append(Text(f"{INDENT}… {hidden:,} more line{'s' * (hidden > 1)} (/last shows them all)", style="dim"))
    rows += [_cut(Text(INDENT).append(safe_line(line)), width) for line in tail]
    return rows


def bash_status(meta: dict) -> tuple[str, str]:
    if meta.get("interrupted"):
        return "interrupted by you", "red"
    if meta.get("timed_out"):
        return f"timed out after {meta.get('timeout', 0):g}s (BASH_TIMEOUT): killed, with its children", "red"
    code = meta.get("exit_code")
    if code is None:
        return "", "dim"
    if code < 0:
        return f"killed by signal {-code}", "red"
    return f"exit {code}", "dim" if code == 0 else "bold red"


def finished_lines(event, width: int, diff: bool = True) -> list[Text]:
    """What a finished (or refused, or interrupted) tool call shows under its line (`diff=False`: the
    person saw the diff a moment ago, when approving it)."""
    meta, took = event.meta or {}, seconds(event.seconds)
    if meta.get("declined"):              # the person's own decision: no time, no model-facing wording
        return message_lines(str(meta["declined"]), width, "yellow")
    persisted = parse_persisted(event.content)
    if event.name == "bash" or meta.get("interrupted"):
        status, style = bash_status(meta)
        if persisted:
            head, tail = persisted["head"][:HEAD_LINES], persisted["tail"][-TAIL_LINES:]
            rows = _preview(head, tail, max(persisted["lines"], len(head) + len(tail)), width)
        elif "exit_code" not in meta and not meta.get("interrupted"):        # refused before it ran
            return message_lines(event.content, width, "red" if event.is_error else "dim", f" · {took}")
        else:
            lines = output_lines(event.content)
            rows = _preview(*_ends(lines), len(lines), width)
        status = ("" if rows else "no output · ") + (status or "done")
        rows += message_lines(status, width, style, f" · {took}", first=INDENT if rows else FIRST)
        if persisted:           # worded like tool_result_budget's line: a saved output looks the same either way
            saved = f"[{event.name}] persisted 1 output ({persisted['chars']} chars) → {safe_line(persisted['path'])}"
            rows += [Text(line, style="magenta") for line in wrap_words(saved, width)]
        return rows
    if event.is_error:
        return message_lines(event.content, width, "red", f" · {took}")
    if event.name == "read_file" and not re.fullmatch(r"\(.* is empty\)", event.content):
        lines = event.content.splitlines()
        notes = [line for line in lines if line.startswith("[") and line.endswith("]")]
        count = len(lines) - len(notes)
        text = f"read {count:,} line{'s' * (count != 1)}" + (f" {notes[0]}" if notes else "")
        return message_lines(text, width, "dim", f" · {took}")
    change = meta.get("change")
    if event.name in ("write_file", "edit_file") and change is not None:
        if change.before is None:
            count = len(change.after.splitlines())
            text = f"created {change.path} ({count:,} line{'s' * (count != 1)})"
        else:
            text = f"{'edited' if event.name == 'edit_file' else 'rewrote'} {change.path} ({change_summary(change)})"
        return message_lines(text, width, "dim", f" · {took}") + (change_lines(change, width) if diff else [])
    lines = output_lines(event.content)
    if len(lines) <= 1:
        return message_lines(lines[0] if lines else "(no output)", width, "dim", f" · {took}")
    rows = _preview(*_ends(lines), len(lines), width)
    rows.append(Text(f"{INDENT}{took}", style="dim"))
    return rows


def live_tail(text: str, width: int, count: int = LIVE_LINES) -> Text | None:
    """The last lines a running command printed, dim and cut to the width."""
    lines = [line for line in safe(text).split("\n")][-count - 1:]
    if lines and not lines[-1]:
        lines.pop()
    lines = lines[-count:]
    if not lines:
        return None
    out = Text()
    for i, line in enumerate(lines):
        row = Text(INDENT + line.replace("\t", " "), style="dim")
        row.truncate(width, overflow="ellipsis")
        out.append_text(row)
        if i < len(lines) - 1:
            out.append("\n")
    return out
