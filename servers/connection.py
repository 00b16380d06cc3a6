"""One MCP server's process (or HTTP session) and its calls, through the official SDK (`mcp`).

    Connection(entry, runner, stderr_path, environ)
      .start(timeout)      start it, initialize, list its tools; StartFailed says why in one line
      .call(tool, args, timeout)      a CallToolResult; CallFailed on a timeout, a dead server, an error
      .stop()

The SDK is asynchronous; s08 is not. All servers share one event loop in a daemon thread (`Runner`); each
connection is one task there that holds the SDK's context managers (stdio_client or streamable_http_client,
then ClientSession) until `stop`. A call is a coroutine submitted to that loop; the caller waits for it in
short slices, so Ctrl-C / Esc (a KeyboardInterrupt in the main thread) cancels the call's task — the SDK
then sends the server `notifications/cancelled` — and a server that dies mid-call ends the wait at once.

A stdio server gets the person's environment without s08's secrets (the API key, the token, any value
s08 redacts) unless its entry's `env` names them; its stderr goes through a pipe into a file in the
session's folder, at most MAX_STDERR_BYTES of it (a server that floods stderr never blocks nor fills the
disk). A start that fails waits 1 s, 2 s, 4 s … (at most MAX_BACKOFF) before the next; a server that died
mid-call is started again at its next use — at once the first time, then with the same backoff.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import threading
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from redact import SECRET_SETTINGS
from storage import safe
from tools.background import own_env
from .config import Entry

# The SDK logs what a server sent that it could not parse (a traceback holding the server's bytes): never to
# s08's screen. What matters reaches the person as one cleaned line (servers/manager.py).
logging.getLogger("mcp").addHandler(logging.NullHandler())
logging.getLogger("mcp").propagate = False

MAX_STDERR_BYTES = 1_000_000
MAX_BACKOFF = 60.0
MAX_LIST_PAGES = 20
WAIT_SLICE = 0.1               # seconds between looks at a call that has not finished (Ctrl-C lands between)
STOP_WAIT = 5.0


class StartFailed(Exception):
    pass


class CallFailed(Exception):
    def __init__(self, message: str, died: bool = False):
        super().__init__(message)
        self.died = died


class Runner:
    """The event loop all MCP connections live on, in a daemon thread (started on first use)."""

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        self.lock = threading.Lock()

    def submit(self, coro) -> concurrent.futures.Future:
        with self.lock:
            if self.loop is None:
                self.loop = asyncio.new_event_loop()
                threading.Thread(target=self.loop.run_forever, name="s08-mcp", daemon=True).start()
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def close(self) -> None:
        with self.lock:
            if self.loop is not None:
                self.loop.call_soon_threadsafe(self.loop.stop)
                self.loop = None


def server_environ(environ: dict[str, str], secrets: tuple[str, ...], entry: Entry) -> dict[str, str]:
    """What a stdio server runs with: `environ` without s08's secrets (by name and by value), then its `env`,
    then the tag that marks it as s08's own process (tools/background.py)."""
    hidden = {s for s in secrets if s}
    kept = {k: v for k, v in environ.items() if k not in SECRET_SETTINGS and v not in hidden}
    return {**kept, **dict(entry.env), **own_env()}      # s08's own: no command's end claims or kills it


class _StderrSink:
    """The write end of a pipe (what the server's stderr is) and a thread copying it to `path`, bounded."""

    def __init__(self, path: Path):
        # s08's own file, in the session's folder: never made or written through a link a repository
        # planted (.sessions -> elsewhere); storage/safe.py refuses those with one line
        os.close(safe.open_folder(path.parent, create=True))
        try:
            fd = safe.open_append(path)
        except FileNotFoundError:
            fd = safe.open_append(path, create=True)
        read_end, write_end = os.pipe()
        self.file = os.fdopen(write_end, "w")
        threading.Thread(target=self._drain, args=(read_end, fd), daemon=True, name="s08-mcp-stderr").start()

    @staticmethod
    def _drain(read_end: int, fd: int) -> None:
        written = 0
        try:
            while chunk := os.read(read_end, 65536):
                if written < MAX_STDERR_BYTES:
                    piece = chunk[: MAX_STDERR_BYTES - written]
                    os.write(fd, piece)
                    written += len(piece)
                    if written >= MAX_STDERR_BYTES:
                        os.write(fd, b"\n[s08: more stderr was dropped]\n")
        except OSError:
            pass
        finally:
            os.close(read_end)
            os.close(fd)

    def close(self) -> None:
        try:
            self.file.close()
        except OSError:
            pass


