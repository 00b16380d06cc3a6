"""The window learned end to end in-process, through the real SDK against the stand-in over HTTP (issue 32):
the server's word used, shown in the banner and /context (and not asked when CONTEXT_WINDOW is set);
an empty answer after smaller answered prompts bounds the window so that the next requests fit."""

from __future__ import annotations

import io

import pytest

from rich.console import Console

from commands import dispatch
from events import ContextReport, Notice
from ui.sessions_view import print_banner


def log_part(n: int) -> str:
    """A part of a build log: dense with numbers and punctuation, which the endpoint counts higher than
    s08's estimate does (the stand-in's counter, like a real tokenizer)."""
    return "\n".join(f"[{n:02d}:{i:04d}] gcc -O2 -c src/mod{i % 37}.c -o build/mod{i % 37}.o  # 0x{i * 7919:08x} "
                     f"ok ({i * 13 % 997} ms)" for i in range(60))


def banner(app) -> str:
    out = io.StringIO()
    print_banner(Console(file=out, width=200, color_system=None), app)
    return out.getvalue()


def told_app(app_for, standin, **options):
    for name, value in options.items():
        setattr(standin, name, value)
    app, events = app_for()
    assert app.window_probe is not None and app.window_probe.done.wait(30)
    return app, events


def test_the_llama_cpp_window_is_used_and_shown_in_the_banner_and_context(app_for, standin):
    app, events = told_app(app_for, standin, props_window=4_096)
    standin.queue({"text": "hello"})
    assert app.turn("hi").ok
    window = app.agent.compactor.window
    assert (window.tokens, window.limit, window.source) == (4_096, 3_072, "llama.cpp /props n_ctx")
    assert standin.requests[-1]["max_tokens"] < 4_096           # the answer's room is within the window
    assert "context window 4,096 tokens (llama.cpp /props n_ctx) · compaction at 3,072" in banner(app)
    dispatch(app, "/context")
    report = [e for e in events if isinstance(e, ContextReport)][-1]
    assert (report.window, report.window_source, report.limit, report.window_shrunk) == (
        4_096, "llama.cpp /props n_ctx", 3_072, True)
    said = [e.text for e in events if isinstance(e, Notice) and e.text.startswith("[context window")]
    assert said == ["[context window 4,096 tokens (llama.cpp /props n_ctx); compacting at 3,072]"]
    app.clear()                                                 # the window belongs to the endpoint
    assert (app.agent.compactor.window.tokens, app.agent.compactor.window.source) == (4_096, "llama.cpp /props n_ctx")


def test_the_ollama_window_is_used(app_for, standin):
    app, _ = told_app(app_for, standin, ollama_window=8_192)
    app.probe_window()
    assert (app.agent.compactor.window.tokens, app.agent.compactor.window.source) == (8_192, "Ollama /api/show num_ctx")


def test_the_vllm_window_is_used(app_for, standin):
    app, _ = told_app(app_for, standin, vllm_window=16_384)
    app.probe_window()
    assert (app.agent.compactor.window.tokens, app.agent.compactor.window.source) == (
        16_384, "/v1/models max_model_len")


def test_context_window_set_by_the_person_wins_and_the_server_is_not_asked(app_for, standin):
    standin.props_window = 4_096
    app, _ = app_for(context_window=100_000)
    assert app.window_probe is None
    standin.queue({"text": "hello"})
    assert app.turn("hi").ok
    assert standin.probes == [] and app.agent.compactor.window.tokens == 100_000
    assert "context window 100,000 tokens (CONTEXT_WINDOW)" in banner(app)


def test_a_small_context_window_set_by_the_person_shows_where_compaction_really_starts(app_for, standin):
    """CONTEXT_WINDOW=4096 with the default CONTEXT_LIMIT (50,000): compaction starts where a request would no
    longer fit with the answer's room (compaction/room.py), and the banner says that, not 50,000."""
    app, _ = app_for(context_window=4_096)
    assert app.agent.compactor.limit == 3_072
    assert "context window 4,096 tokens (CONTEXT_WINDOW) · compaction at 3,072" in banner(app)


def test_while_the_server_is_asked_the_banner_says_so(app_for, standin):
    standin.props_window = 4_096
    app, _ = app_for()
    app.agent.compactor.endpoint.window_probe = app.window_probe        # as at start-up, before the first turn took it
    assert "· asking the server" in banner(app)


def test_context_window_set_later_wins_over_the_servers_word(app_for, standin, workspace):
    app, _ = told_app(app_for, standin, props_window=4_096)
    app.probe_window()
    assert app.agent.compactor.window.tokens == 4_096
    (workspace / ".env").write_text("CONTEXT_WINDOW=64000\n")
    standin.queue({"text": "hello"})
    assert app.turn("hi").ok                                    # the .env is read again before the turn
    assert (app.agent.compactor.window.tokens, app.agent.compactor.window.source) == (64_000, "CONTEXT_WINDOW")


