"""A small terminal emulator for the pseudo-terminal tests: what a person would read on the screen.

It keeps every line that scrolled by and understands what s08's output uses: printable text with
wrapping at the right margin, CR, LF, BS, TAB, cursor moves (CUU/CUD/CUF/CUB/CHA/CUP), erasing
(EL, ED); colours and modes are ignored, OSC strings skipped. Enough to check wrapping, indentation,
and that a live area left nothing behind — not a general emulator.
"""

from __future__ import annotations

import re

from rich.cells import get_character_cell_size

CSI = re.compile(r"\x1b\[([?>=]?)([\d;]*)([ -/]*)([@-~])")
OSC = re.compile(r"\x1b\][^\x07\x1b]*(\x07|\x1b\\)")


class Screen:
    def __init__(self, width: int, height: int = 50):
        self.width, self.height = width, height
        self.lines: list[list[str]] = [[]]
        self.row = self.col = 0
        self.pending_wrap = False

    @property
    def top(self) -> int:
        return max(0, len(self.lines) - self.height)

    def _line(self) -> list[str]:
        while self.row >= len(self.lines):
            self.lines.append([])
        return self.lines[self.row]

    def _put(self, ch: str) -> None:
        size = max(1, get_character_cell_size(ch))
        if self.pending_wrap or self.col + size > self.width:
            self.row, self.col, self.pending_wrap = self.row + 1, 0, False
        line = self._line()
        while len(line) < self.col + size:
            line.append(" ")
        line[self.col] = ch
        for extra in range(1, size):
            line[self.col + extra] = ""
        self.col += size
        if self.col >= self.width:
            self.col, self.pending_wrap = self.width - 1, True

    def _csi(self, private: str, params: str, final: str) -> None:
        numbers = [int(p) if p else 0 for p in params.split(";")] if params else []
        n = numbers[0] if numbers and numbers[0] else 1
        self.pending_wrap = False if final in "ABCDGHfKJ" else self.pending_wrap
        if private:
            return
        if final == "A":
            self.row = max(self.top, self.row - n)
        elif final == "B":
            self.row += n
        elif final == "C":
            self.col = min(self.width - 1, self.col + n)
        elif final == "D":
            self.col = max(0, self.col - n)
        elif final == "G":
            self.col = min(self.width - 1, n - 1)
        elif final in "Hf":
            row = numbers[0] if numbers and numbers[0] else 1
            col = numbers[1] if len(numbers) > 1 and numbers[1] else 1
            self.row, self.col = self.top + row - 1, col - 1
        elif final == "K":
            line, mode = self._line(), numbers[0] if numbers else 0
            if mode == 0:
                del line[self.col:]
            elif mode == 1:
                line[:self.col + 1] = [" "] * min(len(line), self.col + 1)
            else:
                line.clear()
        elif final == "J":
            mode = numbers[0] if numbers else 0
            if mode == 0:
                del self._line()[self.col:]
                del self.lines[self.row + 1:]
            elif mode in (2, 3):
                for i in range(self.top, len(self.lines)):
                    self.lines[i] = []

    def feed(self, data: str) -> "Screen":
        data = OSC.sub("", data)
        i = 0
        while i < len(data):
            ch = data[i]
            if ch == "\x1b":
                m = CSI.match(data, i)
                if m:
                    self._csi(m.group(1), m.group(2), m.group(4))
                    i = m.end()
                else:
                    i += 2                      # ESC x: a mode switch we do not need
                continue
            if ch == "\r":
                self.col, self.pending_wrap = 0, False
            elif ch == "\n":
                self.row, self.pending_wrap = self.row + 1, False
                self._line()
            elif ch == "\b":
                self.col, self.pending_wrap = max(0, self.col - 1), False
            elif ch == "\t":
                self.col = min(self.width - 1, (self.col // 8 + 1) * 8)
            elif ch >= " ":
                self._put(ch)
            i += 1
        return self

    def text(self) -> str:
        return "\n".join("".join(line).rstrip() for line in self.lines).rstrip("\n")

    def rows(self) -> list[str]:
        return self.text().split("\n")
