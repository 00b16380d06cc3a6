"""Where a command's output goes while it runs: memory while small, then a spill file, never unbounded.

    OutputSink(spill_dir, secrets).add(chunk) … .result(workspace, trailer)

The stream is redacted first (redact.StreamRedactor: a key split across two chunks is still found),
so nothing kept — in memory, on disk, in the head and tail shown to the model — holds a key. Up to
MEMORY_CAP bytes stay in memory; past that the output streams to `.task_outputs/<session>-NNN-bash.txt`
(the first FILE_CAP bytes are kept) and the model gets the head, the tail and the path. When the
spill file cannot be created or written (a full disk, a read-only workspace), the output is not
lost: its head and tail stay in memory and the result says what happened.
"""

from __future__ import annotations

import codecs
import os
from pathlib import Path

from config import PREVIEW_CHARS
from redact import StreamRedactor
from storage import create_session_file, persisted_block, relative

MEMORY_CAP = 1024 * 1024          # bytes of output held in memory before spilling to a file
FILE_CAP = 256 * 1024 * 1024      # bytes of output kept on disk; the rest is counted, not stored
DEGRADED_KEEP = 8000              # bytes of head and of tail kept when the spill file failed


class OutputSink:
    def __init__(self, spill_dir: Path, secrets=(), on_output=None):
        self.spill_dir, self.redactor = spill_dir, StreamRedactor(secrets)
        self.on_output = on_output            # gets each redacted piece as text, to show it live
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.buf, self.total, self.lines = bytearray(), 0, 0
        self.fd: int | None = None
        self.path: Path | None = None
        self.written = 0                           # bytes in the spill file
        self.failure: str | None = None            # why spilling stopped
        self.head, self.tail = b"", bytearray()

    def add(self, data: bytes) -> None:
        self._store(self.redactor.feed(data))

    def finish(self) -> None:
        self._store(self.redactor.flush())

    def _store(self, data: bytes) -> None:
        if not data:
            return
        if self.on_output is not None:
            self.on_output(self.decoder.decode(data))
        self.total += len(data)
        self.lines += data.count(b"\n")
        if self.fd is None and self.failure is None and len(self.buf) + len(data) <= MEMORY_CAP:
            self.buf += data
            return
        if self.fd is None and self.failure is None:
            self.head = bytes(self.buf[:DEGRADED_KEEP])
            self.tail = bytearray(self.buf[-DEGRADED_KEEP:])
            pending, self.buf = bytes(self.buf), bytearray()
            try:
                self.path, self.fd = create_session_file(self.spill_dir.parent, self.spill_dir, "bash", ".txt")
            except OSError as exc:
                self.failure = exc.strerror or str(exc)
            self._spill(pending)
        self._spill(data)
        self.tail = (self.tail + data)[-DEGRADED_KEEP:]

    def _spill(self, data: bytes) -> None:
        if self.fd is None:
            return
        room = FILE_CAP - self.written
        try:
            if room > 0:
                self._write(data[:room])
                if room < len(data):
                    self._write(f"\n[... output cut here: kept the first {FILE_CAP:,} bytes ...]\n".encode())
        except OSError as exc:
            self.failure = exc.strerror or str(exc)
            os.close(self.fd)
            self.fd = None

    def _write(self, data: bytes) -> None:
        assert self.fd is not None
        view = memoryview(data)
        while view:
            n = os.write(self.fd, view)
            self.written += n
            view = view[n:]

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def result(self, workspace: Path, trailer: str) -> str:
        self.finish()
        spilled = self.fd is not None or self.failure is not None
        self.close()
        if not spilled:
            text = self.buf.decode("utf-8", errors="replace") or "(no output)"
            return text + ("" if text.endswith("\n") else "\n") + trailer
        if self.failure is not None:
            return self._degraded(workspace, trailer)
        assert self.path is not None       # spilled and no failure: the file exists
        half = PREVIEW_CHARS // 2
        head = self.head.decode("utf-8", errors="replace")[:half]
        tail = self.tail.decode("utf-8", errors="replace")[-half:]
        cut = f"Only the first {FILE_CAP:,} bytes were kept on disk. " if self.total > FILE_CAP else ""
        return persisted_block(relative(workspace, self.path), self.total, self.lines, head, tail,
                               note=cut + trailer.strip())

    def _degraded(self, workspace: Path, trailer: str) -> str:
        head = self.head.decode("utf-8", errors="replace")
        tail = self.tail.decode("utf-8", errors="replace")
        omitted = max(0, self.total - len(self.head) - len(self.tail))
        saved = f"; the first {self.written:,} bytes are in {relative(workspace, self.path)}" \
            if self.path is not None and self.written else ""
        note = (f"[... {omitted:,} bytes not shown: the output ({self.total:,} bytes, {self.lines:,} lines) "
                f"could not be saved to {relative(workspace, self.spill_dir)} ({self.failure}){saved}; "
                "only its head and tail were kept ...]")
        return f"{head}\n{note}\n{tail}" + ("" if tail.endswith("\n") else "\n") + trailer

    def partial(self) -> str:
        return (self.buf or self.tail).decode("utf-8", errors="replace")[-PREVIEW_CHARS:]
