"""Small builders for API-shaped histories, a scripted brain for the stand-in, and ways to run s08 in
this process: an App (make_app), main() as `python agent.py` would run it (run_main), a stand-in App
for dispatch (Recorder); files the tests write or read (write, everything_written, settings_file) and one
plain HTTP request (http)."""

from __future__ import annotations

import itertools
import json
import random
import re
import urllib.error
import urllib.request
from pathlib import Path

from access.credentials import remember_endpoint
from config import user_settings_file
from support.agents import TEST_KEY, base_env
from ui.approve import GRACE, QUIET

_ids = itertools.count(1)


def phrases(words: list[str], max_words: int, count: int = 64, seed: int = 8) -> list[str]:
    """`count` fixed phrases of 1..max_words of `words`, for property tests to sample from: one draw per
    phrase instead of one per word, which was most of their time, while what compaction cares about
    (structure, sizes, scripts) stays drawn."""
    pick = random.Random(seed)
    return sorted({" ".join(pick.choice(words) for _ in range(pick.randint(1, max_words))) for _ in range(count)},
                  key=len)


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def say(text: str) -> dict:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def call(name: str = "bash", **args) -> dict:
    return {"type": "tool_use", "id": f"toolu_{next(_ids):04d}", "name": name, "input": args}


def ask(*calls: dict, text: str | None = None) -> dict:
    content = ([{"type": "text", "text": text}] if text else []) + list(calls)
    return {"role": "assistant", "content": content}


def results(*pairs, text: str | None = None) -> dict:
    """results((call_block, "output"), ...) → a user message answering those calls."""
    content = [{"type": "tool_result", "tool_use_id": c["id"], "content": out} for c, out in pairs]
    if text:
        content.append({"type": "text", "text": text})
    return {"role": "user", "content": content}


def round_trip(name: str, output: str, **args) -> list[dict]:
    c = call(name, **args)
    return [ask(c), results((c, output))]


def user_texts(messages: list[dict]) -> list[str]:
    out = []
    for m in messages:
        if m["role"] != "user":
            continue
        if isinstance(m["content"], str):
            out.append(m["content"])
        else:
            out += [b["text"] for b in m["content"] if b.get("type") == "text"]
    return out


def is_summary_request(body: dict) -> bool:
    import json
    last = body["messages"][-1]["content"]
    return "<summary-request>" in (last if isinstance(last, str) else json.dumps(last))


class Model:
    """A scripted model for the stand-in (use as its brain): summary requests get the `summaries`
    replies in turn (the last one repeats), every other request the next of `replies`."""

    def __init__(self, *replies, summaries=({"text": "SUMMARY: the work so far."},)):
        self.replies, self.summaries = list(replies), list(summaries)
        self.summary_calls = 0

    def __call__(self, body: dict) -> dict:
        if is_summary_request(body):
            self.summary_calls += 1
            return self.summaries.pop(0) if len(self.summaries) > 1 else self.summaries[0]
        return self.replies.pop(0) if self.replies else {"text": "(no scripted reply left)"}


def plain(messages: list[dict]) -> list[dict]:
    """Messages as the history holds them, from a request body: cache_control removed and content
    lists, so a request can be compared with the log or a history."""
    out = []
    for m in messages:
        content = m["content"]
        content = [{"type": "text", "text": content}] if isinstance(content, str) else \
            [{k: v for k, v in b.items() if k != "cache_control"} for b in content]
        out.append({"role": m["role"], "content": content})
    return out


ANSWER_PAUSE = max(GRACE, QUIET) + 0.1   # a person reads the approval question, then presses a key (ui/approve.py)


def answer_question(child, key: str) -> None:
    """Press `key` at the approval question as a person does: after a pause, not in a burst of typing."""
    import time
    time.sleep(ANSWER_PAUSE)
    child.send(key)


def make_app(workspace, environ, ask=None, **kwargs):
    """An in-process App with its events collected and `ask` as its approval asker; (app, events)."""
    from agent import App
    events: list = []
    app = App(workspace, environ=environ, **kwargs)
    app.set_emit(events.append)
    app.ask = ask
    return app, events


def run_main(args, env, cwd, monkeypatch, capsys) -> tuple[int, str, str]:
    """`python agent.py ARGS` in this process (the same code, without paying for a new interpreter)."""
    import os
    import signal
    from agent import main
    monkeypatch.setattr(os, "environ", dict(env))
    monkeypatch.chdir(cwd)
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        code = main(list(args))
    except SystemExit as exc:                        # --version and --help exit through argparse
        code = exc.code
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    out, err = capsys.readouterr()
    return code, out, err


class Recorder:
    """Just enough of an App for dispatch: events are kept, turns are recorded."""

    def __init__(self):
        self.events, self.turns = [], []

    def emit(self, event) -> None:
        self.events.append(event)

    def turn(self, text):
        self.turns.append(text)
        return "turn"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def everything_written(workspace: Path) -> str:
    """What s08 wrote in the workspace: session logs, transcripts, saved outputs."""
    return "".join(p.read_text(errors="replace") for folder in (".sessions", ".transcripts", ".task_outputs")
                   for p in (workspace / folder).rglob("*") if p.is_file())


def http(url: str, path: str, body=None, key: str | None = None, content_type: str = "text/plain") -> int:
    """The status of one request, as a browser's simple request or another process would send it."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url + path, data=data, method="GET" if body is None else "POST",
                                     headers={"content-type": content_type, **({"x-api-key": key} if key else {})})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def settings_file(workspace, url, key=TEST_KEY, agreed=False, **more):
    """The workspace's .env naming `url` and its own key; `agreed`: the person agreed to that endpoint for
    this folder at an earlier start (an endpoint from a folder's .env needs that: test_endpoint_trust.py)."""
    lines = [f"ANTHROPIC_BASE_URL={url}", f"ANTHROPIC_API_KEY={key}"] + [f"{k.upper()}={v}" for k, v in more.items()]
    (workspace / ".env").write_text("\n".join(lines) + "\n")
    if agreed:
        remember_endpoint(user_settings_file(base_env(workspace.parent, None)), workspace.resolve(), url)


def counted(messages: list[dict]) -> set[int]:
    """The numbers of the person's messages a cut counted in its "left out here … whole in …" line."""
    numbers: set[int] = set()
    text = json.dumps(messages, ensure_ascii=False)
    for note in re.findall(r"\[… \d+ earlier messages? of yours \((?:some of )?(messages? [\d–, ]+)\)", text):
        for span in note.split(" ", 1)[1].split(", "):
            low, _, high = span.partition("–")
            numbers.update(range(int(low), int(high or low) + 1))
    return numbers