class Connection:
    def __init__(self, entry: Entry, runner: Runner, stderr_path: Path, environ: dict[str, str],
                 secrets: tuple[str, ...] = (), workspace: Path | None = None):
        self.entry, self.runner, self.stderr_path = entry, runner, stderr_path
        self.environ, self.secrets, self.workspace = environ, secrets, workspace
        self.session: Any = None
        self.listed: list = []
        self.instructions = ""
        self.state = "stopped"          # stopped, ready, failed (start failed or it died)
        self.problem = ""               # the last failure, one line
        self.failures = 0               # failed starts in a row
        self.deaths = 0                 # times it stopped while running, in this session
        self.retry_at = 0.0
        self.starts = 0
        self._task: concurrent.futures.Future | None = None
        self._sink: _StderrSink | None = None
        self._stop: asyncio.Event | None = None

    # ---- start and stop ----------------------------------------------------------------------
    def backoff_left(self) -> float:
        return max(0.0, self.retry_at - time.monotonic())

    def start(self, timeout: float) -> None:
        """Start (again): StartFailed with one line when it does not answer within `timeout` seconds."""
        self.stop()
        self.starts += 1
        ready: concurrent.futures.Future = concurrent.futures.Future()
        self._task = self.runner.submit(self._run(ready))
        try:
            self.listed = ready.result(timeout=timeout)
        except concurrent.futures.TimeoutError:
            self._failed(f"did not start within {timeout:g} s (MCP_TIMEOUT)")
        except KeyboardInterrupt:
            self.stop()
            raise
        except BaseException as exc:  # whatever the SDK or the process raised: one line, the session goes on
            self._failed(f"did not start: {_one_line(exc)}")
        self.state, self.problem, self.failures = "ready", "", 0

    def _failed(self, why: str) -> None:
        self.stop()
        self.state, self.problem = "failed", why
        self.failures += 1
        self.retry_at = time.monotonic() + min(MAX_BACKOFF, 2.0 ** (self.failures - 1))
        raise StartFailed(why)

    async def _run(self, ready: concurrent.futures.Future) -> None:
        self._stop = asyncio.Event()
        try:
            async with AsyncExitStack() as stack:
                read, write = await self._transport(stack)
                from mcp import ClientSession
                from mcp.types import Implementation
                session = await stack.enter_async_context(
                    ClientSession(read, write, client_info=Implementation(name="s08", version="1")))
                init = await session.initialize()
                self.instructions = str(getattr(init, "instructions", "") or "")
                listed = await self._list(session)
                self.session = session
                if not ready.done():
                    ready.set_result(listed)
                await self._stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else StartFailed(_one_line(exc)))
            elif not self._stop.is_set():
                self.state, self.problem = "failed", f"stopped: {_one_line(exc)}"
            if not isinstance(exc, Exception):
                raise
        finally:
            self.session = None
            if self.state == "ready" and not self._stop.is_set():
                self.state, self.problem = "failed", "the server stopped"
            if self._sink is not None:       # whatever happened after the pipe was made
                self._sink.close()
                self._sink = None

    async def _transport(self, stack: AsyncExitStack):
        if self.entry.kind == "http":
            from mcp.client.streamable_http import streamable_http_client
            import httpx2          # the SDK's HTTP client library
            client = await stack.enter_async_context(httpx2.AsyncClient(
                headers=dict(self.entry.headers), timeout=httpx2.Timeout(30.0, read=300.0)))
            streams = await stack.enter_async_context(streamable_http_client(self.entry.url, http_client=client))
            return streams[0], streams[1]
        from mcp.client.stdio import StdioServerParameters, stdio_client
        self._sink = _StderrSink(self.stderr_path)
        params = StdioServerParameters(command=self.entry.command, args=list(self.entry.args),
                                       env=server_environ(self.environ, self.secrets, self.entry),
                                       cwd=str(self.workspace) if self.workspace else None)
        streams = await stack.enter_async_context(stdio_client(params, errlog=self._sink.file))
        return streams[0], streams[1]

    @staticmethod
    async def _list(session) -> list:
        tools, cursor = [], None
        for _ in range(MAX_LIST_PAGES):
            from mcp.types import PaginatedRequestParams
            page = await session.list_tools(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
            tools += list(page.tools or [])
            cursor = getattr(page, "next_cursor", None) or getattr(page, "nextCursor", None)
            if not cursor:
                break
        return tools

    def stop(self) -> None:
        task, stop, loop = self._task, self._stop, self.runner.loop
        self._task = None
        if task is None or task.done():
            return
        if stop is not None and loop is not None:
            loop.call_soon_threadsafe(stop.set)
        if self.session is None:
            task.cancel()               # still starting (or stuck in initialize): nothing to end gracefully
        try:
            task.result(timeout=STOP_WAIT)
        except BaseException:  # stopping never raises: the process is killed by the SDK's exit either way
            task.cancel()
        if self.state == "ready":
            self.state = "stopped"

    @property
    def alive(self) -> bool:
        return self.state == "ready" and self.session is not None and self._task is not None and not self._task.done()

    # ---- calls -------------------------------------------------------------------------------
    def call(self, tool: str, args: dict, timeout: float):
        session = self.session
        if session is None:
            raise CallFailed("the server is not running", died=True)
        future = self.runner.submit(session.call_tool(tool, args, read_timeout_seconds=timeout))
        try:
            while True:
                try:
                    return future.result(timeout=WAIT_SLICE)
                except concurrent.futures.TimeoutError:
                    if not self.alive:
                        future.cancel()
                        self._died(self.problem or "it exited")
                        raise CallFailed(f"the server stopped during the call ({self.problem})", died=True) from None
        except KeyboardInterrupt:
            future.cancel()                 # the SDK tells the server (notifications/cancelled)
            raise
        except concurrent.futures.CancelledError:
            raise CallFailed("the call was cancelled") from None
        except CallFailed:
            raise
        except Exception as exc:  # the SDK's error for what the server answered, or the connection's end
            why = _one_line(exc)
            if self.alive and "timed out" in why:           # the SDK's own deadline: it told the server
                raise CallFailed(f"no answer within {timeout:g} s (MCP_TOOL_TIMEOUT); the call was cancelled") from None
            died = not self.alive or why == "Connection closed"
            if died:
                self._died(why)
            raise CallFailed(("the server stopped during the call: " if died else "") + why, died) from None

    def _died(self, why: str) -> None:
        """It stopped while running: started again at its next use — at once the first time, then after
        1 s, 2 s, 4 s … (a server that dies at every call cannot make every call wait for a start)."""
        self.stop()
        self.deaths += 1
        self.state, self.problem = "failed", f"stopped: {why}"
        self.retry_at = time.monotonic() + (0.0 if self.deaths == 1 else min(MAX_BACKOFF, 2.0 ** (self.deaths - 2)))


def _one_line(exc: BaseException) -> str:
    """An exception as one short line (an ExceptionGroup: its first leaf)."""
    while getattr(exc, "exceptions", None):          # an ExceptionGroup (anyio's task groups raise them)
        exc = exc.exceptions[0]  # type: ignore[attr-defined]
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:300]
