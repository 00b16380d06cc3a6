"""Model calls in flight at once share one client and its connection pool (a summary prepared in the
background beside the loop's own call, later parallel sub-agents). A call that stops reading once its
answer is complete, or that is aborted (a deadline, Ctrl-C, a reply refused halfway) as its body ends, must
never cut a connection the pool has already handed to another call. `Scripted` is a raw HTTP server whose
bytes, and the moments it sends them, the test controls."""

from __future__ import annotations

import gzip
import json
import re
import socket
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from types import SimpleNamespace

import httpx2

from config import Settings
from llm import AnthropicProvider, LLMError, Request
from llm.anthropic_http import AnthropicHTTP
from llm.stream_watch import watched_events
from standin import StandIn
from support.agents import TEST_KEY
from support.helpers import user
from support.sockets import listening

CALLS, ROUNDS = 8, 6
WAIT = 60          # seconds: only a failing test waits this long


def test_many_streams_finishing_at_the_same_moment_all_succeed():
    barrier = threading.Barrier(CALLS)

    def brain(body):
        barrier.wait(timeout=60)        # every answer is released at the same moment
        return {"text": "done " + body["messages"][-1]["content"]}
    server = StandIn(brain=brain, api_key=TEST_KEY).start()
    try:
        provider = AnthropicProvider(Settings(anthropic_api_key=TEST_KEY, anthropic_base_url=server.url,
                                              api_max_retries=0, model_id="claude-sonnet-4-6"))

        def calls(n: int) -> list[str]:
            out = []
            for r in range(ROUNDS):
                question = f"call {n} round {r}"
                try:
                    reply = provider.stream(Request(model="claude-sonnet-4-6", system="You are a test.",
                                                    messages=[user(question)], max_tokens=100))
                    out.append(reply.content[0]["text"])
                except LLMError as exc:
                    out.append(f"failed: {exc}")
                    barrier.abort()     # the others' answers would wait for this one forever
                    break
            return out
        with ThreadPoolExecutor(CALLS) as pool:
            answers = list(pool.map(calls, range(CALLS)))
        assert answers == [[f"done call {n} round {r}" for r in range(ROUNDS)] for n in range(CALLS)]
    finally:
        server.stop()


class Scripted:
    """A raw HTTP/1.1 server on a real socket whose answers a test controls byte by byte: the n-th request (on
    whichever kept-alive connection it comes) gets answers[n], pieces of bytes sent in order, each
    threading.Event among them waited for first (the test sets it). `connections` counts the accepted ones."""

    def __init__(self, answers: list[list]):
        self.answers, self.connections = list(answers), 0
        self.listener, self.url = listening()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            self._answer(conn)
        except OSError:
            pass                # the client went away (or its call was cut): the test says so
        finally:
            conn.close()

    def _answer(self, conn: socket.socket) -> None:
        pending = b""
        while True:                 # one request after another on this connection
            while b"\r\n\r\n" not in pending:
                if not (got := conn.recv(65536)):
                    return
                pending += got
            head, _, pending = pending.partition(b"\r\n\r\n")
            found = re.search(rb"(?im)^content-length:\s*(\d+)", head)
            length = int(found[1]) if found else 0
            while len(pending) < length:
                if not (got := conn.recv(65536)):
                    return
                pending += got
            pending = pending[length:]
            for piece in self.answers.pop(0):
                if isinstance(piece, threading.Event):
                    piece.wait(WAIT)
                else:
                    conn.sendall(piece)

    def close(self) -> None:
        try:
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.listener.close()


def sse(*events: dict) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


CHUNKED = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
START = {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
                                              "content": [], "stop_reason": None, "usage": {"input_tokens": 1}}}


class _AskedForTheSocket:
    """A connection's network stream whose socket, when asked for (only stream_watch's abort asks), is handed
    over only after `hook` returned."""

    def __init__(self, stream, hook):
        self.stream, self.hook = stream, hook

    def get_extra_info(self, info: str):
        if info == "socket":
            self.hook()
        return self.stream.get_extra_info(info)


