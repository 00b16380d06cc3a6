"""A hostile endpoint against s08's own HTTP client (llm/anthropic_http.py) and its window probe
(llm/window_probe.py), over real sockets: endless and gigantic bodies, redirects that would carry the key
to another host, headers that would inject lines. Each server here is a few lines of raw socket code, so
it can do what no correct server does."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from config import Settings
from llm import AnthropicProvider, LLMError, Request, check_key
from llm.anthropic_http import MAX_ANSWER_BYTES
from llm.window_probe import WindowProbe
from support.agents import TEST_KEY
from support.sockets import Endless, listening

PARAMS = {"model": "m", "max_tokens": 64, "system": "", "messages": [{"role": "user", "content": "hi"}]}


def endless(head: bytes, fill: bytes = b"x") -> Endless:
    """`head` (status line and headers), chunked, then 64 KiB chunks of `fill` until the client hangs up
    (256 MiB at most: far past the bound)."""
    return Endless(head + b"Transfer-Encoding: chunked\r\n\r\n", b"%x\r\n%s\r\n" % (65536, (fill * 65536)[:65536]),
                   1 << 28)


@pytest.mark.parametrize("fill", [b"x", b"\xff\xfe"])
def test_an_endless_error_body_is_read_only_to_a_bound(fill):
    """An error status whose body never ends: the call fails on the status with a short line, having read
    a bounded prefix, and hangs up — it used to read until API_TOTAL_TIMEOUT (gigabytes in memory) and go
    on reading after the call had given up."""
    server = endless(b"HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain\r\n", fill)
    provider = AnthropicProvider(Settings(anthropic_base_url=server.url, anthropic_api_key=TEST_KEY,
                                          api_max_retries=0, api_total_timeout=120))
    try:
        with pytest.raises(LLMError) as caught:
            provider.stream(Request(**PARAMS))
        assert server.hung_up.wait(60)
    finally:
        server.close()
    assert "500" in str(caught.value) and "API_TOTAL_TIMEOUT" not in str(caught.value)
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 1000
    assert server.sent < 64 * MAX_ANSWER_BYTES          # what the socket buffers held, not the stream


def test_the_key_check_does_not_read_an_endless_answer():
    """/login's one-model list answered with a body that never ends: the check reads a bounded prefix and
    ends (on the status: the key was taken) — it used to read forever, with no deadline at all."""
    server = endless(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n", b" ")
    try:
        check = check_key(TEST_KEY, server.url, timeout=60)
        assert server.hung_up.wait(60)
    finally:
        server.close()
    assert check.ok


class Recorder:
    """A server that records each request's headers and answers `status`, with `location` when given."""

    def __init__(self, status: int = 404, location: str = ""):
        self.seen: list[dict] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                self.do_POST()

            def do_POST(self):
                self.rfile.read(int(self.headers.get("content-length") or 0))
                recorder.seen.append({k.lower(): v for k, v in self.headers.items()})
                self.send_response(status)
                if location:
                    self.send_header("location", location)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_to_another_host_does_not_carry_the_key(status):
    """The endpoint redirects to another origin (another port is one): the request follows as the SDK's
    did, but neither the Messages call nor the key check brings the key there."""
    elsewhere = Recorder(404)
    endpoint = Recorder(status, elsewhere.url + "/v1/messages")
    try:
        _fails(endpoint.url)
        check_key(TEST_KEY, endpoint.url)
    finally:
        endpoint.close()
        elsewhere.close()
    assert len(endpoint.seen) == 2 and endpoint.seen[0]["authorization"] == f"Bearer {TEST_KEY}"
    assert len(elsewhere.seen) == 2                  # followed, both
    for headers in elsewhere.seen:
        assert not any(TEST_KEY in value for value in headers.values()), headers


def test_the_window_probe_follows_no_redirect():
    """The probe sends the key (as both headers a local server may want): a redirect is not followed, so
    it goes to the endpoint's own host only."""
    elsewhere = Recorder(200)
    endpoint = Recorder(302, elsewhere.url + "/props")
    try:
        probe = WindowProbe(endpoint.url, "m", TEST_KEY)
        probe.run()
    finally:
        endpoint.close()
        elsewhere.close()
    assert probe.result() is None and len(endpoint.seen) >= 3 and elsewhere.seen == []


def _fails(url: str, **settings) -> LLMError:
    provider = AnthropicProvider(Settings(anthropic_base_url=url, anthropic_api_key=TEST_KEY, api_max_retries=0,
                                          **settings))
    with pytest.raises(LLMError) as caught:
        provider.stream(Request(**PARAMS))
    return caught.value


class Drip:
    """A raw server that answers every connection with a status line and headers a byte at a time, each
    byte in well under the probe's timeout, never ending them; `hung_up` counts connections the client
    closed."""

    def __init__(self):
        self.hung_up = threading.Semaphore(0)
        self.stop = threading.Event()
        self.sock, self.url = listening()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._drip, args=(conn,), daemon=True).start()

    def _drip(self, conn) -> None:
        conn.recv(65536)
        try:
            conn.sendall(b"HTTP/1.1 200 OK\r\nX-Pad: ")
            while not self.stop.wait(0.1):
                conn.sendall(b"a")             # one header line that never ends (http.client allows 64 KiB)
        except OSError:
            self.hung_up.release()
        finally:
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


def test_the_window_probe_ends_on_a_server_that_drips_its_headers():
    """TIMEOUT bounds a question from connection to last byte: a server that keeps the status line and
    headers coming (each byte within the socket timeout) used to hold the probe's questions forever."""
    server = Drip()
    try:
        probe = WindowProbe.start(server.url, "m", TEST_KEY, timeout=0.5)
        assert probe.done.wait(60)
        assert server.hung_up.acquire(timeout=60)
    finally:
        server.close()
    assert probe.result() is None
