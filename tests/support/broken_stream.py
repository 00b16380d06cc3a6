"""A deliberately broken Messages-API server, for attacking the client side.

The strict stand-in (standin/) plays a correct API; this one plays a hostile or broken endpoint: it
sends whatever event bytes a test scripts — lone surrogates, repeated or malformed tool ids, string
usage, unknown block types, pings forever, a trickle that never ends, odd retry-after headers, error
messages that echo the key. It still checks every request it receives with the stand-in's
`validate_request`, so a test can prove that what the agent sends back after such an answer is a
request the real API would accept.

A reply is a dict:
    {"events": [dict | str, ...]}     each dict is sent as `event: <type>` + JSON data; a str is sent raw
    {"then": "ping", "every": 0.2}     after the events: ping until the client goes away
    {"then": "trickle", "every": 0.2}  after the events: an empty-ish text delta until the client goes away
    {"status": 429, "headers": {...}, "body": {...}}   a plain HTTP error
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standin.validate import InvalidRequest, validate_request


def message(*blocks: dict, stop_reason="end_turn", usage=None, start_usage=None) -> list:
    """The events of one whole answer: text blocks as {"type": "text", "text": ...}, tool calls as
    {"type": "tool_use", "id": ..., "name": ..., "input": {...}} (input sent as one JSON delta, or
    "partial_json": raw text)."""
    events: list = [{"type": "message_start", "message": {
        "id": "msg_broken", "type": "message", "role": "assistant", "model": "m", "content": [],
        "stop_reason": None, "usage": start_usage if start_usage is not None else {"input_tokens": 10,
                                                                                     "output_tokens": 1}}}]
    for index, block in enumerate(blocks):
        if block["type"] == "tool_use":
            first = {k: v for k, v in block.items() if k not in ("input", "partial_json")}
            events.append({"type": "content_block_start", "index": index, "content_block": {**first, "input": {}}})
            raw = block.get("partial_json", json.dumps(block.get("input", {})))
            events.append({"type": "content_block_delta", "index": index,
                           "delta": {"type": "input_json_delta", "partial_json": raw}})
        elif block["type"] == "text":
            events.append({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})
            events.append({"type": "content_block_delta", "index": index,
                           "delta": {"type": "text_delta", "text": block["text"]}})
        else:
            events.append({"type": "content_block_start", "index": index, "content_block": block})
        events.append({"type": "content_block_stop", "index": index})
    events.append({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                   "usage": usage if usage is not None else {"output_tokens": 5}})
    events.append({"type": "message_stop"})
    return events


class BrokenServer:
    def __init__(self):
        self.replies: deque = deque()
        self.requests: list[dict] = []
        self.rejections: list[str] = []
        self.stopping = False
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.httpd.daemon_threads = True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def start(self) -> "BrokenServer":
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        self.stopping = True
        self.httpd.shutdown()
        self.httpd.server_close()

    def queue(self, *replies: dict) -> None:
        self.replies.extend(replies)


def _handler(server: BrokenServer):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"null")
            if not self.path.startswith("/v1/messages"):      # s08 asks a local server its window (window_probe.py)
                self.send_response(404)
                self.send_header("content-length", "0")
                self.end_headers()
                return
            server.requests.append(body)
            try:
                validate_request(body)
            except InvalidRequest as exc:
                server.rejections.append(str(exc))
            reply = server.replies.popleft() if server.replies else {"events": message({"type": "text", "text": "ok"})}
            try:
                self._answer(reply)
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True

        def _answer(self, reply: dict) -> None:
            if "status" in reply:
                data = json.dumps(reply.get("body", {"type": "error", "error": {"type": "api_error",
                                                                                  "message": "broken"}})).encode()
                self.send_response(reply["status"])
                for k, v in {"content-type": "application/json", "content-length": str(len(data)),
                             **reply.get("headers", {})}.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)
                return
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for event in reply.get("events", []):
                self._send(event)
            then, every = reply.get("then"), float(reply.get("every", 0.2))
            while then and not server.stopping:
                time.sleep(every)
                self._send({"type": "ping"} if then == "ping" else
                           {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "."}})
            self._chunk(b"")

        def _send(self, event) -> None:
            raw = event if isinstance(event, str) else f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"
            self._chunk(raw.encode("utf-8", "surrogatepass"))

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

    return Handler
