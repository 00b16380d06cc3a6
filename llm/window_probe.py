"""Asking a local server for its context window, in the background, when the endpoint is not Anthropic's own.

    probe = WindowProbe.start(base_url, model, key)   # a daemon thread: no request ever waits for it
    probe.result()     # Told(tokens, source) once a believable answer is in; None before that, or never

The servers asked, in this order; the first believable answer wins:
    llama.cpp     GET  /props       default_generation_settings.n_ctx (a top-level n_ctx in some versions)
    Ollama        POST /api/show    {"model": MODEL_ID}: `num_ctx` in its `parameters` text when the model sets
                                    it; else GET /api/ps's context_length of the loaded model; else Ollama's
                                    smallest default (OLLAMA_DEFAULT, for < 24 GiB of VRAM: a window s08 cannot
                                    see, and Ollama cuts a prompt past it without a word) — never more than
                                    model_info["<architecture>.context_length"]
    vLLM, SGLang  GET  /v1/models   data[].max_model_len of the entry whose id is MODEL_ID (or the only entry)
ANTHROPIC_BASE_URL is the server's address less a trailing /v1 (or /v1/messages). Anthropic's own API is
never asked (`wanted`), nor is any endpoint when CONTEXT_WINDOW was set (app.py decides).

Everything a server sends is untrusted: each answer is read up to MAX_BYTES within TIMEOUT seconds of the
connection (a slow drip of the body, or of the status line and headers, ends there too), parsed defensively (junk, deep nesting, strings, negatives, booleans: nothing), and
a window outside MIN_WINDOW..MAX_TOLD (compaction/window.py) is ignored. Only the number is ever shown,
with a fixed name for where it came from.
"""

from __future__ import annotations

import http.client
import json
import re
import socket
import threading
import time
import urllib.request
from dataclasses import dataclass
from http.client import HTTPException
from urllib.parse import urlsplit

from compaction.window import MAX_TOLD, MIN_WINDOW

TIMEOUT = 2.0                 # seconds for one question, connection to last byte
MAX_BYTES = 1 << 20           # an answer longer than this is not read (Ollama's /api/show holds the license)
OLLAMA_DEFAULT = 4_096        # Ollama's default num_ctx under 24 GiB of VRAM (docs/context-length, 2026)
NUM_CTX = re.compile(r"^\s*num_ctx\s+(\d{1,9})\s*$", re.MULTILINE)
SUFFIXES = ("/v1/messages", "/v1")


@dataclass(frozen=True)
class Told:
    tokens: int
    source: str               # e.g. "llama.cpp /props n_ctx"


def server_root(base_url: str) -> str:
    """The server's own address: ANTHROPIC_BASE_URL without a trailing slash, /v1 or /v1/messages."""
    url = base_url.strip().rstrip("/")
    for suffix in SUFFIXES:
        if url.endswith(suffix):
            return url[: -len(suffix)].rstrip("/")
    return url


def wanted(base_url: str) -> bool:
    """Is this endpoint worth asking: http(s) and not Anthropic's own API (which states no n_ctx)?"""
    parts = urlsplit(base_url.strip())
    host = (parts.hostname or "").lower()
    return parts.scheme in ("http", "https") and bool(host) and not (
        host == "anthropic.com" or host.endswith(".anthropic.com"))


def believable(value) -> int | None:
    """A window in tokens, or None: an int (not a bool) within MIN_WINDOW..MAX_TOLD."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if MIN_WINDOW <= value <= MAX_TOLD else None


def parse_props(data) -> int | None:
    """llama.cpp's GET /props."""
    if not isinstance(data, dict):
        return None
    settings = data.get("default_generation_settings")
    found = believable(settings.get("n_ctx")) if isinstance(settings, dict) else None
    return found or believable(data.get("n_ctx"))


def parse_ollama_show(data) -> tuple[int | None, int | None]:
    """Ollama's POST /api/show: (num_ctx from its parameters, the model's trained context length)."""
    if not isinstance(data, dict):
        return None, None
    params, info = data.get("parameters"), data.get("model_info")
    num_ctx = None
    if isinstance(params, str):
        found = NUM_CTX.findall(params)
        num_ctx = believable(int(found[-1])) if found else None
    trained = None
    if isinstance(info, dict):
        arch = info.get("general.architecture")
        if isinstance(arch, str) and len(arch) <= 64:
            trained = believable(info.get(f"{arch}.context_length"))
    return num_ctx, trained


def parse_ollama_ps(data, model: str) -> int | None:
    """Ollama's GET /api/ps: the context length the loaded `model` runs with."""
    models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(models, list):
        return None
    for entry in models[:100]:
        if isinstance(entry, dict) and model in (entry.get("name"), entry.get("model")):
            return believable(entry.get("context_length"))
    return None


