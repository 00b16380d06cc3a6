"""Property: whatever the person does with !command, @path, /undo, /rewind, /model, /compact and a
resume (--continue), in any order, the history stays one the API accepts (the stand-in's validator is
the oracle), and the files on disk are what a simple model of the checkpoints says they are."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from commands import dispatch
from support.agents import base_env
from support.helpers import is_summary_request, make_app
from messages import add_user_text, blocks
from session.log import load_session
from standin.validate import validate_request

FILES = ("f0.txt", "f1.txt", "dir/f2.txt")
COMMANDS = ("echo hi", "cat f0.txt", "ls -R", "seq 1 40000", "false")

OPS = st.lists(st.one_of(
    st.tuples(st.just("turn"), st.lists(st.tuples(st.sampled_from(FILES), st.sampled_from(("a", "b", "c\n"))),
                                        max_size=3), st.sampled_from(("", " @f0.txt", " @dir/f2.txt @f1.txt"))),
    st.tuples(st.just("bang"), st.sampled_from(COMMANDS)),
    st.tuples(st.just("undo")),
    st.tuples(st.just("rewind"), st.integers(1, 6), st.sampled_from(("files", "all"))),
    st.tuples(st.just("model"), st.sampled_from(("claude-haiku-4-5", "claude-opus-4-5", "my-model"))),
    st.tuples(st.just("compact")),
    st.tuples(st.just("resume")),
), min_size=1, max_size=12)


def assert_sendable(messages) -> None:
    """What the next turn sends: the history and one more message of the person's."""
    nxt = [dict(m) for m in messages]
    add_user_text(nxt, "next question")
    validate_request({"model": "m", "max_tokens": 100, "messages": nxt})


class Disk:
    """The files as the checkpoints should leave them: each turn's writes, and what /undo and /rewind
    put back (the earliest "before" of each file among the turns undone)."""

    def __init__(self):
        self.files: dict[str, str | None] = dict.fromkeys(FILES)
        self.changes: list[list] = []           # [turn, path, before, undone]

    def write(self, turn: int, path: str, content: str) -> None:
        if not any(c[0] == turn and c[1] == path for c in self.changes):
            self.changes.append([turn, path, self.files[path], False])
        self.files[path] = content

    def put_back(self, chosen: list) -> None:
        seen = set()
        for change in chosen:
            if change[1] not in seen:
                seen.add(change[1])
                self.files[change[1]] = change[2]
            change[3] = True

    def undo(self) -> None:
        live = [c for c in self.changes if not c[3]]
        if live:
            last = max(c[0] for c in live)
            self.put_back([c for c in live if c[0] == last])

    def rewind(self, n: int) -> None:
        self.put_back([c for c in self.changes if not c[3] and c[0] >= n])

    def check(self, workspace: Path) -> None:
        for path, content in self.files.items():
            target = workspace / path
            assert (target.read_text() if target.exists() else None) == content, path


def brain(plan: list):
    def answer(body: dict) -> dict:
        if is_summary_request(body):
            return {"text": "SUMMARY of the work so far."}
        if any(b.get("type") == "tool_result" for b in blocks(body["messages"][-1])):
            return {"text": "done " * 60}
        writes = plan.pop(0) if plan else []
        if not writes:
            return {"text": "nothing to write " * 40}
        return {"tool_calls": [{"name": "write_file", "input": {"path": p, "content": c}} for p, c in writes]}
    return answer


@pytest.mark.scripted
@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS)
def test_any_sequence_of_these_keeps_the_history_sendable_and_the_files_right(standin, ops):
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp) / "ws"
        workspace.mkdir()
        (workspace / "f0.txt").write_text("start")
        env = base_env(Path(tmp), standin)
        disk, plan, model = Disk(), [], None
        disk.files["f0.txt"] = "start"
        standin.brain = brain(plan)
        app, events = make_app(workspace, env)
        try:
            for op in ops:
                kind = op[0]
                if kind == "turn":
                    plan.append(op[1])
                    turn = app.continuity.turn + 1
                    assert app.turn(f"step {turn}{op[2]}").ok
                    for path, content in op[1]:
                        disk.write(turn, path, content)
                elif kind == "bang":
                    dispatch(app, "!" + op[1])
                elif kind == "undo":
                    dispatch(app, "/undo")
                    disk.undo()
                elif kind == "rewind":
                    live = [i + 1 for i, e in enumerate(app.continuity.typed.entries) if not e.dropped]
                    if live:
                        n = live[op[1] % len(live)]
                        dispatch(app, f"/rewind {n} {op[2]}")
                        disk.rewind(n)
                elif kind == "model":
                    dispatch(app, f"/model {op[1]}")
                    model = op[1]
                elif kind == "compact":
                    app.compact()
                elif kind == "resume":
                    path = app.messages.log.path
                    app.close()
                    if path.exists():
                        app, events = make_app(workspace, env, resume=load_session(path))
                    else:
                        app, events = make_app(workspace, env, model=model)
                    assert app.settings.model_id == (model or "claude-sonnet-4-6")
                assert_sendable(list(app.messages))
                disk.check(workspace)
                assert not any("had changed since" in getattr(e, "text", "") for e in events)   # only s08 wrote
            plan.clear()
            assert app.turn("and finally").ok          # the scripted model refuses what the API would
        finally:
            app.close()
