"""A tiny rule-based "model" so a person can try s08 against the stand-in without a key.

It understands a handful of requests (English or Chinese) and answers with
real tool calls, enough to run the tutorial's experiments by hand:

    run <command>                        one bash call, then a one-line report
    read <path> [and <path> ...]         read_file calls (several at once = parallel tool_use)
    write <path>: <text>                 a write_file call (\\n in the text is a line break)
    edit <path>: replace <old> with <new>   an edit_file call
    read every Python file one by one    find, then one read_file per reply until done
    about <path> [and <path> ...]        what it sees of each file; with Brain(reread=True) it first
                                         reads again each one it no longer sees whole (only a pointer
                                         to a saved copy, or its name in a summary), as a model would
    use the compact tool [focus: ...]    a compact call
    tell me a long story                 a slow streamed answer (try Ctrl-C)
    a summary request                    a summary built from the conversation it was sent; with
                                         Brain(summary="restate") one that restates all of it instead
    anything else                        a short reply listing what it understands

It keeps the plan of the current multi-step request in memory, so it carries
on correctly after the agent compacts its history. `Brain(label="[demo] ")`
puts the label in front of every answer (not of summaries), so its replies
cannot pass for a real model's.

`Brain(summary="restate")` is the small model of issue 32, whose summary is not smaller than the
history: it restates every text it was given (the typed messages, its answers, the tool calls and
results), in order, as far as the request's max_tokens allows, and ends there cleanly (end_turn: a
summary that is merely too big, not one cut off).
"""

from __future__ import annotations

import json
import re

from .tokens import text_tokens

CJK = re.compile(r"[\u4e00-\u9fff]")
WRITE = re.compile(r"^(?:write|create|写入|写文件|创建)\s*(?:file\s+|文件\s*)?(?P<path>[^\s:：]+)"
                   r"\s*(?:[:：]|\s+with\s+|\s+containing\s+)\s*(?P<content>.+)$", re.I | re.S)
WRITE_TO = re.compile(r"^write\s+(?P<content>.+?)\s+(?:to|into)\s+(?P<path>\S+)$", re.I | re.S)
EDIT = re.compile(r"^(?:edit|change|in|编辑|修改|在)\s*(?P<path>[^\s:：]+?)\s*(?:[:：]|\s|里|中)\s*(?:,\s*)?"
                  r"(?:replace|把|将)\s*(?P<old>.+?)\s*(?:\bwith\b|\bby\b|->|→|改成|改为|替换为|替换成|换成)"
                  r"\s*(?P<new>.+)$", re.I | re.S)
QUOTES = " `'\"“”‘’「」"
STORY = ("Once upon a time a small agent lived in a terminal. Every day it read files, ran commands and "
         "wrote code, and every day its memory grew a little fuller. ") * 8


def _text_of(content) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")


HINT = ("I am a scripted stand-in model, not an AI; I understand only: run <command> · read <file> · "
        "write <file>: <text> · edit <file>: replace <old> with <new> · read every Python file one by one · "
        "use the compact tool, focus: <topic> · tell me a long story.")
HINT_ZH = ("我是脚本化的替身模型，不是 AI，只听得懂：运行 <命令> · 读取 <文件> · 写入 <文件>：<内容> · "
           "编辑 <文件>：把 <旧> 改成 <新> · 逐个读取所有 python 文件 · 使用 compact 工具，重点：<主题> · 讲一个长故事。")
NOT_TYPED = ("[snipped ", "[compacted]", "[Request interrupted", "[The session stopped", "The user's first request",
             "Summary of the conversation so far", "<summary-request>", "Work ledger", "The user's own messages",
             "[… ", "[Plan mode is ")           # a model can only guess from the text; s08 itself knows (compaction/continuity.py)


def _unquote(text: str) -> str:
    return text.strip().strip(QUOTES).replace("\\n", "\n")


def _file_request(request: str, zh: bool) -> dict | None:
    """write/edit requests → a write_file or edit_file call (None: not one of those)."""
    match = EDIT.match(request)
    if match and _unquote(match.group("old")):
        return {"text": "好的，我来修改。" if zh else "Editing it.",
                "tool_calls": [{"name": "edit_file", "input": {"path": match.group("path").strip(QUOTES),
                                                                "old_text": _unquote(match.group("old")),
                                                                "new_text": _unquote(match.group("new"))}}]}
    match = WRITE.match(request) or WRITE_TO.match(request)
    if match:
        content = _unquote(match.group("content"))
        return {"text": "好的，我来写入。" if zh else "Writing it.",
                "tool_calls": [{"name": "write_file", "input": {"path": match.group("path").strip(QUOTES),
                                                                 "content": content + "\n"}}]}
    return None


