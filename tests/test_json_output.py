"""`-p --output-format json | stream-json` (ui/json_output.py): stdout holds only JSON — one result
object, or one event per line as it happens with the result last — and the exit codes stay those of
-p. In-process against the stand-in (real SDK, real HTTP)."""

from __future__ import annotations

import json


from support.agents import base_env
from support.helpers import run_main


def records(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines()]       # every line is JSON, or this raises


def test_json_gives_the_answer_session_usage_and_cost(tmp_path, workspace, standin, monkeypatch, capsys):
    standin.queue({"tool_calls": [{"name": "bash", "input": {"command": "echo hi"}}]}, {"text": "FINAL ANSWER"})
    code, out, err = run_main(["-p", "do it", "--output-format", "json"], base_env(tmp_path, standin), workspace,
                              monkeypatch, capsys)
    [result] = records(out)
    assert code == 0 and result["exit_code"] == 0 and result["subtype"] == "success" and not result["is_error"]
    assert result["exit_reason"] == "completed"
    assert result["result"] == "FINAL ANSWER" and result["stop_reason"] == "end_turn"
    assert (workspace / ".sessions" / f"{result['session_id']}.jsonl").exists()
    assert result["model_calls"] == 2 and result["usage"]["output_tokens"] > 0 and result["usage"]["input_tokens"] > 0
    assert isinstance(result["cost_usd"], float) and result["compactions"] == []
    assert "● bash" in err                                                  # progress for people stays on stderr


def test_stream_json_is_one_event_per_line_in_order(tmp_path, workspace, standin, monkeypatch, capsys):
    standin.queue({"text": "Looking.", "tool_calls": [{"name": "bash", "input": {"command": "echo out-line"}}]},
                  {"tool_calls": [{"name": "compact", "input": {"focus": "the parser"}}]},
                  {"text": "ALL DONE"})                              # (the stand-in writes the summary itself)
    code, out, _ = run_main(["-p", "go", "--output-format", "stream-json"], base_env(tmp_path, standin), workspace,
                            monkeypatch, capsys)
    events = records(out)
    kinds = [e["type"] for e in events]
    assert code == 0 and kinds[0] == "init" and kinds[-1] == "result" and kinds.count("result") == 1
    assert events[0]["session_id"] == events[-1]["session_id"] and "bash" in events[0]["tools"]
    use = kinds.index("tool_use")
    done = next(i for i, e in enumerate(events) if e["type"] == "tool_result" and e["name"] == "bash")
    assert kinds.index("text") < use < done and events[done]["exit_code"] == 0
    assert "out-line" in events[done]["content"]
    assert "compaction" in kinds and events[-1]["compactions"]
    assert {c["layer"] for c in events[-1]["compactions"]} >= {"manual_compact"}
    assert "".join(e["text"] for e in events[kinds.index("compaction"):] if e["type"] == "text") == "ALL DONE"
    assert events[-1]["result"] == "ALL DONE"


def test_a_failed_run_keeps_its_exit_code_and_says_why(tmp_path, workspace, standin, monkeypatch, capsys):
    standin.queue({"error": 401})
    code, out, _ = run_main(["-p", "hi", "--output-format", "json"], base_env(tmp_path, standin), workspace,
                            monkeypatch, capsys)
    [result] = records(out)
    assert code == 1 and result["exit_code"] == 1 and result["is_error"] and result["subtype"] == "error"
    assert result["exit_reason"] == "error"
    assert "401" in result["error"]


def test_output_format_needs_p_and_text_is_unchanged(tmp_path, workspace, standin, monkeypatch, capsys):
    code, out, err = run_main(["--output-format", "json"], base_env(tmp_path, standin), workspace, monkeypatch,
                              capsys)
    assert code == 2 and out == "" and "needs -p" in err
    standin.queue({"text": "plain"})
    code, out, _ = run_main(["-p", "hi"], base_env(tmp_path, standin), workspace, monkeypatch, capsys)
    assert code == 0 and out == "plain\n"


def test_an_unknown_command_is_bad_input(tmp_path, workspace, standin, monkeypatch, capsys):
    code, out, _ = run_main(["-p", "/frobnicate", "--output-format", "json"], base_env(tmp_path, standin),
                            workspace, monkeypatch, capsys)
    [result] = records(out)
    assert code == 2 and result["exit_reason"] == "bad_input" and result["model_calls"] == 0
