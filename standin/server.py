"""A local stand-in for the Anthropic Messages API, on 127.0.0.1, speaking the real wire format.

    StandIn(script=[...]).start()  ->  http://127.0.0.1:PORT   (point ANTHROPIC_BASE_URL here)

Every request is checked like the real API would (auth, then `validate_request`,
then "prompt is too long" against `context_window`), then answered with the
next scripted reply — or, when the script is empty, by the demo brain. A reply
is a dict (or a callable taking the request body and returning one):

    {"text": "hi"}                                   plain answer (end_turn)
    {"text": "...", "tool_calls": [{"name": "bash", "input": {...}}, ...]}
    {"text": "...", "stop_reason": "max_tokens"}    or any stop_reason
    {"error": 429, "retry_after": 1}                 HTTP error (401/429/500/529/400...)
    {"prompt_too_long": True}                        400 "prompt is too long: N tokens > M maximum"
    {"drop": "before"} / {"drop": "mid", "text": ..} connection closed before / during the answer
    {"stream_error": "overloaded_error", "text": ..} SSE error event after partial output
    {"hang": 5}                                      wait before answering (client timeouts)
    {"stall": 5, "text": ...}                        stop for 5 s half-way through the stream
    {"delay": 0.05, "chunk": 4}                      pace of the stream (seconds per chunk, chars)

Replies stream as SSE (chunked transfer encoding, so a drop is a real protocol
error) or come back as JSON, with `usage` always set. Admin endpoints let a
separate process drive a running stand-in: POST /_standin/queue (a list of
replies), GET /_standin/requests, POST /_standin/reset. Whoever can queue a
reply drives the agent talking to the stand-in (a tool call is a command it
runs), and any local process — or a web page, whose text/plain POST needs no
CORS preflight — can reach 127.0.0.1. So with an `api_key` the admin endpoints
require that key too, and `admin=False` (the built-in demo model) serves none.
"""

from __future__ import annotations

import hmac
import json
import secrets
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .cache import PromptCache
from .tokens import count_request_tokens, text_tokens
from .validate import InvalidRequest, validate_request

ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
               404: "not_found_error", 408: "timeout_error", 413: "request_too_large",
               429: "rate_limit_error", 500: "api_error", 503: "api_error", 529: "overloaded_error"}
ERROR_MESSAGES = {401: "invalid x-api-key", 429: "Number of request tokens has exceeded your per-minute "
                  "rate limit", 500: "Internal server error", 529: "Overloaded", 403: "Permission denied"}
DEFAULT_WINDOW = 200_000


def _id(prefix: str) -> str:
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    return prefix + "".join(secrets.choice(alphabet) for _ in range(24))


class StandIn:
    """The server object tests hold: start it, queue replies, read what it received."""

    def __init__(self, script=None, brain=None, strict: bool = True, context_window: int = DEFAULT_WINDOW,
                 api_key: str | None = None, port: int = 0, chunk: int = 12, delay: float = 0.0,
                 verbose: bool = False, cache: PromptCache | None = None, record: bool = True, admin: bool = True):
        self.replies = deque(script or [])
        self.brain = brain
        self.strict, self.context_window, self.api_key = strict, context_window, api_key
        self.chunk, self.delay, self.verbose = chunk, delay, verbose
        self.record = record                 # False: keep no request bodies (a long-running demo)
        self.admin = admin                   # False: no /_standin/ endpoints at all (tests drive it in-process)
        self.requests: list[dict] = []       # bodies of /v1/messages requests, in order
        self.rejections: list[str] = []      # 400 messages sent back for invalid requests
        self.answers: list[str] = []         # one line per /v1/messages request: "200 end_turn", "400 prompt is…"
        self.usages: list[dict] = []         # usage of every answered request, in order, with its body
        self.cache = cache or PromptCache()
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), _handler_for(self))
        self.httpd.daemon_threads = True
        self.thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def start(self) -> "StandIn":
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True,
                                       name="standin")   # a short poll: stop() returns at once
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def queue(self, *replies) -> None:
        with self.lock:
            self.replies.extend(replies)

    def next_reply(self, body: dict) -> dict:
        with self.lock:
            reply = self.replies.popleft() if self.replies else None
        if reply is None:
            if self.brain is None:
                return {"text": "(stand-in: no scripted reply left)"}
            reply = self.brain
        return reply(body) if callable(reply) else dict(reply)

    def wait_for_requests(self, n: int, timeout: float = 10.0) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if len(self.requests) >= n:
                return True
            time.sleep(0.02)
        return False