class _Hooked(httpx2.BaseTransport):
    """httpx2's own transport and pool, each answer's `network_stream` extension behind _AskedForTheSocket."""

    def __init__(self, hook):
        self.inner, self.hook = httpx2.HTTPTransport(), hook

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        response = self.inner.handle_request(request)
        watched = _AskedForTheSocket(response.extensions["network_stream"], self.hook)
        return httpx2.Response(response.status_code, headers=response.headers, stream=response.stream,
                               extensions={**response.extensions, "network_stream": watched})

    def close(self) -> None:
        self.inner.close()


def test_an_abort_that_looked_before_the_body_ended_does_not_cut_the_next_call_on_that_connection():
    # A caller refuses a reply halfway, so abort() runs while the worker is still reading; it is held just
    # after taking the connection's socket while the server ends the body, the worker releases the
    # connection, and the pool hands that same connection to the next call. Then abort goes on: it must
    # leave the socket alone, and the next call gets its whole answer. (The hold is where abort asks the
    # connection for its socket, which it does before deciding anything; the socket it was handed is the
    # one the next call reads from.)
    end_first, end_second, asked, go, first_closed = (threading.Event() for _ in range(5))
    server = Scripted([[CHUNKED, chunk(sse(START)), end_first, b"0\r\n\r\n"],
                       [CHUNKED, chunk(b"part one, "), end_second, chunk(b"part two"), b"0\r\n\r\n"]])

    def abort_took_the_socket():
        asked.set()
        go.wait(WAIT)
    client = httpx2.Client(base_url=server.url, timeout=WAIT, transport=_Hooked(abort_took_the_socket))

    @contextmanager
    def first_call():
        response = client.send(client.build_request("POST", "/v1/messages", content=b"{}"), stream=True)
        try:
            yield SimpleNamespace(http_response=response)
        finally:
            response.close()
            first_closed.set()
    seen: list[dict] = []

    def refuse_halfway():
        events = watched_events(first_call, idle=WAIT, total=WAIT)
        seen.append(next(events))
        events.close()          # the caller stops reading: abort
    caller = threading.Thread(target=refuse_halfway, daemon=True)
    try:
        caller.start()
        assert asked.wait(WAIT)                 # abort is under way, the first body not yet ended
        end_first.set()
        assert first_closed.wait(WAIT)          # the worker has read the whole body and let the response go
        second = client.send(client.build_request("POST", "/v1/messages", content=b"{}"), stream=True)
        assert server.connections == 1         # the pool gave the next call the first call's connection
        go.set()
        caller.join(WAIT)
        assert not caller.is_alive() and seen == [START]
        end_second.set()
        assert second.read() == b"part one, part two"
    finally:
        go.set()
        end_first.set()
        end_second.set()
        client.close()
        server.close()


def test_an_answer_in_gzip_is_read_and_its_connection_serves_the_next_call():
    # The worker decodes the body as httpx2 does (here gzip); a caller that stops at message_stop waits for
    # the worker's end of the body, and the connection goes back to the pool whole: both calls use it.
    body = gzip.compress(sse(START, {"type": "message_stop"}))
    answer = (b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-encoding: gzip\r\n"
              b"content-length: %d\r\n\r\n%s" % (len(body), body))
    server = Scripted([[answer], [answer]])
    client = AnthropicHTTP(server.url, TEST_KEY, WAIT)
    try:
        for _ in range(2):
            got = []
            for data in watched_events(lambda: client.open({"model": "m", "max_tokens": 1}), idle=WAIT, total=WAIT):
                got.append(data)
                if data["type"] == "message_stop":
                    break
            assert got == [START, {"type": "message_stop"}]
        assert server.connections == 1
    finally:
        client.close()
        server.close()
