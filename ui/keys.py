"""The keyboard while the agent works: Esc interrupts like Ctrl-C, and typing ahead is kept, not echoed.

Without this, the terminal echoes what is typed into the answer (Esc shows as `^[`) and the keys
wait in the terminal's buffer. While a turn runs, `KeyWatcher` turns echo and line buffering off
(Ctrl-C still sends SIGINT) and a thread reads the keys:

    Esc alone            → SIGINT to ourselves: the turn stops exactly as with Ctrl-C
    printable text       → kept; `take_typed()` hands it to the next prompt
    ⏎                    → ends a line; the lines wait in the next prompt's input, to be edited and
                           sent with Enter there (never sent by themselves)
                           (a line break inside a burst of text — a paste — stays a line break)
    Backspace, Ctrl-U    → edit what was kept
    arrows, Alt-x, …     → ignored

`paused()` stops the reading for a question (approval) or a pager, which read the keys themselves;
what they read that was typing, not an answer, comes back with `keep(text)`. `last_key_at` is when the
last key arrived (a question treats keys soon after it as typing). `take_pending(fd)` reads what was
typed and not read yet, so a question can start with nothing typed ahead in it.
"""

from __future__ import annotations

import codecs
import os
import select
import signal
import sys
import termios
import threading
import time
from contextlib import contextmanager

ESC = "\x1b"
ESC_WAIT = 0.05                # seconds after ESC that tell the Esc key from an escape sequence
POLL = 0.05


class KeyWatcher:
    def __init__(self, fd: int | None = None):
        self.fd = sys.stdin.fileno() if fd is None else fd
        self.lines: list[str] = []     # typed ahead and ended with Enter: each will be sent
        self.typed, self.saved = "", None
        self.lock, self.stopping, self.thread = threading.Lock(), threading.Event(), None
        self.armed = False             # Esc interrupts only while a turn is being watched
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.last_key_at: float | None = None

    # ---- terminal modes ----------------------------------------------------------------
    def _quiet_mode(self) -> None:
        termios.tcsetattr(self.fd, termios.TCSANOW, quiet_attrs(self.fd))     # keep ISIG: Ctrl-C interrupts

    def __enter__(self):
        try:
            self.saved = termios.tcgetattr(self.fd)
            self._quiet_mode()
        except (termios.error, OSError):
            self.saved = None
            return self                                     # not a terminal: nothing to watch
        self.stopping.clear()
        self.armed = True
        self.thread = threading.Thread(target=self._run, name="keys", daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.armed = False
        self.stopping.set()
        if self.thread is not None:
            self.thread.join(timeout=1)
            self.thread = None
        if self.saved is not None:
            # keys typed in the turn's last instant, not read yet: kept like the others (an Enter among
            # them must wait in the next prompt's input, not send the line there)
            with self.lock:
                pending = take_pending(self.fd)
                if pending:
                    self.feed(self.decoder.decode(pending))
            try:
                termios.tcsetattr(self.fd, termios.TCSANOW, self.saved)
            except (termios.error, OSError):
                pass
            self.saved = None

    @contextmanager
    def paused(self):
        """Stop reading keys (someone else will) for the duration."""
        with self.lock:
            yield

    # ---- reading -----------------------------------------------------------------------
    def _read(self, timeout: float) -> bytes:
        ready, _, _ = select.select([self.fd], [], [], timeout)
        return os.read(self.fd, 1024) if ready else b""

    def _run(self) -> None:
        while not self.stopping.is_set():
            with self.lock:
                try:
                    data = self._read(POLL)
                    if data.endswith(b"\x1b"):
                        data += self._read(ESC_WAIT)        # the rest of an escape sequence, if it is one
                except OSError:
                    return
                if data:
                    self.feed(self.decoder.decode(data))

    def keep(self, text: str) -> None:
        """Keys someone else read (a question) that were typing: kept as if typed here, never an Esc."""
        self.feed(text.rstrip(ESC))

    def feed(self, text: str) -> None:
        """Apply typed keys: keep text, edit it, or interrupt on a lone Esc."""
        self.last_key_at = time.monotonic()
        i = 0
        while i < len(text):
            ch = text[i]
            if ch == ESC:
                if i + 1 == len(text):
                    self.interrupt()
                    return
                nxt = text[i + 1]
                if nxt in "[O":                             # CSI / SS3 sequence: skip to its final byte
                    i += 2
                    while i < len(text) and not ("\x40" <= text[i] <= "\x7e"):
                        i += 1
                    i += 1
                else:
                    i += 2 if nxt != ESC else 1            # Alt-x; ESC ESC is two presses
                continue
            if ch in "\r\n":
                if i + 1 == len(text):                     # Enter pressed (a paste brings more with it)
                    self.lines.append(self.typed)
                    self.typed = ""
                else:
                    self.typed += "\n"
            elif ch in "\x7f\x08":
                self.typed = self.typed[:-1]
            elif ch == "\x15":
                self.typed = ""
            elif ch == "\t" or ch >= " ":
                self.typed += ch
            i += 1

    def interrupt(self) -> None:
        if self.armed:
            os.kill(os.getpid(), signal.SIGINT)

    def take_typed(self) -> tuple[list[str], str]:
        """What was typed ahead: the lines ended with Enter (to send, in order) and the unfinished rest."""
        lines, typed, self.lines, self.typed = self.lines, self.typed, [], ""
        return [line for line in lines if line.strip()], typed


def quiet_attrs(fd: int) -> list:
    """The terminal's attributes with echo and line mode off (Ctrl-C still interrupts)."""
    attrs = termios.tcgetattr(fd)
    attrs[3] &= ~(termios.ECHO | termios.ICANON)
    attrs[6][termios.VMIN], attrs[6][termios.VTIME] = 1, 0
    return attrs


def take_pending(fd: int) -> bytes:
    """What was typed and not read yet — a line not finished with Enter included. b"" if not a terminal."""
    try:
        saved = termios.tcgetattr(fd)
        termios.tcsetattr(fd, termios.TCSANOW, quiet_attrs(fd))
    except (termios.error, OSError):
        return b""
    data = b""
    try:
        while len(data) < 1 << 16 and select.select([fd], [], [], 0)[0]:
            chunk = os.read(fd, 1024)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    finally:
        termios.tcsetattr(fd, termios.TCSANOW, saved)
    return data
