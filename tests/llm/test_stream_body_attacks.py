"""A hostile endpoint against the streamed answer's body as stream_watch's worker reads it (through httpx2's
decoding, llm/stream_watch.py `_body`): compression bombs, an encoding that lies, a body that goes on past
the answer's end, a reset mid-body, a chunk-size line that never ends. Raw servers on real sockets."""

from __future__ import annotations

import gzip
from concurrent.futures import ThreadPoolExecutor
import socket
import struct
import threading
import tracemalloc
import zlib

import pytest

from config import Settings
from llm import AnthropicProvider, LLMError, Request
from llm.contract import ErrorKind
from llm.anthropic_http import AnthropicHTTP
from llm.stream_watch import MAX_LINE_BYTES, MalformedStream, StreamTimeout, sse_events, watched_events
from support.agents import TEST_KEY
from support.sockets import Endless
from test_concurrent_streams import CHUNKED, START, WAIT, Scripted, chunk, sse

PARAMS = {"model": "m", "max_tokens": 64, "system": "", "messages": [{"role": "user", "content": "hi"}]}
STOP = {"type": "message_stop"}


def bomb(piece: bytes, total: int) -> bytes:
    """gzip of `piece` repeated to `total` bytes, compressed a piece at a time (never all in memory)."""
    z = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    block = piece * (1 << 20 // len(piece))
    out = [z.compress(block) for _ in range(total // len(block))]
    return b"".join(out) + z.flush()


def gzipped(body: bytes, more: list | None = None) -> list:
    """An answer whose body is `body` (already gzip), chunked, then `more` pieces (the end by default)."""
    head = CHUNKED.replace(b"\r\n\r\n", b"\r\ncontent-encoding: gzip\r\n\r\n")
    pieces = [chunk(body[i:i + 65536]) for i in range(0, len(body), 65536)]
    return [head, *pieces, *(more if more is not None else [b"0\r\n\r\n"])]


def events(server: Scripted, idle: float = WAIT) -> list[dict]:
    client = AnthropicHTTP(server.url, TEST_KEY, WAIT)
    try:
        return list(watched_events(lambda: client.open(PARAMS), idle=idle, total=WAIT))
    finally:
        client.close()


def workers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "s08-model-call"]


def test_a_gzip_bomb_of_one_line_is_refused_having_held_a_bounded_part_of_it():
    # 1 GiB of one line in about 1 MiB of gzip: httpx2 decodes it a piece at a time, the line is refused at
    # MAX_LINE_BYTES, and the memory held at once stays near that bound.
    server = Scripted([gzipped(bomb(b"x", 1 << 30), [threading.Event()])])
    tracemalloc.start()
    try:
        with pytest.raises(MalformedStream, match="a line of the stream is longer"):
            events(server)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        server.close()
    assert peak < 4 * MAX_LINE_BYTES


def test_an_event_of_endless_data_lines_is_refused_at_the_bound():
    # No blank line ever ends the event: its data lines together are refused at MAX_LINE_BYTES (they used to
    # be kept, all of them, for as long as the server sent them — a gzip bomb made that gigabytes).
    def lines():
        for _ in range(4 * MAX_LINE_BYTES // 65536):
            yield b"data: x\n" * 8192
        yield b"\n"
    with pytest.raises(MalformedStream, match="an event's data is longer"):
        list(sse_events(lines()))


def test_a_gzip_bomb_of_blank_lines_stops_being_read_once_the_call_gave_up():
    # Blank lines decode to no event, so the idle timer ends the call; the worker then stops reading the
    # bomb and ends (it used to go on through every blank line, each read costing a copy of the rest of its
    # chunk: hours of CPU after the call was gone).
    before = set(workers())
    hold = threading.Event()
    server = Scripted([gzipped(bomb(b"\n", 1 << 30), [hold])])
    try:
        with pytest.raises(StreamTimeout):
            events(server, idle=0.5)
        for worker in set(workers()) - before:
            worker.join(WAIT)
            assert not worker.is_alive()
    finally:
        hold.set()
        server.close()


def test_a_body_that_says_gzip_and_is_not_fails_in_one_line_and_the_next_call_gets_a_fresh_connection():
    head = CHUNKED.replace(b"\r\n\r\n", b"\r\ncontent-encoding: gzip\r\n\r\n")
    good = gzip.compress(sse(START, STOP))
    good_answer = [head, chunk(good), b"0\r\n\r\n"]
    server = Scripted([[head, chunk(b"this is not gzip at all\n" * 10), b"0\r\n\r\n"], good_answer])
    provider = AnthropicProvider(Settings(anthropic_api_key=TEST_KEY, anthropic_base_url=server.url,
                                          api_max_retries=0, model_id="m", api_timeout=WAIT))
    try:
        with pytest.raises(LLMError) as caught:
            provider.stream(Request(**PARAMS))
        assert "\n" not in str(caught.value) and len(str(caught.value)) < 1000
        assert "Decoding" in str(caught.value) or "decompress" in str(caught.value).lower()
        client = AnthropicHTTP(server.url, TEST_KEY, WAIT)
        got = []
        for data in watched_events(lambda: client.open(PARAMS), idle=WAIT, total=WAIT):
            got.append(data)
            if data["type"] == "message_stop":
                break
        client.close()
        assert got == [START, STOP]
    finally:
        server.close()


def test_a_body_that_never_ends_after_message_stop_is_cut_at_the_idle_deadline():
    # The caller stops at message_stop and waits for the worker's end of the body; pings (which do not count)
    # keep coming forever: the wait ends at the idle deadline, the read is aborted and the server hung up on.
    server = Endless(CHUNKED + chunk(sse(START, STOP)), chunk(b"event: ping\ndata: {\"type\": \"ping\"}\n\n"))
    client = AnthropicHTTP(server.url, TEST_KEY, WAIT)
    try:
        got = []
        for data in watched_events(lambda: client.open(PARAMS), idle=0.5, total=WAIT):
            got.append(data)
            if data["type"] == "message_stop":
                break
        assert got == [START, STOP]
        assert server.hung_up.wait(WAIT)
    finally:
        client.close()
        server.close()


class Resets:
    """Answers `first`, then resets the connection (an RST, not a FIN); a later connection gets `then`."""

    def __init__(self, first: bytes, then: bytes | None = None):
        from support.sockets import listening
        self.first, self.then, self.served = first, then, 0
        self.sock, self.url = listening()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        conn, _ = self.sock.accept()
        conn.recv(65536)
        self.served += 1
        conn.sendall(self.first)
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        conn.close()
        while self.then is not None:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.recv(65536)
                self.served += 1          # before the answer: the client may be done as soon as it is sent
                conn.sendall(self.then)

    def close(self) -> None:
        self.sock.close()


def test_a_reset_mid_body_fails_the_call_in_one_line_as_a_dropped_connection():
    server = Resets(CHUNKED + chunk(sse(START)) + b"10\r\nevent: content_")
    provider = AnthropicProvider(Settings(anthropic_api_key=TEST_KEY, anthropic_base_url=server.url,
                                          api_max_retries=0, model_id="m", api_timeout=WAIT))
    try:
        with pytest.raises(LLMError) as caught:
            provider.stream(Request(**PARAMS))
    finally:
        server.close()
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 1000
    assert caught.value.kind is ErrorKind.DROPPED and caught.value.retryable, str(caught.value)


def test_a_reset_before_anything_was_shown_is_retried_and_the_retry_answers():
    answer = [START, {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
              {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "whole"}},
              {"type": "content_block_stop", "index": 0},
              {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}}, STOP]
    server = Resets(CHUNKED + chunk(sse(START)) + b"10\r\nevent: content_",
                    then=CHUNKED + chunk(sse(*answer)) + b"0\r\n\r\n")
    provider = AnthropicProvider(Settings(anthropic_api_key=TEST_KEY, anthropic_base_url=server.url,
                                          api_max_retries=1, model_id="m", api_timeout=WAIT))
    try:
        reply = provider.stream(Request(**PARAMS))
    finally:
        server.close()
    assert [b["text"] for b in reply.content] == ["whole"] and server.served == 2


def test_a_chunk_size_line_that_never_ends_fails_the_call():
    server = Endless(CHUNKED + chunk(sse(START)) + b"1", b"0" * 65536)
    provider = AnthropicProvider(Settings(anthropic_api_key=TEST_KEY, anthropic_base_url=server.url,
                                          api_max_retries=0, model_id="m", api_timeout=WAIT))
    try:
        with pytest.raises(LLMError) as caught:
            provider.stream(Request(**PARAMS))
        assert server.hung_up.wait(WAIT)
    finally:
        server.close()
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 1000


def test_half_the_calls_aborted_as_their_bodies_end_never_fail_the_others():
    # One client, eight threads, kept-alive connections handed from call to call: the even threads stop
    # reading at the event before message_stop (abort, as the body ends), the odd ones read to message_stop. No odd call may fail or miss an event (a socket shut down after its
    # connection went back to the pool would cut one).
    calls, rounds = 8, 100
    body = sse(START, {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}}, STOP)
    answer = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)
    server = Scripted([[answer] for _ in range(calls * rounds)])
    client = AnthropicHTTP(server.url, TEST_KEY, WAIT)
    barrier = threading.Barrier(calls)

    def run(n: int) -> list:
        out = []
        for _ in range(rounds):
            barrier.wait(WAIT)
            try:
                got = []
                for data in watched_events(lambda: client.open(PARAMS), idle=WAIT, total=WAIT):
                    got.append(data["type"])
                    if data["type"] == ("message_delta" if n % 2 == 0 else "message_stop"):
                        break
                out.append(got)
            except Exception as exc:  # noqa: BLE001 — the test reports it
                out.append(repr(exc))
        return out
    try:
        with ThreadPoolExecutor(calls) as pool:
            results = list(pool.map(run, range(calls)))
    finally:
        client.close()
        server.close()
    for n, got in enumerate(results):
        wanted = ["message_start", "message_delta"] if n % 2 == 0 else ["message_start", "message_delta", "message_stop"]
        assert got == [wanted] * rounds, (n, got)