def parse_models(data, model: str) -> int | None:
    """vLLM's and SGLang's GET /v1/models: max_model_len of `model` (or of the only model served)."""
    entries = data.get("data") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return None
    entries = [e for e in entries[:1000] if isinstance(e, dict)]
    chosen = [e for e in entries if e.get("id") == model] or (entries if len(entries) == 1 else [])
    return believable(chosen[0].get("max_model_len")) if chosen else None


def ollama_window(show, ps, model: str) -> tuple[int, str] | None:
    """The window Ollama runs `model` with, from /api/show's and /api/ps's answers (None: not Ollama)."""
    num_ctx, trained = parse_ollama_show(show)
    if num_ctx is None and trained is None:
        return None
    loaded = parse_ollama_ps(ps, model)
    window, source = ((num_ctx, "Ollama /api/show num_ctx") if num_ctx else
                      (loaded, "Ollama /api/ps context_length") if loaded else
                      (OLLAMA_DEFAULT, "Ollama's default num_ctx"))
    if trained and trained < window:
        return trained, "Ollama /api/show context_length"
    return window, source


class WindowProbe:
    """One background question round; `result()` never blocks."""

    def __init__(self, base_url: str, model: str, key: str = "", timeout: float = TIMEOUT,
                 max_bytes: int = MAX_BYTES):
        self.root, self.model, self.timeout, self.max_bytes = server_root(base_url), model, timeout, max_bytes
        self.headers = {"x-api-key": key, "authorization": f"Bearer {key}"} if key else {}
        self.told: Told | None = None
        self.done = threading.Event()

    @classmethod
    def start(cls, base_url: str, model: str, key: str = "", **kwargs) -> "WindowProbe":
        probe = cls(base_url, model, key, **kwargs)
        threading.Thread(target=probe.run, daemon=True, name="window-probe").start()
        return probe

    def result(self) -> Told | None:
        return self.told if self.done.is_set() else None

    def run(self) -> None:
        try:
            self.told = self.ask()
        except Exception:        # noqa: BLE001 — a probe that fails in any way says nothing
            self.told = None
        finally:
            self.done.set()

    def ask(self) -> Told | None:
        props = parse_props(self._json("GET", "/props"))
        if props:
            return Told(props, "llama.cpp /props n_ctx")
        show = self._json("POST", "/api/show", {"model": self.model})
        if isinstance(show, dict) and ("parameters" in show or "model_info" in show):
            found = ollama_window(show, self._json("GET", "/api/ps"), self.model)
            if found:
                return Told(*found)
        models = parse_models(self._json("GET", "/v1/models"), self.model)
        return Told(models, "/v1/models max_model_len") if models else None

    def _json(self, method: str, path: str, body: dict | None = None):
        """The JSON a question got, or None: not a 200, a redirect, too long, too slow, or not JSON."""
        deadline = time.monotonic() + self.timeout
        data = json.dumps(body).encode() if body is not None else None
        headers = {**self.headers, **({"content-type": "application/json"} if data else {})}
        request = urllib.request.Request(self.root + path, data=data, headers=headers, method=method)
        try:
            with _OPENER.open(request, timeout=self.timeout) as response:
                if response.status != 200:
                    return None
                got = bytearray()
                while chunk := response.read1(65536):
                    got += chunk
                    if len(got) > self.max_bytes or time.monotonic() > deadline:
                        return None
            return json.loads(bytes(got))
        except (OSError, HTTPException, ValueError, RecursionError):     # URLError, timeouts are OSErrors
            return None


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None              # a redirect is not followed (the key would go with it): no answer


def _bounded(connection):
    """An HTTP(S) connection whose socket is shut down `timeout` seconds after the connection was made: a
    socket timeout alone bounds each read, not the status line and headers, which a server can drip a byte
    at a time forever (the body's loop in _json checks the same deadline itself)."""
    class Bounded(connection):
        def connect(self):
            deadline = self.timeout if isinstance(self.timeout, (int, float)) else TIMEOUT
            super().connect()
            timer = threading.Timer(deadline, _shut, (self.sock,))
            timer.daemon = True
            timer.start()
    return Bounded


def _shut(sock) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)      # wakes a blocking read; closed since: nothing to do
    except OSError:
        pass


class _HTTP(urllib.request.HTTPHandler):
    def http_open(self, req):
        return self.do_open(_bounded(http.client.HTTPConnection), req)


class _HTTPS(urllib.request.HTTPSHandler):
    def https_open(self, req):
        return self.do_open(_bounded(http.client.HTTPSConnection), req, context=self._context)


_OPENER = urllib.request.build_opener(_NoRedirect, _HTTP, _HTTPS)
