"""How long does a compaction stop the session? Summaries prepared in the background against blocking
ones (prints figures; not a test).

    python bench/background.py              # the full grid, about 5 minutes (runs in parallel processes)
    python bench/background.py --quick      # the smallest setting, a few seconds: does it still run?
    python bench/background.py --experiment read-all --summary 20 --reply 0.5      # one setting

The real agent (in-process, real SDK and HTTP) talks to the local stand-in, whose answers start after
a reply latency (0.5 s or 2 s) and whose summaries after a summary latency (5 s or 20 s). Two
experiments, each with BACKGROUND_COMPACT=off (the blocking design, s08 before it) and on:

    read-all     one long turn: "read every Python file one by one" over a copy of s08's own sources
                 (about 400,000 characters); the person never pauses
    turns        ten turns of "read <three files>", the person pausing between turns for as long as a
                 summary takes (its latency + 1 s) — the time a person reads the answer and types

For each run: the summary requests (of which wasted: prepared, never applied), the time they took, the
time the agent was blocked by them (blocking: all of it; background: waiting for one in flight at the
limit, plus any blocking top-up), their ratio, the billed input — uncached + 1.25 × cache writes
+ 0.1 × cache reads, from the stand-in's simulation of the prompt cache — against the blocking design,
and *unsummarized*: of the files read, how many the model has at the end neither whole nor in a summary
put in its history — read while a summary was written, then cleared to a pointer to their saved copy;
*for good*: the same once the person paused after the last answer, a summary still being written
finished, and the next call's compaction put it in where it is due (what stays lost, not only until the
summary is ready).

Then the person asks about the files the agent worked on last (`about <the last ASKED files read>`),
and the stand-in's model, in its reread mode, reads again each one it no longer sees whole (a pointer,
or only a name in a summary): *re-reads* counts those calls, and their cost is in the billed input.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent import App  # noqa: E402
from session.costs import TokenTally  # noqa: E402
from compaction.boundaries import result_text  # noqa: E402
from compaction.markers import PLACEHOLDER_PREFIX  # noqa: E402
from events import Compaction, CompactionKind, ToolStarted  # noqa: E402
from messages import blocks  # noqa: E402
from storage import PERSISTED_OPEN, read_transcript  # noqa: E402
from standin import Brain, StandIn  # noqa: E402
from standin.brain import is_summary_request  # noqa: E402

SOURCE_CHARS = 400_000
TURNS = 10
ASKED = 5                 # the last files read that the person asks about at the end
QUICK = dict(chars=60_000, limit="12000")      # --quick: 1 s summaries, 0.2 s replies, one long turn over these


def make_workspace(folder: Path, chars: int = SOURCE_CHARS) -> list[str]:
    """A copy of s08's sources (not its tests), in `find | sort` order, until `chars` characters."""
    files, total = [], 0
    for path in sorted(p for p in ROOT.rglob("*.py") if not {"tests", "bench", ".git"} & set(p.relative_to(ROOT).parts)
                       and not any(part.startswith(".") for part in p.relative_to(ROOT).parts)):
        text = path.read_text(encoding="utf-8", errors="replace")
        if total + len(text) > chars:
            break
        target = folder / path.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        files.append(str(path.relative_to(ROOT)))
        total += len(text)
    return files


def whole_results(messages) -> dict[str, bool]:
    """tool_use_id → is its result there whole (not a pointer to a saved copy), for the read_file calls in
    `messages`."""
    reads = {b["id"] for m in messages for b in blocks(m) if b.get("type") == "tool_use" and b.get("name") == "read_file"}
    return {b["tool_use_id"]: not result_text(b).startswith((PLACEHOLDER_PREFIX, PERSISTED_OPEN))
            for m in messages for b in blocks(m) if b.get("type") == "tool_result" and b.get("tool_use_id") in reads}


