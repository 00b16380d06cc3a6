"""Does delegating keep the main context small? A "find every place X is used" task over 120 files,
done once in the main context and once through three parallel `task` calls (prints figures; not a test).

    python bench/subagents.py            # replies after 0.5 s, as a real model's time to first token
    python bench/subagents.py --quick    # replies after 0.05 s

The real agent (in-process, real SDK and HTTP) talks to the local stand-in. A workspace of FILES
generated Python files (about 6,000 characters each) of which every fifth calls `parse_name`:

    main       the model reads the 120 files one by one in the main conversation, then answers
    task       the model hands the search to three explore sub-agents at once (40 files each); each reads
               its files one by one and reports the places it found; the main conversation gets three reports

For each: the main context's peak (the largest prompt the main conversation sent, by the stand-in's
token counter), its compactions, the billed input of every call (sub-agents included: uncached + 1.25 ×
cache writes + 0.1 × cache reads, from the stand-in's prompt-cache simulation), the model calls, and
the wall time of the turn. Settings are s08's defaults (CONTEXT_LIMIT 50,000).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent import App  # noqa: E402
from events import Compaction, CompactionKind  # noqa: E402
from standin import StandIn, count_request_tokens  # noqa: E402
from standin.conversations import Conversations, first_user_text  # noqa: E402

FILES, CHILDREN = 120, 3
SYMBOL = "parse_name"
KEY = "bench-key"


def make_workspace(folder: Path) -> list[tuple[str, int]]:
    """FILES modules; returns the (path, line) of every use of SYMBOL."""
    uses = []
    for n in range(FILES):
        lines = [f'"""Module {n}: helpers for part {n} of the system."""', "", "import os", ""]
        for f in range(30):
            lines += [f"def helper_{n}_{f}(value):", f'    """Helper {f} of module {n}: it turns a value into text."""',
                      f"    result = str(value) + '-{n}-{f}'", "    return result.strip()", ""]
            if n % 5 == 0 and f == 6:
                lines += [f"def uses_{n}(path):", f"    return {SYMBOL}(os.path.basename(path))", ""]
                uses.append((f"pkg/mod_{n:03d}.py", len(lines) - 1))
        path = folder / "pkg" / f"mod_{n:03d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n")
    return uses


def read(path: str) -> dict:
    return {"tool_calls": [{"name": "read_file", "input": {"path": path}}]}


def answer(uses) -> str:
    return f"{SYMBOL} is used in {len(uses)} places: " + ", ".join(f"{p}:{line}" for p, line in uses)


def scripts(kind: str, uses) -> dict:
    paths = [f"pkg/mod_{n:03d}.py" for n in range(FILES)]
    if kind == "main":
        return {"PARENT": [read(p) for p in paths] + [{"text": answer(uses)}]}
    share = FILES // CHILDREN
    calls = [{"name": "task", "input": {"description": f"search part {c + 1}", "agent": "explore",
                                        "prompt": f"CHILD-{c}: find every use of {SYMBOL} in pkg/mod_{c * share:03d}.py "
                                                  f"to pkg/mod_{(c + 1) * share - 1:03d}.py"}} for c in range(CHILDREN)]
    out = {"PARENT": [{"tool_calls": calls}, {"text": answer(uses)}]}
    for c in range(CHILDREN):
        mine = paths[c * share:(c + 1) * share]
        found = [u for u in uses if u[0] in mine]
        out[f"CHILD-{c}:"] = [read(p) for p in mine] + [{"text": answer(found)}]
    return out


def run(kind: str, latency: float) -> dict:
    folder = Path(tempfile.mkdtemp(prefix=f"s08-bench-sub-{kind}-"))
    try:
        workspace = folder / "ws"
        workspace.mkdir()
        uses = make_workspace(workspace)
        env = {"HOME": str(folder / "home"), "ANTHROPIC_API_KEY": KEY, "APPROVAL_MODE": "yolo",
               "BACKGROUND_COMPACT": "off", "PATH": "/usr/bin:/bin"}
        with StandIn(api_key=KEY, brain=Conversations(scripts(kind, uses)), reply_latency=latency,
                     summary_latency=latency * 4) as server:
            env["ANTHROPIC_BASE_URL"] = server.url
            app = App(workspace, environ=env)
            events: list = []
            app.set_emit(events.append)
            started = time.monotonic()
            result = app.turn(f"PARENT: find every place {SYMBOL} is used in pkg/ and explain each")
            seconds = time.monotonic() - started
            app.close()
            main = [r for r in server.requests if "PARENT" in first_user_text(r)]
            peak = max(count_request_tokens(r) for r in main)
        compactions = sum(1 for e in events if isinstance(e, Compaction) and e.layer is CompactionKind.AUTO_COMPACT)
        tally = app.ledger.session
        return {"kind": kind, "ok": result.ok and str(len(uses)) in result.text, "peak": peak,
                "compactions": compactions, "billed": tally.billed_input, "calls": tally.calls,
                "children_calls": app.ledger.children.calls, "seconds": seconds}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="replies after 0.05 s instead of 0.5 s")
    args = parser.parse_args()
    latency = 0.05 if args.quick else 0.5
    print(f"{FILES} files, find every use of {SYMBOL}; replies after {latency:g} s; CONTEXT_LIMIT 50,000")
    print(f"{'':6}{'main peak':>12}{'compactions':>13}{'billed input':>14}{'calls':>8}{'(sub-agents)':>14}"
          f"{'wall s':>9}  ok")
    for kind in ("main", "task"):
        r = run(kind, latency)
        print(f"{r['kind']:6}{r['peak']:>12,}{r['compactions']:>13}{r['billed']:>14,.0f}{r['calls']:>8}"
              f"{r['children_calls']:>14}{r['seconds']:>9.1f}  {'yes' if r['ok'] else 'NO'}")


if __name__ == "__main__":
    main()
