"""Replies keyed by conversation, for a stand-in that several agents talk to at once (sub-agents).

The stand-in answers its queue in the order requests arrive; parallel sub-agents make that order
nondeterministic. `Conversations` is a brain (a callable the stand-in calls with each request's body)
that picks the script by the conversation's first user message instead:

    standin.brain = Conversations({"find A": [reply, reply], "find B": [...]})

(tests/delegation/ and bench/subagents.py use it: a parent and its sub-agents, each its own script.)

A conversation whose first message contains a key gets that key's replies in order (its own order is
deterministic); a summary request gets a short summary; anything else, or a script run dry, gets a
plain answer saying so (and the test that expected otherwise fails on what it asserts).
"""

from __future__ import annotations

import threading

from .brain import is_summary_request


def first_user_text(body: dict) -> str:
    for message in body.get("messages", []):
        if message.get("role") != "user":
            continue
        content = message["content"]
        if isinstance(content, str):
            return content
        return "\n".join(b.get("text", "") for b in content if b.get("type") == "text")
    return ""


class Conversations:
    def __init__(self, scripts: dict[str, list]):
        self.scripts = {key: list(replies) for key, replies in scripts.items()}
        self.lock = threading.Lock()
        self.unmatched: list[str] = []

    def __call__(self, body: dict) -> dict:
        if is_summary_request(body):
            return {"text": "Summary: the work so far, in short."}
        first, reply = first_user_text(body), None
        with self.lock:
            for key, replies in self.scripts.items():
                if key in first:
                    reply = replies.pop(0) if replies else None
                    break
            if reply is None:
                self.unmatched.append(first[:80])
        if reply is None:
            return {"text": "(no scripted reply left for this conversation)"}
        return reply(body) if callable(reply) else dict(reply)     # outside the lock: it may wait for others
