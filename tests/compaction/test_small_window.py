"""Issue 32, "always make room": at any window s08 accepts, what the pipeline sends fits the window with
room for the answer, whatever the summary did, and no session is stuck by its own history.

The reproduction is the stuck session seen through LiteLLM in front of llama.cpp (n_ctx 4,096): pasted
parts of a build log, a real model whose summary is not smaller than the history (every typed message
carried whole into it), the fallback with "nothing more to cut", and every later short question over
the window. It uses only what main already had (no compaction/room.py import), so it can be run against
main's code: there it fails.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from compaction import Compactor, Continuity, estimate_tokens
from config import Settings, load_settings
from loop.agent_loop import SYSTEM_PROMPT
from messages import add_user_text
from standin import validate_request
from support.helpers import ask, call, counted, results, say
from support.strategies import histories
from tools.registry import tool_schemas

WINDOW = 4_096
ANSWER = 1_024        # a quarter of the window is kept for the answer (room.py's answer_room at 4,096)
SYSTEM = SYSTEM_PROMPT.format(workspace="/work/project")
TOOLS = tool_schemas()


def not_smaller(request: list[dict]) -> tuple[str, str]:
    """A small local model's summary: it repeats what it was given (at least as long as the history)."""
    return "Summary: " + json.dumps(request, ensure_ascii=False), "end_turn"


def build_log_part(n: int) -> str:
    """About 1,200 tokens of a build log, different in every part."""
    return "\n".join(f"[{n}:{i:03}] cc -O2 -c src/module_{n}_{i}.c -o build/module_{n}_{i}.o  warning: unused "
                     f"variable 'tmp{i}'" for i in range(48))


def fits(out: list[dict], window: int = WINDOW, answer: int = ANSWER) -> bool:
    return estimate_tokens(out, SYSTEM, TOOLS) + answer <= window


class Session:
    """The loop's part, in process: the person types, the pipeline prepares the request, the model answers."""

    def __init__(self, workspace: Path, summarize=not_smaller, learned: bool = True, **settings_):
        self.settings = Settings(**settings_) if learned else Settings(context_window=WINDOW, **settings_)
        self.events: list = []
        self.keep = Continuity(workspace=workspace)
        self.compactor = Compactor(self.settings, workspace, summarize, self.events.append, SYSTEM, TOOLS,
                                   self.keep)
        if learned:                        # the window learned from the endpoint, as in the issue
            self.compactor.endpoint.learn_window(WINDOW, quiet=True)
        self.messages: list[dict] = []
        self.sent: list[list[dict]] = []

    def type(self, text: str) -> None:
        self.keep.typed_message(text)
        add_user_text(self.messages, text)

    def call_model(self, reply: dict) -> None:
        out = self.compactor.prepare(self.messages)
        validate_request({"model": "m", "max_tokens": 10, "messages": out})
        self.sent.append(out)
        self.messages = out + [reply]


def test_the_stuck_session_of_issue_32_always_makes_room(workspace):
    """Three pasted parts of a build log, then short questions, at a 4,096 window with a summarizer whose
    summary is not smaller: every request sent fits with room for the answer (on main it overflowed from
    the third part on, every question after it too)."""
    s = Session(workspace)
    for n in range(3):
        s.type(f"part {n + 1} of the build log:\n{build_log_part(n)}")
        s.call_model(say(f"Got part {n + 1}."))
    for q in ["why did the build fail?", "which module first?", "and the warning count?", "thanks, what next?"]:
        s.type(q)
        s.call_model(say("An answer."))
    sizes = [estimate_tokens(out, SYSTEM, TOOLS) for out in s.sent]
    assert all(size + ANSWER <= WINDOW for size in sizes), sizes
    said = [getattr(e, "message", getattr(e, "text", "")) for e in s.events]
    assert any("compacted" in m or "cut to fit the window" in m for m in said)
    assert not any("nothing more to cut" in m for m in said)
    last = json.dumps(s.sent[-1], ensure_ascii=False)
    assert "thanks, what next?" in last and "and the warning count?" in last      # the newest stay whole


def test_a_30_turn_session_of_pastes_reads_and_commands_at_the_minimum_window(workspace):
    """At CONTEXT_WINDOW=4096 (told, not learned): pastes, file reads and commands for 30 turns; every
    request fits with the answer's room, every request is valid, and the newest message is whole."""
    s = Session(workspace, learned=False)
    for turn in range(30):
        kind = turn % 3
        if kind == 0:
            text = f"turn {turn}: here is a paste\n{build_log_part(turn)[:1500 + 200 * (turn % 5)]}"
        elif kind == 1:
            text = f"turn {turn}: read src/file_{turn}.py and tell me what it does"
        else:
            text = f"turn {turn}: run the tests"
        s.type(text)
        if kind == 0:
            s.call_model(say("Noted."))
            continue
        c = call("read_file", path=f"src/file_{turn}.py") if kind == 1 else call("bash", command="pytest -q")
        s.call_model(ask(c))
        output = "\n".join(f"line {i}: value = compute({i}, {turn})" for i in range(120 if kind == 1 else 60))
        s.messages.append(results((c, output)))
        s.call_model(say(f"Done with turn {turn}."))
        assert text in json.dumps(s.sent[-2], ensure_ascii=False)[:10 ** 7] or \
            "of yours is shortened here" in json.dumps(s.sent[-2], ensure_ascii=False)
    assert all(fits(out) for out in s.sent), [estimate_tokens(o, SYSTEM, TOOLS) for o in s.sent]


