"""A hostile or flaky endpoint against the window s08 learns (compaction/window.py, the silence learning in
compaction/pipeline.py, the session log's window record): through the real loop, against the stand-in
over HTTP."""

from __future__ import annotations

from events import Compaction


def test_one_empty_answer_does_not_shrink_the_window_below_what_s08_itself_sends(app_for, standin):
    standin.queue({"text": "hello"}, {"text": ""}, *[{"text": f"answer {i}"} for i in range(6)])
    app, events = app_for()
    assert app.turn("hi").ok
    app.turn("and a slightly longer question, with a few more words in it")
    window = app.agent.compactor.window
    print(window, app.agent.compactor.limit, app.agent.compactor.measure(app.messages))
    for i in range(4):
        app.turn(f"question {i}")
    print([e for e in events if isinstance(e, Compaction)])
    print(standin.answers)
    assert False
