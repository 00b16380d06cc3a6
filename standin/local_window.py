"""A small local server's context window, as a brain around another brain: what llama.cpp's
`llama-server` with `n_ctx` 4096 does on the Messages API, and what a gateway in front of it passes on.

    standin.brain = LocalWindow(4096, Brain(summary="restate"), overflow="empty")

A request whose prompt (the stand-in's count, tokens.py) is over `n_ctx` never reaches the brain:

    overflow="empty"   silence: HTTP 200, no content, 0 output tokens — what LiteLLM answers when its
                       backend's stream came back empty (issue 32's real stack)
    overflow="error"   llama.cpp's 400: "request (N tokens) exceeds the available context size
                       (M tokens), try increasing it" (type exceed_context_size_error)

A prompt that fits is answered by `brain`, which sees max_tokens as the room the window leaves
(n_ctx - prompt: llama.cpp stops generating when the context is full, it does not refuse the request);
an answer text longer than that room is cut there, with stop_reason max_tokens.

`sizes` holds every prompt size seen, `overflows` those over the window and `cut` those whose answer
the window cut short; `seen` is every request's (size, "answered" | "over" | "cut"), in order (a test
asserts on them). Serve it from a StandIn whose own context_window is larger (the default), so that the
stand-in's Anthropic 400 does not answer first.
"""

from __future__ import annotations

import threading
from typing import Callable

from .tokens import count_request_tokens, text_tokens

OVERFLOW_WORDING = ("request ({prompt} tokens) exceeds the available context size ({window} tokens), "
                    "try increasing it")


class LocalWindow:
    def __init__(self, n_ctx: int, brain: Callable[[dict], dict], overflow: str = "empty"):
        if overflow not in ("empty", "error"):
            raise ValueError(f"overflow must be 'empty' or 'error', not {overflow!r}")
        self.n_ctx, self.brain, self.overflow = n_ctx, brain, overflow
        self.lock = threading.Lock()
        self.sizes: list[int] = []
        self.overflows: list[int] = []
        self.cut: list[int] = []            # prompt sizes whose answer the window cut short
        self.seen: list[tuple[int, str]] = []

    def __call__(self, body: dict) -> dict:
        prompt = count_request_tokens(body)
        with self.lock:
            self.sizes.append(prompt)
            if prompt > self.n_ctx:
                self.overflows.append(prompt)
                self.seen.append((prompt, "over"))
        if prompt > self.n_ctx:
            if self.overflow == "empty":
                return {"usage": {"input_tokens": 0, "output_tokens": 0}}
            return {"error": 400, "type": "exceed_context_size_error",
                    "message": OVERFLOW_WORDING.format(prompt=prompt, window=self.n_ctx)}
        room = max(1, self.n_ctx - prompt)
        reply = self.brain({**body, "max_tokens": min(int(body.get("max_tokens") or room), room)})
        text = reply.get("text")
        if isinstance(text, str) and text_tokens(text) > room:
            reply = {**reply, "text": _cut(text, room), "stop_reason": "max_tokens"}
            with self.lock:
                self.cut.append(prompt)
                self.seen.append((prompt, "cut"))
        else:
            with self.lock:
                self.seen.append((prompt, "answered"))
        return reply


def _cut(text: str, budget: int) -> str:
    words: list[str] = []
    for word in text.split(" "):
        if text_tokens(" ".join(words + [word])) > budget:
            break
        words.append(word)
    return " ".join(words)