def _latest_request(messages: list[dict]) -> str:
    """The newest text a person typed — skipping what the agent's compaction wrote itself."""
    for msg in reversed(messages):
        if msg["role"] != "user":
            continue
        content = msg["content"]
        texts = [content] if isinstance(content, str) else \
            [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        typed = [t.strip() for t in texts if t.strip() and not t.strip().startswith(NOT_TYPED)]
        if typed:
            return typed[-1]
    return ""


def _output_lines(text: str) -> list[str]:
    """A result's lines without the bash tool's `[exit code N]` trailer (not a line of the output)."""
    lines = text.strip().splitlines()
    return lines[:-1] if lines and re.fullmatch(r"\[exit code -?\d+\]", lines[-1]) else lines


def _outcome(text: str) -> str:
    """A tool result in a few words: its size and exit code, not its content."""
    lines = _output_lines(text)
    code = re.search(r"\[exit code (\d+)\]\s*$", text)
    return f"{len(lines)} line{'' if len(lines) == 1 else 's'}" + (f", exit code {code.group(1)}" if code else "")


def is_summary_request(body: dict) -> bool:
    """Is this request s08 asking for a summary? Its last message holds the "<summary-request>" instruction
    (compaction/summary.py)."""
    messages = body.get("messages") if isinstance(body, dict) else None
    return isinstance(messages, list) and bool(messages) and isinstance(messages[-1], dict) \
        and _summary_requested(messages)


def _summary_requested(messages: list[dict]) -> bool:
    content = messages[-1]["content"]
    text = content if isinstance(content, str) else " ".join(
        b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return "<summary-request>" in text


def _pending_results(messages: list[dict]) -> list[dict]:
    last = messages[-1]
    if last["role"] != "user" or isinstance(last["content"], str):
        return []
    if any(b.get("type") == "text" for b in last["content"]):
        return []   # the person wrote something after the results: that is the new request
    return [b for b in last["content"] if b.get("type") == "tool_result"]


def _result_text(block: dict) -> str:
    content = block.get("content", "")
    return content if isinstance(content, str) else _text_of(content)


POINTER_STARTS = ("[Previous: used", "<persisted-output>")      # a cleared or persisted result


def _whole_reads(messages: list[dict]) -> dict[str, str]:
    """path → the text of the newest read_file result that holds that file whole."""
    asked = {b.get("id"): (b.get("input") or {}).get("path") for m in messages if m["role"] == "assistant"
             and isinstance(m["content"], list) for b in m["content"]
             if b.get("type") == "tool_use" and b.get("name") == "read_file"}
    whole: dict[str, str] = {}
    for m in messages:
        if m["role"] != "user" or isinstance(m["content"], str):
            continue
        for b in m["content"]:
            path = asked.get(b.get("tool_use_id")) if b.get("type") == "tool_result" else None
            text = _result_text(b) if path else ""
            if path and not b.get("is_error") and not text.startswith(POINTER_STARTS):
                whole[path] = text
    return whole


# "Every Python file" means the workspace's own: what git tracks or would track (git-ignored folders
# left out), and never a build/ folder, an *.egg-info, a virtualenv or a hidden folder — the same
# rule when there is no git (find prunes those folders, own_python_files drops them from either list).
LIST_TRACKED = "git ls-files --cached --others --exclude-standard -- '*.py'"
LIST_ALL = ("find . \\( -name '.?*' -o -name build -o -name '*.egg-info' -o -name venv -o -name node_modules "
            "-o -name __pycache__ \\) -prune -o -name '*.py' -print")
NOT_OWN = re.compile(r"(^|/)(\.[^/]+|build|venv|node_modules|__pycache__|[^/]*\.egg-info)/")


def own_python_files(listing: str) -> list[str]:
    """The Python files of a listing (one path a line) that belong to the workspace itself, sorted."""
    files = set()
    for line in listing.splitlines():
        path = line.strip()
        path = path[2:] if path.startswith("./") else path
        if path.endswith(".py") and not NOT_OWN.search(path) and not path.startswith("[exit code"):
            files.add(path)
    return sorted(files)


RESTATE_MARGIN = 16          # tokens a restating summary stays under its max_tokens (so it ends, not cut)


def _max_tokens(body: dict) -> int:
    value = body.get("max_completion_tokens") or body.get("max_tokens") or 0
    return value if isinstance(value, int) and value > 0 else 1_000


def _texts(message: dict) -> list[str]:
    """Every text of one message, in either dialect: typed text, tool calls, tool results."""
    content = message.get("content")
    texts = [content] if isinstance(content, str) else []
    for b in content if isinstance(content, list) else []:
        if not isinstance(b, dict):
            continue
        if b.get("type") == "text":
            texts.append(b.get("text", ""))
        elif b.get("type") == "tool_use":
            texts.append(f"{b.get('name')} {json.dumps(b.get('input', {}))}")
        elif b.get("type") == "tool_result":
            texts.append(_result_text(b))
    for call in message.get("tool_calls") or []:          # OpenAI's dialect (behind a gateway)
        fn = call.get("function") or {} if isinstance(call, dict) else {}
        texts.append(f"{fn.get('name')} {fn.get('arguments', '')}")
    return [t for t in texts if isinstance(t, str) and t.strip()]


def restatement(messages: list[dict], budget: int) -> str:
    """Everything `messages` say, restated in order, as far as `budget` tokens (the stand-in's count) go."""
    lines = ["Everything so far, restated:"]
    for m in messages:
        if isinstance(m, dict) and m.get("role") != "system":
            lines += [f"{m.get('role')}: {t}" for t in _texts(m)]
    out, used = [], 0
    for line in "\n".join(lines).split("\n"):
        cost = text_tokens(line + "\n")
        if used + cost > budget:
            words: list[str] = []
            for word in line.split(" "):
                if used + text_tokens(" ".join(words + [word]) + "\n") > budget:
                    break
                words.append(word)
            if words:
                out.append(" ".join(words))
            break
        out.append(line)
        used += cost
    return "\n".join(out)


def _bash(command: str) -> dict:
    return {"tool_calls": [{"name": "bash", "input": {"command": command}}]}


class Brain:
    """Callable reply source for StandIn(brain=Brain())."""

    def __init__(self, label: str = "", reread: bool = False, summary: str = "short"):
        if summary not in ("short", "restate"):
            raise ValueError(f"summary must be 'short' or 'restate', not {summary!r}")
        self.reread, self.summary = reread, summary
        self.plan_key: str | None = None
        self.files: list[str] | None = None
        self.listed_with = LIST_TRACKED
        self.next_file = 0
        self.label = label

    def __call__(self, body: dict) -> dict:
        reply = self._answer(body)
        if self.label and reply.get("text") and not _summary_requested(body["messages"]):
            reply["text"] = self.label + reply["text"]
        return reply

    def _answer(self, body: dict) -> dict:
        messages = body["messages"]
        request = _latest_request(messages)
        low = request.lower()
        zh = bool(CJK.search(request))
        results = _pending_results(messages)
        if _summary_requested(messages):
            if self.summary == "restate":
                return {"text": restatement(messages[:-1], _max_tokens(body) - RESTATE_MARGIN)}
            return {"text": self._summary(messages)}
        if ("every python file" in low or "all python files" in low or
                ("python" in low and ("逐个" in request or "每个" in request or "所有" in request))):
            return self._read_all(request, results, zh)
        about = re.match(r"^(?:about|关于)\s+(.+)$", request, re.I | re.S)
        if about:
            return self._about(about.group(1), messages)
        if results:
            return {"text": self._report(results, zh)}
        match = re.match(r"^(?:run|运行|执行|\$)\s*[:：]?\s*(.+)$", request, re.S | re.I)
        if match:
            return {"text": "好的，我来运行。" if zh else "Running it.",
                    "tool_calls": [{"name": "bash", "input": {"command": match.group(1).strip()}}]}
        edit = _file_request(request, zh)
        if edit:
            return edit
        match = re.match(r"^(?:read|读取|读)\s+(.+)$", request, re.I)
        if match:
            paths = [p.strip(" `'\"") for p in re.split(r",|\band\b|和", match.group(1)) if p.strip(" `'\"")]
            return {"tool_calls": [{"name": "read_file", "input": {"path": p}} for p in paths]}
        if "compact" in low or "压缩" in request:
            focus = re.search(r"(?:focus|重点)\s*[:：]\s*(.+)$", request, re.I | re.S)
            return {"text": "Compacting the conversation." if not zh else "正在压缩上下文。",
                    "tool_calls": [{"name": "compact", "input": {"focus": focus.group(1).strip()} if focus else {}}]}
        if "story" in low or "故事" in request:
            return {"text": STORY.strip(), "delay": 0.03, "chunk": 6}
        said = f"你说：{request[:200]}\n\n" if zh else f"You said: {request[:200]}\n\n"
        return {"text": said + (HINT_ZH if zh else HINT)}

    def _read_all(self, request: str, results: list[dict], zh: bool) -> dict:
        """Experiment 1: list the workspace's own Python files (git's view first, find's where there is
        no git), then read them one per reply."""
        if self.plan_key != request:
            self.plan_key, self.files, self.next_file, self.listed_with = request, None, 0, LIST_TRACKED
            return _bash(LIST_TRACKED)
        if self.files is None:
            if not results:
                return _bash(self.listed_with)
            text = _result_text(results[0])
            if self.listed_with == LIST_TRACKED and not re.search(r"\[exit code 0\]\s*$", text):
                self.listed_with = LIST_ALL                  # not a git repository
                return _bash(LIST_ALL)
            self.files = own_python_files(text)
        if self.next_file < len(self.files):
            path = self.files[self.next_file]
            self.next_file += 1
            return {"tool_calls": [{"name": "read_file", "input": {"path": path}}]}
        done = len(self.files)
        self.plan_key = None
        return {"text": f"我逐个读完了 {done} 个 Python 文件。" if zh else
                f"I read all {done} Python files one by one."}

    def _about(self, listed: str, messages: list[dict]) -> dict:
        """What it sees of each file: its lines when a read_file result holds it whole; in reread mode
        a file it does not see whole is read again first (one call, all of them in parallel)."""
        paths = [p.strip(" `'\"") for p in re.split(r",|\band\b|和", listed) if p.strip(" `'\"")]
        whole = _whole_reads(messages)
        missing = [p for p in paths if p not in whole]
        last = messages[-1]
        rereading = last["role"] == "user" and _pending_results(messages)
        if missing and self.reread and not rereading:
            return {"text": "Reading again what I no longer see whole.",
                    "tool_calls": [{"name": "read_file", "input": {"path": p}} for p in missing]}
        return {"text": "\n".join(f"- {p}: {len(_output_lines(whole[p]))} lines" if p in whole else
                                  f"- {p}: I no longer see it whole" for p in paths)}

    def _report(self, results: list[dict], zh: bool) -> str:
        lines = []
        for r in results:
            text = _result_text(r).strip()
            first = text.splitlines()[0][:120] if text else "(empty)"
            status = "error" if r.get("is_error") else "ok"
            count = len(_output_lines(text))
            lines.append(f"- {status}: {first} ({count} line{'' if count == 1 else 's'})")
        return ("工具结果：\n" if zh else "Tool results:\n") + "\n".join(lines)

    def _summary(self, messages: list[dict]) -> str:
        requests, files, commands, outcomes, calls = [], [], [], [], {}
        focus = re.search(r"Pay special attention to: (.+)", _text_of(messages[-1]["content"]))
        for msg in messages:
            if msg["role"] == "user":
                content = msg["content"]
                for text in [content] if isinstance(content, str) else [
                        b.get("text", "") for b in content if b.get("type") == "text"]:
                    if text.strip() and not text.strip().startswith(NOT_TYPED):
                        requests.append(text.strip().splitlines()[0][:200])
                if isinstance(content, list):
                    outcomes += [(b.get("tool_use_id"), _result_text(b)) for b in content
                                 if b.get("type") == "tool_result"]
            elif isinstance(msg["content"], list):
                for b in msg["content"]:
                    if b.get("type") == "tool_use":
                        inp = b.get("input", {})
                        what = f"{b['name']} {inp.get('path') or inp.get('command') or ''}"
                        calls[b.get("id")] = " ".join(what.split())[:80]
                        if "path" in inp:
                            files.append(f"{b['name']} {inp['path']}")
                        if "command" in inp:
                            commands.append(inp["command"][:120])
        out = [f"## Focus\n- {focus.group(1).strip()[:200]}"] if focus else []
        out += ["## User requests"] + [f"- {r}" for r in requests[-10:]]
        out += ["## Files touched"] + [f"- {f}" for f in dict.fromkeys(files)][-40:]
        out += ["## Commands run"] + [f"- {c}" for c in dict.fromkeys(commands)][-20:]
        out += ["## Latest results"] + [f"- {calls.get(i, 'a tool')}: {_outcome(t)}" for i, t in outcomes[-5:]]
        out += ["## Current state", "- Continue with the latest user request."]
        return "\n".join(out)
