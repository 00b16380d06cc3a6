"""The model's answer as formatted Markdown while it streams, without re-printing it on every token.

    text deltas → BlockSplitter → closed blocks (a paragraph, a list, a heading, a table, a fenced
                                   code block) are printed once, as Markdown, above the live area
                                → the open tail is drawn in the live area (its last lines only) and
                                   replaced on every refresh, until it closes or the answer ends;
                                   only its settled part is drawn (`settled`), so no half-arrived
                                   mark (`**impo`, `| f`, a fence's backticks) ever shows raw

Only whole lines decide where a block ends: a blank line, a heading line, the closing fence of a code
block, or the first line after a table. Text inside a fence never ends a block, so a code block is
highlighted once, whole. Rich prints Markdown wrapped at words at the terminal's width.
"""

from __future__ import annotations

import re

from markdown_it import MarkdownIt
from rich.markdown import Heading, Markdown
from rich.segment import Segment

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
HEADING = re.compile(r"^ {0,3}#{1,6}(\s|$)")
TABLE_ROW = re.compile(r"^ {0,3}\|")
FENCE_SO_FAR = re.compile(r" {0,3}(`*|~*)")     # a line that may still become a closing fence
INLINE_MARK = re.compile(r"\\.?|`+|\*+|_+|~+|!?\[|\]\(?|\)|<(?=[A-Za-z])|>")
CODE_THEME = "ansi_dark"             # the terminal's own colours, readable on dark and light backgrounds


class BlockSplitter:
    """Cuts streamed Markdown into closed blocks. Invariant: every character fed comes out exactly once,
    in order — in a block returned by `feed`, or in `tail`."""

    def __init__(self):
        self.buffer = ""             # text not yet returned in a block
        self.scanned = 0             # how much of `buffer` is made of whole lines already looked at
        self.fence: str | None = None
        self.table = False

    def feed(self, text: str) -> list[str]:
        self.buffer += text
        blocks: list[str] = []
        while True:
            end = self.buffer.find("\n", self.scanned)
            if end < 0:
                return blocks
            start, self.scanned = self.scanned, end + 1
            self._line(self.buffer[start:end], start, blocks)

    def _cut(self, at: int, blocks: list[str]) -> None:
        """Return buffer[:at] as a block (if it holds anything) and keep the rest."""
        if at > 0:
            blocks.append(self.buffer[:at])
            self.buffer, self.scanned = self.buffer[at:], self.scanned - at

    def _line(self, line: str, start: int, blocks: list[str]) -> None:
        after = self.scanned
        if self.fence is not None:
            closing = FENCE.match(line)
            if closing and closing.group(1)[0] == self.fence[0] and len(closing.group(1)) >= len(self.fence) \
                    and not line[closing.end():].strip():
                self.fence = None
                self._cut(after, blocks)
            return
        fence = FENCE.match(line)
        if fence:
            self._cut(start, blocks)
            self.fence, self.table = fence.group(1), False
        elif not line.strip():
            self.table = False
            self._cut(after, blocks)
        elif HEADING.match(line):
            self._cut(start, blocks)
            self.table = False
            self._cut(self.scanned, blocks)
        elif TABLE_ROW.match(line):
            if not self.table:
                self._cut(start, blocks)
                self.table = True
        elif self.table:
            self.table = False
            self._cut(start, blocks)

    @property
    def tail(self) -> str:
        return self.buffer

    def take_tail(self) -> str:
        tail, self.buffer, self.scanned, self.fence, self.table = self.buffer, "", 0, None, False
        return tail


def settled(tail: str, fence: str | None, table: bool) -> str:
    """The part of an open block that can be drawn as it will finally look. Whole lines are drawn;
    the line still arriving is drawn up to the first inline mark whose end has not arrived yet. A table
    is drawn once its header and delimiter rows are whole, row by row; inside a code block, a line that
    may become the closing fence waits."""
    whole, newline, arriving = tail.rpartition("\n")
    whole += newline
    if fence is not None:
        return whole if FENCE_SO_FAR.fullmatch(arriving) else tail
    if table:
        return whole if whole.count("\n") >= 2 else ""
    if TABLE_ROW.match(arriving):
        return whole
    return whole + arriving[:_unfinished_at(arriving)]