def test_a_window_below_the_minimum_is_refused_with_one_line(tmp_path):
    result = load_settings(tmp_path, environ={"CONTEXT_WINDOW": "2048"}, user_file=tmp_path / "none.env")
    assert result.settings.context_window == 200_000
    lines = [w for w in result.warnings if "CONTEXT_WINDOW" in w]
    assert lines == ["CONTEXT_WINDOW='2048' (from environment) must be at least 4096; using the default 200000"]
    ok = load_settings(tmp_path, environ={"CONTEXT_WINDOW": "4096"}, user_file=tmp_path / "none.env")
    assert ok.settings.context_window == 4_096


def test_the_fallback_cuts_to_a_token_target(workspace):
    from compaction.fallback import cut_without_model
    keep = Continuity(workspace=workspace)
    messages: list[dict] = []
    for n in range(4):
        keep.typed_message(f"part {n}: {build_log_part(n)}")
        add_user_text(messages, f"part {n}: {build_log_part(n)}")
        messages.append(say("ok " * 200))
    keep.typed_message("the question")
    add_user_text(messages, "the question")
    before = copy.deepcopy(messages)
    out, _ = cut_without_model(messages, Settings(), workspace, keep, None, lambda e: None, target=2_000)
    assert messages == before and estimate_tokens(out) <= 2_000
    assert "the question" in json.dumps(out)
    assert len(keep.typed.visible(out)) + len(counted(out)) == len(keep.typed)


def failing(request):
    raise RuntimeError("overloaded")


def fine(request):
    return "Summary: the work so far.", "end_turn"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(histories(), st.integers(4_096, 48_000), st.sampled_from([512, 2_000, 8_000, 32_000]),
       st.sampled_from([not_smaller, failing, fine]), st.booleans())
def test_what_the_pipeline_returns_always_fits_the_window(tmp_path_factory, messages, window, max_tokens,
                                                          summarize, learned):
    """For any history and any window at or above the minimum: what the pipeline returns, plus the
    answer's room, fits the window; the request is valid; every message the person typed is whole,
    shortened with its pointer, or counted in a line that says where it is whole."""
    from compaction.room import answer_room, MIN_WINDOW
    assert window >= MIN_WINDOW
    workspace = tmp_path_factory.mktemp("room")
    config = Settings(context_window=window, max_tokens=max_tokens) if not learned else Settings(max_tokens=max_tokens)
    keep = Continuity.from_history(messages, workspace)
    compactor = Compactor(config, workspace, summarize, continuity=keep, system=SYSTEM, tools=TOOLS)
    if learned:
        compactor.endpoint.learn_window(window, quiet=True)
    snapshot = copy.deepcopy(messages)
    out = compactor.prepare(messages)
    assert messages == snapshot, "the input was mutated"
    validate_request({"model": "m", "max_tokens": 10, "messages": out})
    assert estimate_tokens(out, SYSTEM, TOOLS) + answer_room(window, max_tokens) <= window
    shown = keep.typed.visible(out)
    numbers = counted(out)
    for i in range(len(keep.typed)):
        assert i in shown or i + 1 in numbers, f"message {i + 1} is neither whole, shortened nor counted"


def test_agents_md_is_shortened_with_a_pointer_at_a_small_window(workspace):
    from loop.instructions import MAX_CHARS, load_instructions
    rules = "".join(f"- rule {i}: never touch legacy/module_{i}/ without asking\n" for i in range(400))
    (workspace / "AGENTS.md").write_text(rules)
    small = load_instructions(workspace, WINDOW)
    assert len(small.text) < 1_600 and small.text.startswith("- rule 0:")
    assert "AGENTS.md is shortened here to fit the model's window" in small.text
    assert "it is whole in AGENTS.md (read_file it)" in small.text and "4,096-token window" in small.warning
    large = load_instructions(workspace, 200_000)
    assert large.text == rules[:MAX_CHARS]
    session = Session(workspace, learned=False)
    system = SYSTEM + small.prompt_section()
    assert estimate_tokens([], system, TOOLS) + ANSWER < WINDOW * 0.75 and session.compactor.limit <= WINDOW


def test_the_stuck_session_through_the_stand_in_recovers(app_for, standin, workspace):
    """The same session in process over real HTTP: a 4,096-token stand-in, CONTEXT_WINDOW=4096, a summary
    that is a log itself. Every turn answers, no request is refused, and once the endpoint reported a usage
    (s08's estimate counts a dense log at about 0.7 of the stand-in's count: it scales by the usage from
    then on) every request fits with its max_tokens."""
    from standin import count_request_tokens
    from support.helpers import Model, is_summary_request
    standin.context_window = WINDOW
    standin.brain = Model(*[{"text": f"Answer {i}."} for i in range(8)],
                          summaries=[{"text": "SUMMARY: " + build_log_part(9)}] * 8)
    app, _events = app_for(context_window=WINDOW)
    texts = [f"part {n + 1} of the build log:\n{build_log_part(n)}" for n in range(3)] + \
        ["why did the build fail?", "which module first?", "and now?"]
    for text in texts:
        result = app.turn(text)
        assert result.ok and result.text.startswith("Answer"), result
    assert not any(a.startswith("400 prompt is too long") for a in standin.answers)
    sizes = [(count_request_tokens(r), r["max_tokens"], is_summary_request(r)) for r in standin.requests]
    first = next(i for i, (_n, _m, summary) in enumerate(sizes) if not summary)
    assert all(n <= WINDOW for n, _m, _s in sizes), sizes
    assert all(n + m <= WINDOW for n, m, _s in sizes[first + 1:]), sizes
