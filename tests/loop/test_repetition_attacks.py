"""Legitimate repetition against the loop detection (llm/repetition.py, llm/reply.py), through the real loop
against the stand-in over HTTP: a file of identical lines written through a tool call is written whole —
only an answer's text is ever cut — and an answer stopped on a loop leaves a history the next call sends."""

from __future__ import annotations

from events import Notice
from support.agents import TEST_KEY, base_env
from support.broken_stream import BrokenServer, message

LINE = "value = 0  # the same placeholder line, on purpose\n"


def repeated_notes(events):
    return [e.text for e in events if isinstance(e, Notice) and "repeated the same" in e.text]


def test_a_file_of_identical_lines_written_by_a_tool_call_is_written_whole(app_for, standin, workspace):
    content = LINE * 500      # 25,500 characters: within MAX_TOKENS, and text this long would be stopped as a loop
    standin.queue({"text": "Writing it.", "tool_calls": [{"name": "write_file",
                                                          "input": {"path": "zeros.py", "content": content}}]},
                  {"text": "Written."})
    app, events = app_for(max_tokens=8_000)
    assert app.turn("write zeros.py").text == "Written."
    assert (workspace / "zeros.py").read_text() == content
    assert not repeated_notes(events)


def test_a_loop_stopped_after_a_finished_tool_call_keeps_the_call_and_a_valid_history(tmp_path, workspace):
    """The answer makes a call, then its text loops: the stream is stopped on the loop, the call (whole
    before the loop began) runs, and the next requests are ones the real API accepts."""
    from agent import App
    broken = BrokenServer().start()
    try:
        loop = message({"type": "tool_use", "id": "toolu_1", "name": "write_file",
                        "input": {"path": "a.txt", "content": "a\n"}},
                       {"type": "text", "text": "I will fix the bug now. " * 2_000}, stop_reason="max_tokens")
        broken.queue({"events": loop}, {"events": message({"type": "text", "text": "Done."})},
                     {"events": message({"type": "text", "text": "fine"})})
        env = {**base_env(tmp_path), "ANTHROPIC_BASE_URL": broken.url, "ANTHROPIC_API_KEY": TEST_KEY,
               "MAX_TOKENS": "1000"}
        events: list = []
        app = App(workspace, environ=env)
        app.set_emit(events.append)
        result = app.turn("go")
        assert result.ok, result.error
        assert app.turn("and now?").text == "fine"
    finally:
        broken.stop()
    assert not broken.rejections, broken.rejections
    assert (workspace / "a.txt").read_text() == "a\n"
    assert len(repeated_notes(events)) == 1
