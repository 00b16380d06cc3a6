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
    {"hold": "mid", "text": ...}                     stop half-way through the stream until release()
    {"hold": "before", "text": ...}                  wait before answering until release()

A held answer is the signal a test waits for (wait_until_held()) before it acts on a turn that must
still be running — a Ctrl-C mid-stream, the time shown while waiting — however busy the machine is;
release() (or POST /_standin/release) lets it go on, and HOLD_MOST seconds end a forgotten hold.

It also speaks OpenAI's `POST /v1/chat/completions` from the same script (openai_chat.py), so that a
gateway such as LiteLLM can stand in front of it (tests/test_gateway.py); `plain_only` (a status) refuses
the system prompt as blocks in both dialects, as a gateway in front of a strings-only server does.
`reply_latency` / `summary_latency`: seconds every answer waits before it starts, as a real model's
time to first token — a summary request (s08's "<summary-request>" instruction last) gets the second.

Replies stream as SSE (chunked transfer encoding, so a drop is a real protocol
error) or come back as JSON, with `usage` always set. Admin endpoints let a
separate process drive a running stand-in: POST /_standin/queue (a list of
replies), GET /_standin/requests, POST /_standin/reset, POST /_standin/release. Whoever can queue a
reply drives the agent talking to the stand-in (a tool call is a command it
runs), and any local process — or a web page, whose text/plain POST needs no
CORS preflight — can reach 127.0.0.1. So with an `api_key` the admin endpoints
require that key too, and `admin=False` (the built-in demo model) serves none.

`messages_overflow="empty"`: a streamed Messages request past `context_window` is answered with an empty
200 (message_start, message_delta with end_turn and 0 output tokens, message_stop) instead of the 400
"prompt is too long" — what a gateway in front of llama.cpp does (issue 32); a count_tokens request still
gets its count. `silent_answers` counts those empty answers.

It also answers the questions s08 asks a local server about its window (llm/window_probe.py), each only
when its option is set (otherwise a 404, as Anthropic's API answers):
    props_window=N     GET  /props       llama.cpp: {"default_generation_settings": {"n_ctx": N}, ...}
    ollama_window=N    POST /api/show    Ollama: "num_ctx N" in `parameters`, and
                                         model_info["llama.context_length"] = `ollama_trained` (131072)
    vllm_window=N      GET  /v1/models   vLLM/SGLang: the model list with "max_model_len": N
    probe_answers={path: (status, bytes, drip)}   any raw answer for those paths (hostile ones in tests):
                                         the bytes sent in 64 KB pieces, `drip` seconds apart
`probes` lists the paths an option served, each once its answer was sent.

A POST is checked before its body is read: the key first, then its Content-Length (missing,
malformed, negative or over `max_body` — the real API's 32 MB — is a 4xx, and the connection is
closed), so a local process cannot make s08's demo port hold a body it never authorized.
"""

from __future__ import annotations

import hmac
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .cache import PromptCache
from .openai_chat import chat_answer, chat_check, chat_error
from .exchange import (DEFAULT_WINDOW, ERROR_MESSAGES, ERROR_TYPES, STREAM_ERROR_MESSAGES, Exchange, new_id,
                       stream_events)

MAX_BODY = 32 * 1024 * 1024          # the Messages API's own limit for one request
LENGTH = re.compile(r"\d{1,12}")
REFUSED = object()                   # _read_body answered already and the connection will close
QUIET_404 = ("/props", "/api/show", "/api/ps")     # the window questions (llm/window_probe.py), when not served



class StandIn(Exchange):
    """The server object tests hold: start it, queue replies, read what it received (exchange.py)."""

    def __init__(self, script=None, brain=None, strict: bool = True, context_window: int = DEFAULT_WINDOW,
                 api_key: str | None = None, port: int = 0, chunk: int = 12, delay: float = 0.0,
                 verbose: bool = False, cache: PromptCache | None = None, record: bool = True, admin: bool = True,
                 max_body: int = MAX_BODY, plain_only: int = 0,
                 reply_latency: float = 0.0, summary_latency: float = 0.0, messages_overflow: str = "error",
                 props_window: int | None = None, ollama_window: int | None = None, ollama_trained: int = 131_072,
                 vllm_window: int | None = None, probe_answers: dict | None = None):
        super().__init__(script, brain, strict, context_window, cache, record, reply_latency, summary_latency)
        self.messages_overflow = messages_overflow     # "error" (the 400) or "empty" (an empty 200, streamed)
        self.silent_answers = 0
        self.props_window, self.ollama_window, self.ollama_trained = props_window, ollama_window, ollama_trained
        self.vllm_window = vllm_window
        self.probe_answers: dict = probe_answers or {}
        self.probes: list[str] = []
        self.api_key, self.max_body = api_key, max_body
        self.plain_only = plain_only         # refuse the system prompt as blocks with this status (both dialects)
        # /v1/chat/completions over the window, streamed: "empty" (an empty 200), "error" (OpenAI's 400), or
        # "vllm" (that 400 when the prompt and max_tokens together do not fit)
        self.chat_overflow = "empty"
        self.chunk, self.delay, self.verbose = chunk, delay, verbose
        self.admin = admin                   # False: no /_standin/ endpoints at all (tests drive it in-process)
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
        self.release()                       # no answer's thread is left waiting for a test that has ended
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


class Handler(BaseHTTPRequestHandler):
    """One connection; `standin` is the StandIn it answers for (set by _handler_for)."""

    standin: StandIn
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        if self.standin.verbose:
            super().log_message(fmt, *args)

    # ---- plumbing -------------------------------------------------------------------
    def _send_json(self, status: int, payload, headers: dict | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", new_id("req_"))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _send_error(self, status: int, message: str | None = None, kind: str | None = None,
                    headers: dict | None = None) -> None:
        kind = kind or ERROR_TYPES.get(status, "api_error")
        message = message or ERROR_MESSAGES.get(status, kind)
        self.standin.answers.append(f"{status} {message}")
        self._send_json(status, {"type": "error", "error": {"type": kind, "message": message},
                                 "request_id": new_id("req_")}, headers)

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _event(self, name: str, payload: dict) -> None:
        self._chunk(f"event: {name}\ndata: {json.dumps(payload)}\n\n".encode())

    def _refuse(self, status: int, message: str):
        """Answer without reading the body, and close the connection (the unread body would be
        taken for the next request)."""
        self.close_connection = True
        self._send_error(status, message, headers={"connection": "close"})
        return REFUSED

    def _read_body(self):
        declared = self.headers.get("content-length")
        if declared is None or self.headers.get("transfer-encoding"):
            return self._refuse(411, "a Content-Length header is required")
        if not LENGTH.fullmatch(declared.strip()):
            return self._refuse(400, "Content-Length must be a number of bytes")
        length = int(declared)
        if length > self.standin.max_body:
            return self._refuse(413, f"Request exceeds the maximum allowed number of bytes ({self.standin.max_body})")
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
        if self.standin.api_key is not None and not hmac.compare_digest(key.encode(), self.standin.api_key.encode()):
            self._send_error(401)
            return False
        return True

    def _admin_allowed(self) -> bool:
        """The admin endpoints exist only when the stand-in serves them, and take its key if it has one."""
        if not self.standin.admin:
            self._send_error(404, f"Not found: {self.path}")
            return False
        return self.standin.api_key is None or self._authorized()

    # ---- endpoints ------------------------------------------------------------------
    def _probe(self, path: str) -> bool:
        """A question about the window (llm/window_probe.py), answered when an option serves it."""
        s = self.standin
        served = path in s.probe_answers or {"/props": s.props_window, "/api/show": s.ollama_window,
                                             "/v1/models": s.vllm_window}.get(path) is not None
        if path in s.probe_answers:
            status, data, drip = s.probe_answers[path]
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            try:
                for at in range(0, len(data), 65536):
                    self.wfile.write(data[at:at + 65536])
                    self.wfile.flush()
                    if drip:
                        time.sleep(drip)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True
        elif path == "/props" and s.props_window is not None:
            self._send_json(200, {"default_generation_settings": {"n_ctx": s.props_window, "temperature": 0.8},
                                  "total_slots": 1, "model_path": "stand-in.gguf"})
        elif path == "/api/show" and s.ollama_window is not None:
            self._send_json(200, {"parameters": f'num_ctx                        {s.ollama_window}\nstop  "<|eot|>"',
                                  "model_info": {"general.architecture": "llama",
                                                 "llama.context_length": s.ollama_trained}})
        elif path == "/v1/models" and s.vllm_window is not None:
            self._send_json(200, {"object": "list", "data": [{"id": "stand-in", "object": "model",
                                                              "max_model_len": s.vllm_window}]})
        elif path in QUIET_404:         # not served: a 404 that `answers` does not record
            self._send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": "Not found"}})
            return True
        else:
            return False
        if served:
            s.probes.append(path)         # after the answer is sent: its reader has it
        return True

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if path in (*QUIET_404, "/v1/models") and self._probe(path):
            return
        if self.path.startswith("/_standin/"):
            if not self._admin_allowed():
                return
            if self.path.startswith("/_standin/requests"):
                return self._send_json(200, self.standin.requests)
            return self._send_error(404, f"Not found: {self.path}")
        elif self.path.startswith("/v1/models"):
            if not self._authorized():
                return
            self._send_json(200, {"data": [{"id": "stand-in", "type": "model", "display_name": "Stand-in",
                                            "created_at": "2026-01-01T00:00:00Z"}], "has_more": False})
        else:
            self._send_error(404, f"Not found: {self.path}")

    def do_POST(self):
        if self.path.startswith("/_standin/"):
            if not self._admin_allowed():
                self.close_connection = True
                return
            body = self._read_body()
            return None if body is REFUSED else self._admin(body)
        if not self._authorized():
            self.close_connection = True        # its body is never read
            return
        body = self._read_body()
        if body is REFUSED:
            return
        if body is None:
            return self._send_error(400, "Invalid JSON in request body")
        if self.path.startswith("/v1/chat/completions"):
            return self._chat(body)
        if self.path.split("?", 1)[0] == "/api/show" and self._probe("/api/show"):
            return
        counting = self.path.startswith("/v1/messages/count_tokens")
        if not counting and not self.path.startswith("/v1/messages"):
            return self._send_error(404, f"Not found: {self.path}")
        if not counting:
            self.standin.keep(body)
        prompt, refused = self.standin.check(body, counting)
        if (refused is not None and not counting and body.get("stream") and self.standin.messages_overflow == "empty"
                and prompt > self.standin.context_window):
            return self._stream_empty(body)
        if refused is not None:
            return self._send_error(*refused)
        if counting:
            return self._send_json(200, {"input_tokens": prompt})
        try:
            self._answer(body, self.standin.next_reply(body), prompt)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _chat(self, body: dict) -> None:
        """The OpenAI-compatible dialect (openai_chat.py), from the same script."""
        self.standin.keep(body)
        prompt, refused = chat_check(body, self.standin.context_window, self.standin.plain_only,
                                     self.standin.chat_overflow != "empty", self.standin.chat_overflow == "vllm")
        over = prompt > self.standin.context_window        # answered empty (streamed): no scripted reply used
        reply = {} if refused or over else self.standin.next_reply(body)
        refused = refused or chat_error(reply)
        if refused is not None:
            status, payload = refused
            self.standin.answers.append(f"{status} {json.dumps(payload)[:200]}")
            return self._send_json(status, payload)
        whole, chunks = chat_answer(body, reply, prompt, self.standin.context_window)
        empty = reply.get("empty") or prompt > self.standin.context_window
        self.standin.answers.append(f"200 {whole['choices'][0]['finish_reason']}" + (" empty" if empty else ""))
        if not body.get("stream"):
            return self._send_json(200, whole)
        try:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for data in chunks:
                self._chunk(f"data: {json.dumps(data)}\n\n".encode())
            self._chunk(b"data: [DONE]\n\n")
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _admin(self, body):
        if self.path.startswith("/_standin/queue"):
            self.standin.queue(*(body if isinstance(body, list) else [body]))
            return self._send_json(200, {"queued": len(self.standin.replies)})
        if self.path.startswith("/_standin/release"):
            self.standin.release()
            return self._send_json(200, {"released": True})
        if self.path.startswith("/_standin/reset"):
            with self.standin.lock:
                self.standin.replies.clear()
                self.standin.requests.clear()
                self.standin.rejections.clear()
            return self._send_json(200, {"ok": True})
        return self._send_error(404, f"Not found: {self.path}")

    # ---- answering ------------------------------------------------------------------
    def _answer(self, body: dict, reply: dict, prompt: int) -> None:
        wait = self.standin.latency(body)
        if wait:
            time.sleep(wait)
        if reply.get("hang"):
            time.sleep(float(reply["hang"]))
        if reply.get("hold") == "before":
            self.standin.hold()
        if reply.get("drop") == "before":
            self.close_connection = True
            return
        failure = self.standin.scripted_error(reply, prompt)
        if failure is not None:
            status, message, kind = failure
            headers = {"retry-after": str(reply["retry_after"])} if "retry_after" in reply else None
            return self._send_error(status, message, kind, headers)
        answer, blocks = self.standin.answer(body, reply, prompt)
        if body.get("stream"):
            self._stream(answer, blocks, reply)
        else:
            self._send_json(200, answer)

    def _stream(self, message: dict, blocks: list[dict], reply: dict) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("request-id", new_id("req_"))
        self.end_headers()
        delay = float(reply.get("delay", self.standin.delay))
        size = max(1, int(reply.get("chunk", self.standin.chunk)))
        fault = reply.get("drop") == "mid" or reply.get("stream_error")
        sent = 0
        for name, data, place in stream_events(message, blocks, size):
            if name == "message_delta" and fault:
                return self._fail_stream(reply)
            if place is not None:
                at, length = place
                if fault and sent >= length // 2 and sent > 0:
                    return self._fail_stream(reply)
                if at >= length // 2 > at - size:
                    if reply.get("stall"):
                        time.sleep(float(reply["stall"]))
                    if reply.get("hold") == "mid":
                        self.wfile.flush()
                        self.standin.hold()
                if delay:
                    time.sleep(delay)
                sent += size
            self._event(name, data)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _stream_empty(self, body: dict) -> None:
        """The silent overflow: HTTP 200, a message with nothing in it."""
        self.standin.silent_answers += 1
        self.standin.answers.append("200 empty")
        message = {"id": new_id("msg_01"), "type": "message", "role": "assistant", "model": body.get("model", ""),
                   "content": [], "stop_reason": None, "stop_sequence": None,
                   "usage": {"input_tokens": 0, "output_tokens": 0}}
        try:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream; charset=utf-8")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            self._event("message_start", {"type": "message_start", "message": message})
            self._event("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn",
                                                                            "stop_sequence": None},
                                          "usage": {"output_tokens": 0}})
            self._event("message_stop", {"type": "message_stop"})
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _fail_stream(self, reply: dict) -> None:
        if reply.get("stream_error"):
            kind = reply["stream_error"]
            self._event("error", {"type": "error", "error": {
                "type": kind, "message": STREAM_ERROR_MESSAGES.get(kind, "Internal server error")}})
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        self.close_connection = True   # "drop": no final chunk, the client sees a broken body



def _handler_for(server: StandIn) -> type:
    return type("Handler", (Handler,), {"standin": server})
