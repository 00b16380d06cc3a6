"""The built-in demo model: the default without a key, labelled everywhere, through the real HTTP path."""

from __future__ import annotations

import json
import socket
import subprocess

import pytest

from support.agents import TEST_KEY, base_env
from standin import Brain, StandIn


@pytest.fixture
def demo_app(tmp_path, workspace):
    from agent import App
    events: list = []
    app = App(workspace, environ=base_env(tmp_path, None))
    app.set_emit(events.append)
    yield app, events
    app.close()


def test_the_demo_understands_files_edits_and_chinese(demo_app, workspace):
    app, _events = demo_app
    assert app.demo and app.settings.model_id == "s08-demo" and app.settings.base_url.startswith("http://127.0.0.1:")
    app.turn("write notes.txt: hello\\nworld")
    assert (workspace / "notes.txt").read_text() == "hello\nworld\n"
    app.turn("edit notes.txt: replace hello with goodbye")
    assert (workspace / "notes.txt").read_text() == "goodbye\nworld\n"
    app.turn("编辑 notes.txt：把 world 改成 世界")
    assert (workspace / "notes.txt").read_text() == "goodbye\n世界\n"
    app.turn("写入 笔记.txt：你好")
    assert (workspace / "笔记.txt").read_text() == "你好\n"
    assert app.turn("read notes.txt").text.startswith("[demo] Tool results:\n- ok: goodbye")
    hint = app.turn("what is the meaning of life?").text
    assert hint.startswith("[demo] You said: what is the meaning of life?")
    for example in ("run <command>", "read <file>", "write <file>", "edit <file>", "one by one", "compact",
                    "story"):
        assert example in hint
    assert "逐个读取所有 python 文件" in app.turn("你好").text


def test_demo_summaries_come_from_the_conversation_and_carry_no_label(demo_app, workspace):
    app, events = demo_app
    (workspace / "parser.py").write_text("def parse(line):\n    return line.split(',')\n" * 50)
    app.turn("read parser.py")
    app.turn("run echo compiled-ok")
    app.compact("the parser")
    summary = json.dumps(app.messages[0])
    assert "## Focus\\n- the parser" in summary and "read_file parser.py" in summary
    assert "echo compiled-ok" in summary and "- run echo compiled-ok" in summary
    assert "Summary of the conversation so far" in summary and "[demo]" not in summary


def test_closing_the_app_stops_the_demo_server(tmp_path, workspace):
    from agent import App
    app = App(workspace, environ=base_env(tmp_path, None))
    port = int(app.settings.base_url.rsplit(":", 1)[1])
    app.close()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2)


def test_models_endpoint_checks_the_key():
    import anthropic              # here, not while collecting (see tests/standin/test_standin.py's sdk())
    with StandIn(api_key=TEST_KEY) as server:
        good = anthropic.Anthropic(base_url=server.url, api_key=TEST_KEY, max_retries=0)
        assert good.models.list(limit=1).data[0].id == "stand-in"
        with pytest.raises(anthropic.AuthenticationError):
            anthropic.Anthropic(base_url=server.url, api_key="wrong-key", max_retries=0).models.list(limit=1)


def test_brain_label_is_optional_and_not_on_summaries():
    body = {"messages": [{"role": "user", "content": "hello"}]}
    assert Brain()(body)["text"].startswith("You said: hello")
    assert Brain(label="[demo] ")(body)["text"].startswith("[demo] You said: hello")
    summary = {"messages": [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"},
                            {"role": "user", "content": "<summary-request>\nsummarize\n</summary-request>"}]}
    assert Brain(label="[demo] ")(summary)["text"].startswith("## User requests\n- hello")


def test_every_python_file_means_the_workspaces_own(app_for, standin, workspace):
    """Experiment 1 counts neither a build/ nor an *.egg-info, a virtualenv or a git-ignored folder —
    with git (its view) and without (find prunes them); one rule (standin/brain.py)."""
    from standin import Brain
    for path in ("a.py", "src/b.py", "build/lib/a.py", "s08.egg-info/x.py", ".venv/lib/v.py", "venv/z.py",
                 "out/o.py", "src/__pycache__/b.py"):
        (workspace / path).parent.mkdir(parents=True, exist_ok=True)
        (workspace / path).write_text("x = 1\n")
    (workspace / ".gitignore").write_text("out/\n")
    standin.brain = Brain()
    app, _ = app_for()
    assert app.turn("read every Python file one by one").text == "I read all 3 Python files one by one."
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    assert app.turn("read every Python file one by one").text == "I read all 2 Python files one by one."
    read = [b["input"]["path"] for m in app.messages if m["role"] == "assistant" for b in m["content"]
            if b.get("type") == "tool_use" and b["name"] == "read_file"]
    assert read == ["a.py", "out/o.py", "src/b.py", "a.py", "src/b.py"]


def _raw_post(url: str, head: str) -> tuple[str, bytes]:
    """Send only a request's head (no body) and read until the server closes: (status line, the rest).
    A server that waited for the body would never answer: the socket's timeout fails the test."""
    port = int(url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head.encode() + b"\r\n")
        received = b""
        while chunk := sock.recv(65536):            # b"": the server closed the connection
            received += chunk
    status, _, rest = received.partition(b"\r\n")
    return status.decode(), rest


@pytest.mark.parametrize("headers, status", [
    ("Content-Length: 900000000", "401"),                                 # no key: refused before any body
    ("x-api-key: wrong\r\nContent-Length: 900000000", "401"),
    ("x-api-key: {key}\r\nContent-Length: 900000000", "413"),             # the key, but far too large
    ("x-api-key: {key}\r\nContent-Length: -5", "400"),
    ("x-api-key: {key}\r\nContent-Length: 1_000", "400"),
    ("x-api-key: {key}", "411"),                                          # no length at all
    ("x-api-key: {key}\r\nTransfer-Encoding: chunked", "411"),
])
def test_the_demo_port_checks_the_key_and_the_length_before_reading_a_body(headers, status):
    from access.demo import DemoModel
    demo = DemoModel().start()
    try:
        head = (f"POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                f"{headers.format(key=demo.key)}\r\n")
        line, rest = _raw_post(demo.url, head)
        assert line.split()[1] == status, (line, rest[:300])
        assert b"connection: close" in rest.lower() or status == "401"
        good = json.dumps({"model": "s08-demo", "max_tokens": 50, "messages": [{"role": "user", "content": "hi"}]})
        line, rest = _raw_post(demo.url, f"POST /v1/messages HTTP/1.1\r\nHost: x\r\nx-api-key: {demo.key}\r\n"
                                         f"Connection: close\r\nContent-Length: {len(good)}\r\n\r\n{good}")
        assert line.split()[1] == "200" and b"You said: hi" in rest       # the port still serves
    finally:
        demo.stop()
