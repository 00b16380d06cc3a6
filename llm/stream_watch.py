"""One streamed HTTP answer, read with a total deadline and an idle timer that pings do not reset.

    for data in watched_events(open_response, idle=API_TIMEOUT, total=API_TOTAL_TIMEOUT):
        ...                     # each SSE event's JSON data, in order (pings left out)

A worker thread sends the request (llm/anthropic_http.py) and reads the SSE stream; the caller's thread
waits on a queue against two clocks, so nothing a server does — never answering, trickling bytes,
pinging forever — holds a call longer than `total`, and only events that carry the answer reset the
`idle` timer. On a deadline or Ctrl-C the worker's socket is shut down, which ends its blocking read;
a worker still waiting for the response headers ends at the HTTP client's own read timeout.

The socket is shut down only while it is still this reader's. Once a response is closed its connection
is back in the shared pool, where another thread's call (a summary prepared in the background, a
sub-agent) may already be using it: shutting it down then cut that call ("Server disconnected"). The
HTTP client's own `iter_bytes()` closes the response the moment the body ends, in the worker's thread,
so a check in `abort` could pass just before that and the shutdown land just after. So the worker
reads the body without that close and releases the connection itself, marking it released under a lock
that `abort` holds around its check and its shutdown: a shutdown lands before the release or not at all
(one before it, on a body already whole, hands the pool a shut connection, which its idle check drops).
Neither holds the lock over a read, so `abort` never waits on the network. The body is the response's
raw stream decoded by a second httpx2 Response made over it (`_body`): any Content-Encoding is decoded
exactly as `iter_bytes` decodes it, so the request keeps the SDK's Accept-Encoding (no `identity`) and
s08 has no decoder of its own.
A caller that stops at the answer's last event (message_stop) first waits for the worker to finish the
body, which the server has sent whole, so the connection goes back to the pool for the next call
instead of being cut. Lines longer than MAX_LINE_BYTES are refused instead of buffered, and so is an
event whose data lines together are longer; httpx2 decodes a compressed body a bounded piece at a time,
so a small gzip body that would decode to gigabytes is refused at that bound too. Once aborted the worker
reads no further piece of the body (a body of blank lines, which has no event, would keep it busy).
"""

from __future__ import annotations

import itertools
import queue
import socket
import threading
import time
from typing import Callable, Iterator

import json_text
MAX_LINE_BYTES = 4 * 1024 * 1024


class StreamTimeout(Exception):
    """No answer data for `idle` seconds, or the whole call passed `total` seconds."""

    def __init__(self, which: str, seconds: float):
        super().__init__(f"{which} timeout after {seconds:g}s")
        self.which, self.seconds = which, seconds


class MalformedStream(Exception):
    """The body is not a stream of SSE events with JSON data."""


def sse_events(chunks) -> Iterator[tuple[str, str]]:
    """(event name, data) pairs from a byte stream in the SSE format. A line, or an event's data lines
    together, longer than MAX_LINE_BYTES is refused; each chunk is read once (a chunk of a million short
    lines costs a million steps, not a million copies of the chunk)."""
    pending, name, size = b"", "", 0
    data: list[str] = []
    for chunk in chunks:
        pending += chunk
        start = 0
        while (cut := pending.find(b"\n", start)) >= 0:
            line, start = pending[start:cut].rstrip(b"\r").decode("utf-8", "replace"), cut + 1
            if not line:
                if data:
                    yield name, "\n".join(data)
                name, data, size = "", [], 0
            elif line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))
                size += len(line)
                if size > MAX_LINE_BYTES:
                    raise MalformedStream(f"an event's data is longer than {MAX_LINE_BYTES:,} bytes")
        pending = pending[start:]
        if len(pending) > MAX_LINE_BYTES:
            raise MalformedStream(f"a line of the stream is longer than {MAX_LINE_BYTES:,} bytes")
    if data:
        yield name, "\n".join(data)