def _blocks_for(reply: dict) -> list[dict]:
    blocks = []
    if reply.get("text"):
        blocks.append({"type": "text", "text": reply["text"]})
    for call in reply.get("tool_calls") or []:
        blocks.append({"type": "tool_use", "id": call.get("id") or _id("toolu_01"), "name": call["name"],
                       "input": call.get("input", {})})
    return blocks


def _block_tokens(block: dict) -> int:
    if block["type"] == "text":
        return text_tokens(block["text"])
    return text_tokens(block["name"]) + text_tokens(json.dumps(block["input"]))


def _limit_output(blocks: list[dict], budget: int, stop_reason: str) -> tuple[list[dict], str, int]:
    """Cut the answer at `budget` output tokens, as max_tokens or the context window would."""
    used, kept = 0, []
    for block in blocks:
        cost = _block_tokens(block)
        if used + cost <= budget:
            kept.append(block)
            used += cost
            continue
        if block["type"] == "text":
            words, text = block["text"].split(" "), ""
            for w in words:
                if text_tokens(text + " " + w) + used > budget:
                    break
                text = (text + " " + w) if text else w
            if text.strip():
                kept.append({"type": "text", "text": text})
        else:
            kept.append({**block, "input": {}, "_partial": json.dumps(block["input"])[: max(1, budget - used)]})
        return kept, stop_reason, budget
    return kept, None, used