def run(experiment: str, summary: float, reply: float, mode: str, prepare_at: str = "", chars: int = SOURCE_CHARS,
        limit: str = "", recent_work: str = "") -> dict:
    folder = Path(tempfile.mkdtemp(prefix="s08-bench-bg-"))
    try:
        files = make_workspace(folder, chars)
        server = StandIn(brain=Brain(reread=True), reply_latency=reply, summary_latency=summary, record=True).start()
        env = {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "bench", "HOME": str(folder / ".home"),
               "PATH": "/usr/bin:/bin", "APPROVAL_MODE": "yolo", "BACKGROUND_COMPACT": mode}
        if prepare_at:
            env["PREPARE_AT"] = prepare_at
        if limit:
            env["CONTEXT_LIMIT"] = limit
        if recent_work:
            env["RECENT_WORK"] = recent_work
        app = App(folder, environ=env, origin="print" if experiment == "read-all" else "interactive")
        waited: list[float] = []
        summarized: list[str] = []                # the transcripts of the summaries put in the history
        read: list[str] = []                      # every read_file call's id
        paths: list[str] = []                     # and its path
        rereads: list[str] = []                   # the read_file calls of the question at the end

        def note(e) -> None:
            if isinstance(e, ToolStarted) and e.name == "read_file":
                (rereads if asking else read).append(e.tool_use_id)
                if not asking:
                    paths.append(str((e.input or {}).get("path", "")))
            if isinstance(e, Compaction) and "waited" in e.details:
                waited.append(e.details["waited"])
            if isinstance(e, Compaction) and e.layer is CompactionKind.COMPACTED and e.details.get("transcript"):
                summarized.append(e.details["transcript"])
        app.set_emit(note)
        timed: list[tuple[str, float]] = []       # (thread, seconds) of every summary call
        compactor = app.agent.compactor

        def timing(call, where):
            def timed_call(*args):
                start = time.monotonic()
                out = call(*args)                 # (a call cancelled when s08 leaves is not counted)
                timed.append((where, time.monotonic() - start))
                return out
            return timed_call
        agent_summarize = app.agent.summarize
        compactor.summarize = timing(lambda request: agent_summarize(request), "loop")
        compactor.background_summarize = timing(lambda request, emit: agent_summarize(request, emit), "background")
        asking = False
        start = time.monotonic()
        if experiment == "read-all":
            app.turn("read every Python file one by one")
        else:
            for turn in range(TURNS):
                app.turn("read " + " and ".join(files[3 * turn: 3 * turn + 3]))
                if turn < TURNS - 1:
                    time.sleep(summary + 1)       # the person reads the answer and types the next request
        wall = time.monotonic() - start
        if experiment == "turns":
            wall -= (TURNS - 1) * (summary + 1)
        def lost(history: list[dict], transcripts: list[str]) -> int:
            """Of the files read, how many `history` has neither whole nor in one of these summaries."""
            seen = whole_results(history)
            seen.update((i, True) for t in transcripts for i, whole in
                        whole_results(read_transcript(folder / t)[1]).items() if whole)
            return sum(1 for i in read if not seen.get(i))
        unsummarized = lost(app.messages, summarized)          # what the model has at the end of the turn
        asking = True
        app.turn("about " + " and ".join(list(dict.fromkeys(reversed(paths)))[:ASKED]))
        tally = TokenTally()
        for usage in server.usages:
            tally.add(usage)
        summaries = sum(1 for body in server.requests if is_summary_request(body))
        summary_time = sum(s for _, s in timed)
        blocked = sum(s for where, s in timed if where == "loop") + sum(waited)
        wasted = compactor.background.wasted
        prep = compactor.background.current
        if prep is not None:                      # the person pauses: a summary being written is finished
            prep.done.wait(summary + 60)
        compactor.begin_turn()
        history = app.messages + [{"role": "user", "content": "go on"}]
        for_good = lost(compactor.prepare(history), summarized)     # … and goes in at the next call if due
        compactor.background.close()
        app.close()
        server.stop()
        return {"experiment": experiment, "summary": summary, "reply": reply, "mode": mode, "wall": wall,
                "summaries": summaries, "wasted": wasted, "summary_time": summary_time,
                "blocked": blocked, "billed": tally.billed_input, "calls": len(server.requests),
                "unsummarized": unsummarized, "for_good": for_good, "reads": len(read), "rereads": len(rereads)}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="one long turn over 60,000 characters with a 12,000-token "
                                                             "limit, 1 s summaries and 0.2 s replies (does it still run?)")
    parser.add_argument("--summary", type=float, action="append", help="this summary latency only (repeatable)")
    parser.add_argument("--reply", type=float, action="append", help="this reply latency only (repeatable)")
    parser.add_argument("--experiment", choices=("read-all", "turns"), action="append", help="this one only")
    parser.add_argument("--prepare-at", default="", help="PREPARE_AT for the background runs (default: s08's)")
    parser.add_argument("--recent-work", default="", help="RECENT_WORK for every run, both designs (default: s08's)")
    parser.add_argument("--workers", type=int, default=8)
    args = parser.parse_args()
    summaries = args.summary or ([1.0] if args.quick else [5.0, 20.0])
    replies = args.reply or ([0.2] if args.quick else [0.5, 2.0])
    experiments = args.experiment or (["read-all"] if args.quick else ["read-all", "turns"])
    size = QUICK if args.quick else dict(chars=SOURCE_CHARS, limit="")
    grid = [(e, s, r, m, args.prepare_at if m == "on" else "", size["chars"], size["limit"], args.recent_work)
            for e in experiments
            for s in summaries for r in replies for m in ("off", "on")]
    with ProcessPoolExecutor(args.workers) as pool:
        results = list(pool.map(run, *zip(*grid)))
    blocking = {(r["experiment"], r["summary"], r["reply"]): r for r in results if r["mode"] == "off"}
    print("experiment  summary  reply  BACKGROUND  agent time  summaries (wasted)  summary time  blocked  "
          "blocked/summary  billed input  vs blocking  unsummarized  for good  re-reads")
    for r in results:
        base = blocking[(r["experiment"], r["summary"], r["reply"])]
        share = r["blocked"] / r["summary_time"] if r["summary_time"] else 0.0
        print(f"{r['experiment']:<10}  {r['summary']:>5.0f} s  {r['reply']:>3.1f} s  {r['mode']:<10}  "
              f"{r['wall']:>8.1f} s  {r['summaries']:>9} ({r['wasted']})  {r['summary_time']:>10.1f} s  "
              f"{r['blocked']:>5.1f} s  {share:>15.2f}  {r['billed']:>12,.0f}  {r['billed'] / base['billed'] - 1:>+10.1%}  "
              f"{r['unsummarized']:>5}/{r['reads']}  {r['for_good']:>5}/{r['reads']}  {r['rereads']:>5}/{ASKED}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