def test_an_endpoint_that_says_nothing_keeps_todays_window(app_for, standin):
    app, _ = app_for()
    assert app.window_probe is not None and app.window_probe.done.wait(30)
    standin.queue({"text": "hello"})
    assert app.turn("hi").ok
    window = app.agent.compactor.window
    assert (window.tokens, window.limit, window.source) == (200_000, 50_000, "CONTEXT_WINDOW")
    assert standin.answers == ["200 end_turn"]                  # the questions left no trace in what it answered


def test_silence_after_smaller_answered_prompts_makes_the_next_requests_fit(app_for, standin):
    """Twelve turns of build-log pastes and short questions at a 4,096 window that answers an overflow
    with an empty 200 (a gateway in front of llama.cpp): at most one request gets the silent answer, and
    every turn is answered. Before: 25 silent answers, 10 of the 12 turns failed."""
    standin.context_window, standin.messages_overflow = 4_096, "empty"
    app, events = app_for()
    results = []
    for t in range(12):
        text = f"here is part {t // 2 + 1} of the build log:\n{log_part(t)}" if t % 2 == 0 else "what failed so far?"
        results.append(app.turn(text).ok)
    assert standin.silent_answers <= 1
    assert all(results)
    window = app.agent.compactor.window
    assert window.source.startswith("learned from an empty answer at ~")
    app.close()
    from session.replay import load_session
    resumed = load_session(app.messages.log.path)                # the resume keeps it
    assert resumed.window == window.tokens and resumed.window_silent


# ---- the person's CONTEXT_WINDOW and a window one empty answer bounded; a resumed session --------------

def a_silence_bound(app) -> int:
    compactor = app.agent.compactor
    compactor.endpoint.largest_answered = compactor.endpoint.largest_estimate = 3_000
    assert compactor.endpoint.silence_is_overflow(4_000)
    assert compactor.window.source.startswith("learned from an empty answer")
    return compactor.window.tokens


@pytest.mark.parametrize("setting", [64_000, 200_000])         # 200,000: the default, now set by the person
def test_context_window_set_later_wins_over_a_window_an_empty_answer_bounded(app_for, standin, workspace, setting):
    app, _ = app_for()
    assert a_silence_bound(app) == 3_500
    (workspace / ".env").write_text(f"CONTEXT_WINDOW={setting}\n")
    standin.queue({"text": "hello"})
    assert app.turn("hi").ok                                    # the .env is read again before the turn
    assert (app.agent.compactor.window.tokens, app.agent.compactor.window.source) == (setting, "CONTEXT_WINDOW")
    standin.queue({"text": "hello again"})
    app.agent.compactor.endpoint.largest_answered = app.agent.compactor.endpoint.largest_estimate = 3_000
    assert app.agent.compactor.endpoint.silence_is_overflow(4_000)       # learned again while it stays set: kept
    assert app.turn("and?").ok and app.agent.compactor.window.tokens == 3_500


def test_context_window_set_later_does_not_override_what_the_api_stated(app_for, standin, workspace):
    app, _ = app_for()
    app.agent.compactor.endpoint.learn_window(12_000, quiet=True)
    (workspace / ".env").write_text("CONTEXT_WINDOW=64000\n")
    standin.queue({"text": "hello"})
    assert app.turn("hi").ok
    assert (app.agent.compactor.window.tokens, app.agent.compactor.window.source) == (12_000, "learned from the API")


def test_a_resume_with_context_window_set_does_not_take_back_an_empty_answers_bound(app_for, standin, workspace,
                                                                                    tmp_path):
    from agent import App
    from session.replay import load_session
    from support.agents import base_env
    app, _ = app_for()
    standin.queue({"text": "hello"})
    assert app.turn("hi").ok
    bound = a_silence_bound(app)
    app.close()
    loaded = load_session(app.messages.log.path)
    assert loaded.window == bound and loaded.answered > 0
    kept = App(workspace, environ=base_env(tmp_path, standin), resume=loaded)
    assert kept.agent.compactor.window.tokens == bound                    # nothing set: the bound is resumed
    assert kept.agent.compactor.endpoint.largest_answered == loaded.answered       # and what the log says was answered
    kept.close()
    loaded = load_session(app.messages.log.path)
    mine = App(workspace, environ=base_env(tmp_path, standin, context_window=64_000), resume=loaded)
    assert (mine.agent.compactor.window.tokens, mine.agent.compactor.window.source) == (64_000, "CONTEXT_WINDOW")
    mine.close()