def _handler_for(server: StandIn):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):
            if server.verbose:
                super().log_message(fmt, *args)

        # ---- plumbing -------------------------------------------------------------------
        def _send_json(self, status: int, payload, headers: dict | None = None) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.send_header("request-id", _id("req_"))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def _send_error(self, status: int, message: str | None = None, kind: str | None = None,
                        headers: dict | None = None) -> None:
            kind = kind or ERROR_TYPES.get(status, "api_error")
            message = message or ERROR_MESSAGES.get(status, kind)
            server.answers.append(f"{status} {message}")
            self._send_json(status, {"type": "error", "error": {"type": kind, "message": message},
                                     "request_id": _id("req_")}, headers)

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def _event(self, name: str, payload: dict) -> None:
            self._chunk(f"event: {name}\ndata: {json.dumps(payload)}\n\n".encode())

        def _read_body(self):
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                return json.loads(raw or b"null")
            except ValueError:
                return None

        def _authorized(self) -> bool:
            auth = self.headers.get("authorization", "")
            key = self.headers.get("x-api-key") or (auth[7:] if auth.lower().startswith("bearer ") else "")
            if not key:
                self._send_error(401, "x-api-key header is required")
                return False
            if server.api_key is not None and not hmac.compare_digest(key.encode(), server.api_key.encode()):
                self._send_error(401)
                return False
            return True

        def _admin_allowed(self) -> bool:
            """The admin endpoints exist only when the stand-in serves them, and take its key if it has one."""
            if not server.admin:
                self._send_error(404, f"Not found: {self.path}")
                return False
            return server.api_key is None or self._authorized()

        # ---- endpoints ------------------------------------------------------------------
        def do_GET(self):
            if self.path.startswith("/_standin/"):
                if not self._admin_allowed():
                    return
                if self.path.startswith("/_standin/requests"):
                    return self._send_json(200, server.requests)
                return self._send_error(404, f"Not found: {self.path}")
            elif self.path.startswith("/v1/models"):
                if not self._authorized():
                    return
                self._send_json(200, {"data": [{"id": "stand-in", "type": "model", "display_name": "Stand-in",
                                                "created_at": "2026-01-01T00:00:00Z"}], "has_more": False})
            else:
                self._send_error(404, f"Not found: {self.path}")

        def do_POST(self):
            body = self._read_body()
            if self.path.startswith("/_standin/"):
                return self._admin(body) if self._admin_allowed() else None
            if not self._authorized():
                return
            if body is None:
                return self._send_error(400, "Invalid JSON in request body")
            counting = self.path.startswith("/v1/messages/count_tokens")
            if not counting and not self.path.startswith("/v1/messages"):
                return self._send_error(404, f"Not found: {self.path}")
            if not counting and server.record:
                with server.lock:
                    server.requests.append(body)
            try:
                if server.strict:
                    validate_request({**body, "max_tokens": 1} if counting else body)
            except InvalidRequest as exc:
                server.rejections.append(str(exc))
                return self._send_error(400, str(exc))
            prompt = count_request_tokens(body)
            if counting:
                return self._send_json(200, {"input_tokens": prompt})
            if prompt > server.context_window:
                return self._send_error(400, f"prompt is too long: {prompt} tokens > "
                                             f"{server.context_window} maximum")
            try:
                self._answer(body, server.next_reply(body), prompt)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True

        def _admin(self, body):
            if self.path.startswith("/_standin/queue"):
                server.queue(*(body if isinstance(body, list) else [body]))
                return self._send_json(200, {"queued": len(server.replies)})
            if self.path.startswith("/_standin/reset"):
                with server.lock:
                    server.replies.clear()
                    server.requests.clear()
                    server.rejections.clear()
                return self._send_json(200, {"ok": True})
            return self._send_error(404, f"Not found: {self.path}")

        # ---- answering ------------------------------------------------------------------
        def _answer(self, body: dict, reply: dict, prompt: int) -> None:
            if reply.get("hang"):
                time.sleep(float(reply["hang"]))
            if reply.get("drop") == "before":
                self.close_connection = True
                return
            if reply.get("error"):
                status = int(reply["error"])
                headers = {"retry-after": str(reply["retry_after"])} if "retry_after" in reply else None
                return self._send_error(status, reply.get("message"), reply.get("type"), headers)
            if reply.get("prompt_too_long"):
                return self._send_error(400, f"prompt is too long: {max(prompt, server.context_window + 1)} "
                                             f"tokens > {server.context_window} maximum")
            blocks = _blocks_for(reply)
            stop = reply.get("stop_reason") or ("tool_use" if reply.get("tool_calls") else "end_turn")
            budget = min(body["max_tokens"], max(1, server.context_window - prompt))
            blocks, forced, out_tokens = _limit_output(
                blocks, budget, "max_tokens" if body["max_tokens"] <= server.context_window - prompt
                else "model_context_window_exceeded")
            stop = forced or stop
            usage = {**server.cache.usage(body), "output_tokens": max(1, out_tokens), **reply.get("usage", {})}
            if server.record:
                server.usages.append({**usage, "request": len(server.requests) - 1})
            message = {"id": _id("msg_01"), "type": "message", "role": "assistant", "model": body["model"],
                       "content": [{k: v for k, v in b.items() if k != "_partial"} for b in blocks],
                       "stop_reason": stop, "stop_sequence": None, "usage": usage}
            server.answers.append(f"200 {stop}")
            if body.get("stream"):
                self._stream(message, blocks, reply)
            else:
                self._send_json(200, message)

        def _stream(self, message: dict, blocks: list[dict], reply: dict) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream; charset=utf-8")
            self.send_header("cache-control", "no-cache")
            self.send_header("transfer-encoding", "chunked")
            self.send_header("request-id", _id("req_"))
            self.end_headers()
            delay = float(reply.get("delay", server.delay))
            size = max(1, int(reply.get("chunk", server.chunk)))
            start = {**message, "content": [], "stop_reason": None,
                     "usage": {**message["usage"], "output_tokens": 1}}
            self._event("message_start", {"type": "message_start", "message": start})
            self._event("ping", {"type": "ping"})
            fault = reply.get("drop") == "mid" or reply.get("stream_error")
            sent = 0
            for index, block in enumerate(blocks):
                if block["type"] == "text":
                    first, piece_key, text = {"type": "text", "text": ""}, "text", block["text"]
                else:
                    first = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
                    piece_key, text = "partial_json", block.get("_partial") or json.dumps(block["input"])
                self._event("content_block_start", {"type": "content_block_start", "index": index,
                                                    "content_block": first})
                delta_type = "text_delta" if block["type"] == "text" else "input_json_delta"
                for at in range(0, len(text), size):
                    if fault and sent >= len(text) // 2 and sent > 0:
                        return self._fail_stream(reply)
                    if reply.get("stall") and at >= len(text) // 2 > at - size:
                        time.sleep(float(reply["stall"]))
                    if delay:
                        time.sleep(delay)
                    self._event("content_block_delta", {"type": "content_block_delta", "index": index,
                                                        "delta": {"type": delta_type,
                                                                  piece_key: text[at:at + size]}})
                    sent += size
                self._event("content_block_stop", {"type": "content_block_stop", "index": index})
            if fault:
                return self._fail_stream(reply)
            self._event("message_delta", {"type": "message_delta",
                                          "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                                          "usage": {"output_tokens": message["usage"]["output_tokens"]}})
            self._event("message_stop", {"type": "message_stop"})
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        def _fail_stream(self, reply: dict) -> None:
            if reply.get("stream_error"):
                kind = reply["stream_error"]
                self._event("error", {"type": "error", "error": {
                    "type": kind, "message": {"overloaded_error": "Overloaded"}.get(kind, "Internal server error")}})
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            self.close_connection = True   # "drop": no final chunk, the client sees a broken body

    return Handler
