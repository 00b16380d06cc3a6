"""What MCP tool schemas cost per request, with and without deferral (prints figures; not a test).

    python bench/mcp.py            a session of 24 model calls
    python bench/mcp.py --quick    8 model calls (CI runs this)

Three MCP servers — mcp-server-time and mcp-server-git (from .ci-venvs/mcp, made by .ci/mcp-venv; when it
is missing, the tests' edge server stands in for each, and the output says so) and the tests' edge server
with 45 tools of its own — about 60 MCP tools in all. The same session is run by the real agent (agent.py
-p, a new process) against the local stand-in (which simulates prompt caching as the API does), twice:

    full       MCP_SCHEMA_BUDGET high enough that every schema is sent with every request
    deferred   the default budget (10 % of CONTEXT_LIMIT): names and one line each, and mcp_load_tools,
               which the model calls once to load the three tools it uses (appended at the end of the tools)

It prints for each: the tools sent in the first request and their tokens, the prompt tokens summed over
all requests (what the requests carry), the billed input in input-token equivalents (uncached + 1.25 ×
cache writes + 0.1 × cache reads, from the usage the stand-in reported), the cache writes, and the cache
rewrites: requests whose tools list differed from the one before (each rewrites the cached prefix).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from standin import StandIn  # noqa: E402
from standin.tokens import count_request_tokens  # noqa: E402

KEY = "bench-key-0123456789"
EDGE = str(ROOT / "tests" / "support" / "mcp_edge_server.py")
USED = ["mcp__time__get_current_time", "mcp__git__git_status", "mcp__edge__tool_007"]


def servers(repository: Path) -> tuple[dict, str]:
    venv = Path(os.environ.get("S08_MCP_VENV") or ROOT / ".ci-venvs" / "mcp") / "bin"
    edge = {"command": sys.executable, "args": [EDGE, "many"], "env": {"EDGE_TOOLS": "45"}}
    if (venv / "mcp-server-time").exists() and (venv / "mcp-server-git").exists():
        return {"time": {"command": str(venv / "mcp-server-time"), "args": ["--local-timezone", "UTC"]},
                "git": {"command": str(venv / "mcp-server-git"), "args": ["--repository", str(repository)]},
                "edge": edge}, "mcp-server-time, mcp-server-git, edge (45 + 7 tools)"
    stand = {"command": sys.executable, "args": [EDGE, "many"], "env": {"EDGE_TOOLS": "3"}}
    return {"time": stand, "git": stand, "edge": edge}, "(no .ci-venvs/mcp: edge servers stand in for time and git)"


def arguments(name: str, repository: Path) -> dict:
    return {"mcp__time__get_current_time": {"timezone": "UTC"}, "mcp__git__git_status": {"repo_path": str(repository)},
            "mcp__edge__tool_007": {"query": "q"}}.get(name, {"query": "q"})


def script(calls: int, deferred: bool, repository: Path, real: bool) -> list[dict]:
    used = USED if real else ["mcp__time__tool_000", "mcp__git__tool_001", "mcp__edge__tool_007"]
    steps = [{"tool_calls": [{"name": "mcp_load_tools", "input": {"names": used}}]}] if deferred else []
    for i in range(calls - len(steps) - 1):
        name = used[i % len(used)]
        steps.append({"tool_calls": [{"name": name, "input": arguments(name, repository) if real else {"query": "q"}}]})
    return steps + [{"text": "done"}]


def run(calls: int, deferred: bool) -> dict:
    server = StandIn(api_key=KEY).start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            home, ws = Path(tmp) / "home", Path(tmp) / "ws"
            ws.mkdir()
            subprocess.run(["git", "init", "-q", str(ws)], check=True)
            entries, which = servers(ws)
            (home / ".config" / "s08").mkdir(parents=True)
            (home / ".config" / "s08" / "mcp.json").write_text(json.dumps({"mcpServers": entries}))
            server.queue(*script(calls, deferred, ws, "mcp-server-time" in which))
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8",
                   "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": KEY, "APPROVAL_MODE": "yolo",
                   "BACKGROUND_COMPACT": "off", "MCP_SCHEMA_BUDGET": "0" if deferred else "1000000"}
            done = subprocess.run([sys.executable, str(ROOT / "agent.py"), "-p", "go", "--output-format", "json"],
                                  cwd=ws, env=env, capture_output=True, text=True, timeout=600)
            if done.returncode != 0:
                raise SystemExit(f"the session failed: {done.stderr[-2000:]}")
            result = json.loads(done.stdout)
    finally:
        server.stop()
    requests = [r for r in server.requests if r.get("tools")]
    first = requests[0]
    mcp_tools = [t for t in first["tools"] if t["name"].startswith("mcp")]
    schema = count_request_tokens({"tools": mcp_tools, "messages": []})
    names = [[t["name"] for t in r["tools"]] for r in requests]
    usage = result["usage"]
    billed = (usage["input_tokens"] + 1.25 * usage["cache_creation_input_tokens"]
              + 0.1 * usage["cache_read_input_tokens"])
    return {"which": which, "requests": len(requests), "mcp_sent": len(mcp_tools), "schema": schema,
            "prompt": sum(count_request_tokens(r) for r in requests), "billed": billed,
            "writes": usage["cache_creation_input_tokens"],
            "rewrites": sum(1 for a, b in zip(names, names[1:]) if a != b)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="8 model calls instead of 24")
    calls = 8 if parser.parse_args().quick else 24
    full, deferred = run(calls, False), run(calls, True)
    print(f"MCP servers: {full['which']}; {calls} model calls in one turn, against the stand-in")
    print(f"{'':10} {'requests':>8} {'MCP tools sent':>14} {'their tokens':>12} {'prompt tokens, all requests':>27} "
          f"{'billed input':>12} {'cache writes':>12} {'cache rewrites':>14}")
    for label, r in (("full", full), ("deferred", deferred)):
        print(f"{label:10} {r['requests']:>8} {r['mcp_sent']:>14} {r['schema']:>12,} {r['prompt']:>27,} "
              f"{r['billed']:>12,.0f} {r['writes']:>12,} {r['rewrites']:>14}")
    saved = 1 - deferred["prompt"] / full["prompt"]
    print(f"deferral: {saved:.0%} fewer prompt tokens over the session, "
          f"{1 - deferred['billed'] / full['billed']:.0%} less billed input; "
          f"the load cost {deferred['rewrites']} cache rewrite(s)")


if __name__ == "__main__":
    main()
