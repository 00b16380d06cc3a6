"""s08 talks to the Anthropic API over plain HTTP (llm/anthropic_http.py), not the SDK: each request is the one
the SDK sends, its failures read as the SDK's do, and neither a call nor the key check imports the SDK (its
import made the first answer wait)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from config import Settings
from llm import AnthropicProvider, ErrorKind, LLMError, Request, check_key
from llm.anthropic_http import AnthropicHTTP, StatusFailure
from support.agents import TEST_KEY
from support.sockets import free_port

ROOT = Path(__file__).resolve().parents[2]
PARAMS = {"model": "claude-sonnet-4-6", "max_tokens": 64, "system": "be brief",
          "messages": [{"role": "user", "content": "héllo"}]}


class Capture:
    """A server that records each request (path, headers, body) and answers `status` with `body`."""

    def __init__(self, status: int = 500, body: bytes = b'{"type":"error","error":{"type":"api_error","message":"x"}}',
                 headers: dict | None = None):
        self.seen: list[tuple[str, dict, bytes]] = []
        capture = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                self.do_POST()

            def do_POST(self):
                data = self.rfile.read(int(self.headers.get("content-length") or 0))
                capture.seen.append((self.path, {k.lower(): v for k, v in self.headers.items()}, data))
                self.send_response(status)
                for name, value in {"content-type": "application/json", **(headers or {})}.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/gateway"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def capture():
    server = Capture()
    yield server
    server.close()


def _ours(url: str, **settings) -> LLMError:
    provider = AnthropicProvider(Settings(anthropic_base_url=url, api_max_retries=0, **settings))
    with pytest.raises(LLMError) as caught:
        provider.stream(Request(**PARAMS))
    return caught.value


@pytest.mark.parametrize("credential", ["anthropic_api_key", "anthropic_auth_token"])
def test_the_request_is_the_one_the_sdk_sends(capture, monkeypatch, credential):
    import anthropic
    monkeypatch.setenv("ANTHROPIC_CUSTOM_HEADERS", "X-Team: blue\nX-Trace: 7")
    _ours(capture.url, **{credential: TEST_KEY})
    sdk = anthropic.Anthropic(base_url=capture.url, max_retries=0,
                              **{credential.removeprefix("anthropic_"): TEST_KEY})
    with pytest.raises(anthropic.APIStatusError):
        with sdk.messages.with_streaming_response.create(stream=True, **PARAMS):
            pass
    (our_path, ours, our_body), (sdk_path, theirs, sdk_body) = capture.seen
    assert our_path == sdk_path == "/gateway/v1/messages"
    assert json.loads(our_body) == json.loads(sdk_body) == {**PARAMS, "stream": True}
    assert len(our_body) == len(sdk_body) and "héllo".encode() in our_body      # compact, UTF-8 as it is
    for name in ("authorization", "anthropic-version", "content-type", "accept", "x-team", "x-trace"):
        assert ours[name] == theirs[name], name
    assert ours["authorization"] == f"Bearer {TEST_KEY}" and ours["x-team"] == "blue"


@pytest.mark.parametrize("status, body, kind, words", [
    (429, b'{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}', ErrorKind.RATE_LIMIT,
     "Rate limited (429): slow down"),
    (401, b'{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}', ErrorKind.AUTH,
     "Authentication failed (401)"),
    (502, b"<html>Bad Gateway</html>", ErrorKind.SERVER, "API error (502): <html>Bad Gateway</html>"),
    (500, b"", ErrorKind.SERVER, "API error (500): Error code: 500"),
])
def test_a_status_error_reads_as_the_sdks_did(status, body, kind, words):
    import anthropic
    server = Capture(status, body, {"retry-after": "3"})
    try:
        with pytest.raises(StatusFailure) as ours:
            with AnthropicHTTP(server.url, TEST_KEY, 30).open(PARAMS):
                pass
        with pytest.raises(anthropic.APIStatusError) as theirs:
            client = anthropic.Anthropic(base_url=server.url, api_key=TEST_KEY, max_retries=0)
            with client.messages.with_streaming_response.create(stream=True, **PARAMS):
                pass
        err = _ours(server.url, anthropic_api_key=TEST_KEY)
    finally:
        server.close()
    mine, sdk = ours.value, theirs.value
    assert (mine.status_code, mine.body, mine.message) == (sdk.status_code, sdk.body, sdk.message)
    assert mine.response.headers["retry-after"] == sdk.response.headers["retry-after"] == "3"
    assert err.kind == kind and str(err).startswith(words)
    assert err.retry_after == (None if kind == ErrorKind.AUTH else 3.0)


def test_the_key_check_asks_what_the_sdk_asked(capture):
    import anthropic
    assert not check_key(TEST_KEY, capture.url).ok
    with pytest.raises(anthropic.APIStatusError):
        anthropic.Anthropic(base_url=capture.url, api_key=TEST_KEY, max_retries=0).models.list(limit=1)
    (our_path, ours, _), (sdk_path, theirs, _) = capture.seen
    assert our_path == sdk_path == "/gateway/v1/models?limit=1"
    for name in ("authorization", "anthropic-version", "accept", "content-type"):
        assert ours.get(name) == theirs.get(name), name


@pytest.mark.parametrize("status, refused", [(401, True), (403, True), (500, False), (404, False)])
def test_the_key_check_says_refused_only_for_401_and_403(status, refused):
    server = Capture(status)
    try:
        check = check_key("a-key-12345678", server.url)
    finally:
        server.close()
    assert (check.ok, check.refused) == (False, refused)
    assert check.reason == (f"{server.url} refused the key ({status})" if refused
                            else f"{server.url} answered {status} to the check")


def test_the_key_check_passes_with_a_good_key(standin):
    assert check_key(TEST_KEY, standin.url).ok
    assert not check_key("a-wrong-key-123", standin.url).ok


def test_no_server_reads_as_a_refused_connection():
    port = free_port()
    err = _ours(f"http://127.0.0.1:{port}", anthropic_api_key=TEST_KEY)
    assert err.kind == ErrorKind.CONNECTION and f"Cannot connect to http://127.0.0.1:{port}: connection refused" in str(err)


def test_neither_a_call_nor_the_key_check_imports_the_sdk(standin):
    script = ("import sys\n"
              "from config import Settings\n"
              "from llm import AnthropicProvider, Request, check_key\n"
              f"p = AnthropicProvider(Settings(anthropic_base_url={standin.url!r}, anthropic_api_key={TEST_KEY!r}))\n"
              f"assert check_key({TEST_KEY!r}, {standin.url!r}).ok\n"
              "p.warm()\n"
              f"reply = p.stream(Request(**{PARAMS!r}))\n"
              "print(reply.content[0]['text'], 'anthropic' in sys.modules)\n")
    standin.queue({"text": "answered"})
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC")}
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["answered", "False"], out.stderr