class _Worker(threading.Thread):
    def __init__(self, open_response: Callable):
        super().__init__(daemon=True, name="s08-model-call")
        self.open_response = open_response
        self.queue: queue.Queue = queue.Queue()
        self.cancelled, self.http = False, None
        self.lock, self.released = threading.Lock(), False     # the connection's handover (module docstring)

    def run(self) -> None:
        try:
            with self.open_response() as response:
                http = self.http = response.http_response
                try:
                    if self.cancelled:
                        return
                    body = _body(http, self.release)       # read no further once aborted (a body of
                    chunks = itertools.takewhile(lambda _: not self.cancelled, body)   # blank lines has no event)
                    for name, data in sse_events(chunks):
                        if self.cancelled:
                            return
                        if name != "ping":
                            self.queue.put(("event", data))
                finally:
                    self.release()
            self.queue.put(("end", None))
        except BaseException as exc:  # noqa: BLE001 — handed to the caller's thread
            self.queue.put(("error", exc))

    def release(self) -> None:
        """Close the response (its connection back to the pool); from now on `abort` leaves the socket alone."""
        with self.lock:
            first, self.released = not self.released, True
        if first and self.http is not None:
            self.http.close()

    def abort(self) -> None:
        """End the worker's read, if the connection is still the worker's (see the module docstring)."""
        self.cancelled = True
        http = self.http
        stream = http.extensions.get("network_stream") if http is not None else None
        sock = stream.get_extra_info("socket") if stream is not None else None
        if sock is None:
            return
        with self.lock:
            if self.released:       # back in the pool (or gone): maybe another call's by now
                return
            try:
                sock.shutdown(socket.SHUT_RDWR)     # wakes the worker's blocking read
            except OSError:
                pass


def _body(http, release: Callable[[], None]) -> Iterator[bytes]:
    """`http`'s body decoded as its `iter_bytes()` decodes it, whose end calls `release` instead of closing
    `http` (httpx2's Response over a byte stream of ours, whose close is that call)."""
    import httpx2

    class Body(httpx2.SyncByteStream):
        def __iter__(self) -> Iterator[bytes]:
            yield from http.stream

        def close(self) -> None:
            release()
    return httpx2.Response(http.status_code, headers=http.headers, stream=Body(), request=http.request).iter_bytes()


def watched_events(open_response: Callable, idle: float, total: float) -> Iterator[dict]:
    """Each event's parsed data. Raises StreamTimeout, MalformedStream, or what the request raised."""
    worker = _Worker(open_response)
    started = last = time.monotonic()
    worker.start()
    done = complete = False
    try:
        while True:
            now = time.monotonic()
            if now >= started + total:
                raise StreamTimeout("total", total)
            if now >= last + idle:
                raise StreamTimeout("idle", idle)
            try:
                kind, item = worker.queue.get(timeout=min(started + total, last + idle) - now)
            except queue.Empty:
                continue
            if kind in ("end", "error"):
                done = True
                if kind == "error":
                    raise item
                return
            last = time.monotonic()
            try:
                data = json_text.loads(item)
            except (ValueError, RecursionError):
                raise MalformedStream("an event's data is not JSON") from None
            complete = isinstance(data, dict) and data.get("type") == "message_stop"
            yield data
    finally:
        if not done and complete:       # the caller stopped at the answer's end: the body is all sent,
            done = _finished(worker, min(started + total, last + idle))     # let the worker finish it
        if not done:
            worker.abort()      # it is still reading: end it (a released connection is left alone)


def _finished(worker: _Worker, deadline: float) -> bool:
    """Wait (until `deadline`) for the worker's end of the body; True once it came."""
    while (left := deadline - time.monotonic()) > 0:
        try:
            kind, _ = worker.queue.get(timeout=left)
        except queue.Empty:
            return False
        if kind in ("end", "error"):
            return True
    return False
