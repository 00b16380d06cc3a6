"""MCP servers, the whole path each time: agent.py (-p) → the official SDK → a real server process (the
third-party mcp-server-time and mcp-server-git from their own venv, and the tests' own edge-case server) —
with the stand-in answering as the model, calling `mcp__SERVER__TOOL`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from support.agents import PROTECTED_KEY, base_env, run_agent
from support.mcp_servers import edge_entry, git_entry, time_entry, user_allow, user_servers

pytestmark = pytest.mark.mcp


def call(tool: str, **args) -> dict:
    return {"tool_calls": [{"name": tool, "input": args}]}


def results_of(request: dict) -> list[dict]:
    return [b for b in request["messages"][-1]["content"] if b.get("type") == "tool_result"]


def tool_names(request: dict) -> list[str]:
    return [t["name"] for t in request.get("tools", [])]


def run(tmp_path, workspace, standin, *args, **settings) -> subprocess.CompletedProcess:
    env = base_env(tmp_path, standin, **settings)
    return run_agent("-p", *(args or ("go",)), env=env, cwd=workspace, capture_output=True, text=True, timeout=180)


def test_the_time_server_answers_the_model(tmp_path, workspace, standin):
    home = tmp_path / "home"
    user_servers(home, {"time": time_entry()})
    standin.queue(call("mcp__time__get_current_time", timezone="UTC"), {"text": "IT-IS-TIME"})
    done = run(tmp_path, workspace, standin)
    assert done.returncode == 0, done.stderr
    assert "IT-IS-TIME" in done.stdout
    first, second = standin.requests[0], standin.requests[1]
    assert "mcp__time__get_current_time" in tool_names(first) and "bash" in tool_names(first)
    [result] = results_of(second)
    assert not result.get("is_error") and '"timezone": "UTC"' in result["content"], result
    assert (workspace / ".sessions").is_dir()
    logged = "".join(p.read_text() for p in (workspace / ".sessions").glob("*.jsonl"))
    assert "mcp__time__get_current_time" in logged                     # the session log has the call


def test_an_mcp_call_not_allowed_is_refused_in_print_mode(tmp_path, workspace, standin):
    user_servers(tmp_path / "home", {"edge": edge_entry()})
    standin.queue(call("mcp__edge__echo", text="hello"), {"text": "DONE"})
    done = run(tmp_path, workspace, standin, approval_mode="default")
    assert "[approval needed] mcp__edge__echo was not run" in done.stderr
    assert '"permissions": {"allow": ["mcp__edge__echo"]}' in done.stderr
    [result] = results_of(standin.requests[1])
    assert result["is_error"] and "needs the person's approval" in result["content"]


def test_the_persons_settings_allow_a_server_ahead(tmp_path, workspace, standin):
    home = tmp_path / "home"
    user_servers(home, {"edge": edge_entry()})
    user_allow(home, "mcp__edge")
    standin.queue(call("mcp__edge__echo", text="ALLOWED-ECHO"), {"text": "DONE"})
    done = run(tmp_path, workspace, standin, approval_mode="default")
    assert done.returncode == 0, done.stderr
    [result] = results_of(standin.requests[1])
    assert result["content"] == "ALLOWED-ECHO" and not result.get("is_error")


def test_a_repositorys_settings_cannot_allow_mcp_tools(tmp_path, workspace, standin):
    user_servers(tmp_path / "home", {"edge": edge_entry()})
    (workspace / ".s08").mkdir()
    (workspace / ".s08" / "settings.json").write_text(json.dumps({"permissions": {"allow": ["mcp__edge"]}}))
    standin.queue(call("mcp__edge__echo", text="x"), {"text": "DONE"})
    done = run(tmp_path, workspace, standin, approval_mode="default")
    assert "[approval needed] mcp__edge__echo" in done.stderr


def test_plan_mode_refuses_an_mcp_call_not_allowed(tmp_path, workspace, standin):
    user_servers(tmp_path / "home", {"edge": edge_entry()})
    standin.queue(call("mcp__edge__echo", text="x"), {"text": "DONE"})
    done = run(tmp_path, workspace, standin, approval_mode="plan")
    assert "[plan mode] mcp__edge__echo was not run" in done.stderr


def test_results_errors_and_images_reach_the_model_as_they_should(tmp_path, workspace, standin):
    user_servers(tmp_path / "home", {"edge": edge_entry()})
    standin.queue(call("mcp__edge__big"), call("mcp__edge__fail"), call("mcp__edge__image"), {"text": "DONE"})
    done = run(tmp_path, workspace, standin)
    assert done.returncode == 0, done.stderr
    [big] = results_of(standin.requests[1])
    assert big["content"].startswith("<persisted-output>") and len(big["content"]) < 10_000   # saved, a preview kept
    saved = list((workspace / ".task_outputs").rglob("*.txt"))
    assert any(p.stat().st_size >= 1_000_000 for p in saved)
    [failed] = results_of(standin.requests[2])
    assert failed["is_error"] and "Error executing tool fail" in json.dumps(failed["content"])
    [image] = results_of(standin.requests[3])
    kinds = [b["type"] for b in image["content"]]
    assert kinds == ["text", "image"] and image["content"][1]["source"]["media_type"] == "image/png"


def test_a_server_that_dies_mid_call_is_an_error_then_starts_again(tmp_path, workspace, standin):
    marks = tmp_path / "marks"
    marks.mkdir()
    user_servers(tmp_path / "home", {"edge": edge_entry(EDGE_MARKS=str(marks))})
    standin.queue(call("mcp__edge__crash"), call("mcp__edge__echo", text="BACK-AGAIN"), {"text": "DONE"})
    done = run(tmp_path, workspace, standin)
    assert done.returncode == 0, done.stderr
    [crashed] = results_of(standin.requests[1])
    assert crashed["is_error"] and "stopped during the call" in crashed["content"]
    [again] = results_of(standin.requests[2])
    assert again["content"] == "BACK-AGAIN"
    assert (marks / "crashed").read_text() != (marks / "pid").read_text()      # a new process answered


def test_a_hung_call_ends_at_the_tool_timeout_and_the_server_is_told(tmp_path, workspace, standin):
    marks = tmp_path / "marks"
    marks.mkdir()
    user_servers(tmp_path / "home", {"edge": edge_entry(EDGE_MARKS=str(marks))})
    standin.queue(call("mcp__edge__slow"), call("mcp__edge__echo", text="STILL-HERE"), {"text": "DONE"})
    done = run(tmp_path, workspace, standin, mcp_tool_timeout=2)
    assert done.returncode == 0, done.stderr
    [hung] = results_of(standin.requests[1])
    assert hung["is_error"] and "MCP_TOOL_TIMEOUT" in hung["content"]
    assert results_of(standin.requests[2])[0]["content"] == "STILL-HERE"
    assert (marks / "cancelled").exists()                   # the SDK sent notifications/cancelled


def test_a_server_gets_no_key_unless_its_env_names_it(tmp_path, workspace, keyed_standin):
    standin = keyed_standin
    home = tmp_path / "home"
    user_servers(home, {"edge": edge_entry(), "named": edge_entry(ANTHROPIC_API_KEY="${ANTHROPIC_API_KEY}")})
    standin.queue(call("mcp__edge__env", name="ANTHROPIC_API_KEY"), call("mcp__named__env", name="ANTHROPIC_API_KEY"),
                  {"text": "DONE"})
    env = base_env(tmp_path, standin)
    env["ANTHROPIC_API_KEY"] = PROTECTED_KEY
    done = run_agent("-p", "go", env=env, cwd=workspace, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert results_of(standin.requests[1])[0]["content"] == "(unset)"
    assert results_of(standin.requests[2])[0]["content"] == "[redacted]"     # it had it; the model never sees it


def test_a_project_server_does_not_start_in_print_mode_without_agreement(tmp_path, workspace, standin):
    marks = tmp_path / "marks"
    marks.mkdir()
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"repo": edge_entry(EDGE_MARKS=str(marks))}}))
    standin.queue({"text": "DONE"})
    done = run(tmp_path, workspace, standin)
    assert done.returncode == 0
    lines = [line for line in done.stderr.splitlines() if "project servers not started (repo)" in line]
    assert len(lines) == 1
    assert not (marks / "pid").exists()                      # never started
    assert "mcp__repo__echo" not in tool_names(standin.requests[0])


def test_a_server_that_never_answers_is_skipped_and_the_session_goes_on(tmp_path, workspace, standin):
    user_servers(tmp_path / "home", {"mute": edge_entry("silent"), "edge": edge_entry()})
    standin.queue(call("mcp__edge__echo", text="OK"), {"text": "WENT-ON"})
    done = run(tmp_path, workspace, standin, mcp_timeout=20)
    assert done.returncode == 0 and "WENT-ON" in done.stdout
    assert "[mcp] server mute skipped: did not start within 20 s (MCP_TIMEOUT)" in done.stderr
    assert results_of(standin.requests[1])[0]["content"] == "OK"


def test_stderr_floods_go_to_a_bounded_file_and_stdout_junk_is_survived(tmp_path, workspace, standin):
    user_servers(tmp_path / "home", {"flood": edge_entry("flood"), "junk": edge_entry("junk")})
    standin.queue(call("mcp__flood__echo", text="F"), call("mcp__junk__echo", text="J"), {"text": "DONE"})
    done = run(tmp_path, workspace, standin)
    assert done.returncode == 0, done.stderr
    assert "EEEE" not in done.stderr and "junk line" not in done.stderr
    assert results_of(standin.requests[1])[0]["content"] == "F"
    assert results_of(standin.requests[2])[0]["content"] == "J"
    [log] = list((workspace / ".sessions").glob("*.mcp/flood.stderr.log"))
    assert 1_000_000 <= log.stat().st_size < 1_001_000


def test_many_schemas_are_deferred_and_loaded_at_the_end_of_the_tools(tmp_path, workspace, standin):
    user_servers(tmp_path / "home", {"edge": edge_entry("many")})
    standin.queue(call("mcp_load_tools", names=["mcp__edge__tool_007"]),
                  call("mcp__edge__tool_007", query="q"), {"text": "DONE"})
    done = run(tmp_path, workspace, standin, context_limit=50_000)
    assert done.returncode == 0, done.stderr
    first, second, third = standin.requests[:3]
    assert "mcp__edge__tool_007" not in tool_names(first) and "mcp_load_tools" in tool_names(first)
    load = next(t for t in first["tools"] if t["name"] == "mcp_load_tools")
    assert "mcp__edge__tool_079:" in load["description"]
    assert tool_names(second)[-1] == "mcp__edge__tool_007"                 # appended: the prefix before it unchanged
    assert tool_names(second)[:-1] == tool_names(first)
    assert results_of(third)[0]["content"] == "tool 7: q (10)"


def test_the_git_server_reads_a_real_repository(tmp_path, workspace, standin):
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / "new.txt").write_text("x")
    user_servers(tmp_path / "home", {"git": git_entry(workspace)})
    standin.queue(call("mcp__git__git_status", repo_path=str(workspace)), {"text": "DONE"})
    done = run(tmp_path, workspace, standin)
    assert done.returncode == 0, done.stderr
    [status] = results_of(standin.requests[1])
    assert "new.txt" in status["content"] and not status.get("is_error"), status


def test_hostile_tools_are_cleaned_or_left_out(tmp_path, workspace, standin):
    user_servers(tmp_path / "home", {"edge": edge_entry("hostile")})
    standin.queue({"text": "DONE"})
    done = run(tmp_path, workspace, standin, mcp_schema_budget=1_000_000)
    assert done.returncode == 0, done.stderr
    sent = json.dumps(standin.requests[0]["tools"])
    names = tool_names(standin.requests[0])
    assert "\\u001b" not in sent and "\\u0007" not in sent and "\\u0001" not in sent
    assert "mcp__edge__ansi" in names and "mcp__edge__b__c" in names
    huge = next(t for t in standin.requests[0]["tools"] if t["name"] == "mcp__edge__huge_description")
    assert len(huge["description"]) <= 2_000
    assert not any("bad name" in n or n.startswith("mcp__edge__nnnn") for n in names)
    assert "left out: its name is not one the API accepts" in done.stderr
    assert "\x1b" not in done.stderr


def test_ledger_records_mcp_calls(tmp_path, workspace, standin):
    user_servers(tmp_path / "home", {"edge": edge_entry()})
    standin.queue(call("mcp__edge__echo", text="LEDGER"), {"text": "DONE"})
    done = run(tmp_path, workspace, standin)
    assert done.returncode == 0, done.stderr
    logged = "".join(p.read_text() for p in (workspace / ".sessions").glob("*.jsonl"))
    work = [json.loads(line)["w"] for line in logged.splitlines() if '"t": "work"' in line or '"t":"work"' in line]
    assert any(w.get("k") == "cmd" and w["cmd"].startswith('mcp__edge__echo {"text": "LEDGER"}') for w in work), work


def test_servers_end_with_s08(tmp_path, workspace, standin):
    marks = tmp_path / "marks"
    marks.mkdir()
    user_servers(tmp_path / "home", {"edge": edge_entry(EDGE_MARKS=str(marks))})
    standin.queue({"text": "DONE"})
    done = run(tmp_path, workspace, standin)
    assert done.returncode == 0
    pid = int((marks / "pid").read_text())
    assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()


def test_a_streamable_http_server(tmp_path, workspace, standin):
    import socket
    import sys
    import time

    from support.sockets import free_port
    from support.mcp_servers import EDGE
    port = free_port()
    server = subprocess.Popen([sys.executable, EDGE, "http", str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:          # until it listens (an event, with a deadline)
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        user_servers(tmp_path / "home", {"web": {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"}})
        standin.queue(call("mcp__web__echo", text="OVER-HTTP"), {"text": "DONE"})
        done = run(tmp_path, workspace, standin)
        assert done.returncode == 0, done.stderr
        assert results_of(standin.requests[1])[0]["content"] == "OVER-HTTP"
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_an_http_server_that_is_not_there_is_skipped_in_one_line(tmp_path, workspace, standin):
    from support.sockets import free_port
    user_servers(tmp_path / "home", {"gone": {"type": "http", "url": f"http://127.0.0.1:{free_port()}/mcp"}})
    standin.queue({"text": "WENT-ON"})
    done = run(tmp_path, workspace, standin)
    assert done.returncode == 0 and "WENT-ON" in done.stdout
    lines = [line for line in done.stderr.splitlines() if "[mcp] server gone skipped: did not start" in line]
    assert len(lines) == 1 and "Traceback" not in done.stderr


def test_the_json_init_record_lists_the_servers_and_their_tools(tmp_path, workspace, standin):
    user_servers(tmp_path / "home", {"edge": edge_entry(), "mute": edge_entry("silent")})
    standin.queue({"text": "DONE"})
    done = run(tmp_path, workspace, standin, "go", "--output-format", "stream-json", mcp_timeout=20)
    init = json.loads(done.stdout.splitlines()[0])
    assert init["type"] == "init" and "mcp__edge__echo" in init["tools"]
    assert init["mcp_servers"] == [{"name": "edge", "status": "running"}, {"name": "mute", "status": "failed"}]