def _unfinished_at(line: str) -> int:
    """Where the first inline mark (emphasis, code, strike-through, link, autolink) that is not closed
    within `line` starts; len(line) when every mark is closed. Runs of the same mark pair by length, as
    in CommonMark; a run at the very end may still grow, so it counts as open."""
    opened: list[tuple[str, int]] = []            # (mark, where it starts), innermost last
    at = 0
    while (found := INLINE_MARK.search(line, at)) is not None:
        mark, start, at = found.group(), found.start(), found.end()
        if at == len(line) and mark not in (")", ">"):
            opened.append((mark, start))
            break
        if mark[0] == "\\":
            continue
        if mark[0] == "`":                        # a code span: nothing inside it is a mark
            close = re.compile(rf"(?<!`){mark}(?!`)").search(line, at)
            if close is None:
                opened.append((mark, start))
                break
            at = close.end()
        elif mark[0] in "*_~":
            before, after = line[start - 1:start], line[at:at + 1]
            if mark[0] == "_" and before.isalnum() and after.isalnum() or mark[0] == "~" and mark != "~~":
                continue                          # snake_case is not emphasis, nor a lone ~
            if opened and opened[-1][0] == mark and before.strip():
                opened.pop()
            elif after.strip():
                opened.append((mark, start))
        elif mark.endswith("["):
            opened.append(("[", start))
        elif mark[0] == "]":
            if opened and opened[-1][0] == "[":
                where = opened.pop()[1]
                if mark == "](":
                    opened.append(("(", where))
        elif mark == ")" and opened and opened[-1][0] == "(":
            opened.pop()
        elif mark == "<":
            opened.append(("<", start))
        elif mark == ">" and opened and opened[-1][0] == "<":
            opened.pop()
    return min([len(line)] + [where for _, where in opened])


class _LeftHeading(Heading):
    LEVEL_ALIGN = {tag: "left" for tag in ("h1", "h2", "h3", "h4", "h5", "h6")}


class AnswerMarkdown(Markdown):
    """rich's Markdown with left-aligned headings, no terminal hyperlinks (link targets are shown as
    text, so nothing untrusted goes into an escape sequence) and HTML shown as the text it is: rich
    would drop `<!-- … -->` and tags, so a model could hide words from the person."""

    elements = {**Markdown.elements, "heading_open": _LeftHeading}

    def __init__(self, text: str):
        super().__init__(text, code_theme=CODE_THEME, hyperlinks=False)
        self.parsed = MarkdownIt("commonmark", {"html": False}).enable("strikethrough").enable("table").parse(text)


def _blank(line) -> bool:
    return not "".join(segment.text for segment in line).strip()


class Trimmed:
    """Another renderable without the blank lines rich puts around tables, lists and code blocks (the
    stream puts exactly one between blocks), and optionally only its last `last` lines."""

    def __init__(self, renderable, last: int | None = None):
        self.renderable, self.last = renderable, last

    def __rich_console__(self, console, options):
        lines = console.render_lines(self.renderable, options, pad=False)
        while lines and _blank(lines[0]):
            lines.pop(0)
        while lines and _blank(lines[-1]):
            lines.pop()
        for line in lines[-max(1, self.last):] if self.last is not None else lines:
            yield from line
            yield Segment.line()


class OpenTail:
    """The block still arriving, parsed and drawn only when the live area refreshes (a few times a
    second, not on every token), and only its last lines: a long open code block costs no more."""

    def __init__(self, splitter: BlockSplitter):
        self.splitter = splitter

    def __rich_console__(self, console, options):
        height = max(3, console.height - 4)
        splitter = self.splitter
        lines = settled(splitter.tail, splitter.fence, splitter.table).split("\n")
        if len(lines) > 2 * height:                # the fence's opening line keeps the highlighting
            lines = ([lines[0]] if splitter.fence else []) + lines[-height:]
        yield Trimmed(AnswerMarkdown("\n".join(lines)), height)


class MarkdownStream:
    """Prints one answer: closed blocks once, the open tail in the live area (`activity.set_tail`)."""

    def __init__(self, console, activity):
        self.console, self.activity = console, activity
        self.splitter, self.printed = BlockSplitter(), False
        self.tail = OpenTail(self.splitter)

    def feed(self, text: str) -> None:
        for block in self.splitter.feed(text):
            self._print(block)
        self.activity.set_tail(self.tail if self.splitter.tail.strip() else None)

    def _print(self, block: str) -> None:
        if not block.strip():
            return
        if self.printed:
            self.console.print()
        self.console.print(Trimmed(AnswerMarkdown(block.strip("\n"))))
        self.printed = True

    def finish(self) -> None:
        """The answer ended (or was interrupted): print what is still open, and start afresh."""
        self.activity.set_tail(None)
        self._print(self.splitter.take_tail())
        self.printed = False
