"""What a long session costs under four compaction setups, side by side (prints figures; not a test).

    python bench/cost.py            the four configurations, and the pipeline's CPU time per turn
    python bench/cost.py --sweep    also try other MICRO_CLEAR_AT_LEAST / SNIP_TARGET_MESSAGES values
    python bench/cost.py --quick    tutorial and default over the first QUICK_TURNS turns (a few seconds)
    python bench/cost.py --only 'default, 6-min pauses'     one configuration (and the tutorial, its base)

One deterministic session — 25 user turns, over 150 model calls: reading many
files, large command outputs, edits, new files — is replayed against the
local stand-in (which simulates prompt caching like the API) by the real
agent, in-process, once per configuration:

    tutorial        the seeds: micro clearing every turn, snip by one step at 50, no cache breakpoints,
                    only the summary kept by a compaction (no messages of the person's, no work ledger)
    tutorial+cache  the same with cache breakpoints
    default         s08 as shipped
    none            no compaction at all, until the stand-in refuses the prompt

and two variants of `default` that show how sensitive the figures are to the
cache itself: pauses of 6 minutes between turns (the cache's 5-minute TTL
runs out while the person thinks), and a 4,096-token minimum cacheable prompt
(the stand-in's default is 1,024). The clock is simulated: 2 s per model
call, 30 s between turns unless a pause is given.

For each it prints the total billed input in input-token equivalents
(uncached + 1.25 × cache writes + 0.1 × cache reads), the cache hit ratio, the
peak prompt, the model and summary calls, and the ideal for the same requests:
every token already sent read from cache, only new tokens written.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from agent import App  # noqa: E402
from compaction import Compactor  # noqa: E402
from config import Settings  # noqa: E402
from session.costs import TokenTally  # noqa: E402
from session.log import LoggedHistory  # noqa: E402
from llm.usage import Usage  # noqa: E402
from support.helpers import Model, is_summary_request  # noqa: E402
from standin import StandIn  # noqa: E402
from standin.cache import PromptCache, shared_prefix  # noqa: E402

TURNS, FILES, SEED = 25, 60, 8
QUICK_TURNS = 4
NEVER = 10 ** 9
PAUSED_TARGET = 0.27   # issue 33's bound for 6-minute pauses, against the tutorial (issue 12 had 0.25×)
TUTORIAL = dict(micro_clear_at_least=0, snip_target_messages=50, user_messages_budget=0, ledger_budget=0,
                background_compact="off", recent_work=0)      # the seeds: no summary prepared ahead, nothing kept
UNTIMED = dict(cold_compact_at=1, cache_ttl="5m")     # s08 before it knew when its cache expires
SMALL_WINDOW = 12_000
CONFIGS = {        # name: (settings, seconds between turns, minimum cacheable tokens, the endpoint's window)
    "tutorial": (dict(TUTORIAL, prompt_cache="off"), 30, 1024, None),
    "tutorial+cache": (dict(TUTORIAL, prompt_cache="on"), 30, 1024, None),
    "default": ({}, 30, 1024, None),
    "none": (dict(context_limit=NEVER, snip_max_messages=NEVER, persist_threshold=NEVER, round_budget=NEVER,
                  micro_clear_at_least=NEVER), 30, 1024, None),
    "default, 6-min pauses": ({}, 360, 1024, None),
    "untimed, 6-min pauses": (UNTIMED, 360, 1024, None),
    "default, 20-min pauses": ({}, 1200, 1024, None),
    "untimed, 20-min pauses": (UNTIMED, 1200, 1024, None),
    "default, 4,096 minimum": ({}, 30, 4096, None),
    f"default, {SMALL_WINDOW:,} window": ({}, 30, 1024, SMALL_WINDOW),
}
SUMMARY = ("## User goals\n- keep working through the modules, reading and editing them as asked\n"
           "## Files touched\n" + "".join(f"- mod_{i:02d}.py: read, small edits\n" for i in range(0, 60, 3))
           + "## Current state\n- the edits so far are done; continue with the latest request\n")


def make_workspace(folder: Path) -> None:
    rng = random.Random(SEED)
    for i in range(FILES):
        lines = [f'"""Module {i}: part of the benchmark project."""', f"# marker {i}"]
        for n in range(rng.randint(40, 240)):
            lines.append(f"def handler_{i}_{n}(request, retries={rng.randint(1, 9)}):")
            lines.append(f"    return process(request, step={n}, scale={rng.random():.4f})  # {rng.randint(0, 99999)}")
        (folder / f"mod_{i:02d}.py").write_text("\n".join(lines) + "\n")
    (folder / "server.log").write_text("".join(f"2026-11-30T10:{n // 60 % 60:02d}:{n % 60:02d} INFO request "
                                               f"{n} served in {rng.randint(1, 900)} ms\n" for n in range(4000)))


def scenario(turns: int = TURNS) -> list[dict]:
    """The model's side of the session: the same tool calls in the same order for every configuration."""
    rng, replies, edited = random.Random(SEED), [], set()
    for turn in range(turns):
        for _ in range(rng.randint(4, 8)):
            kind = rng.choices(["read", "grep", "log", "test", "edit", "write", "ls"], [4, 2, 1, 3, 2, 1, 1])[0]
            i = rng.randrange(FILES)
            if kind == "edit" and i in edited:
                kind = "read"
            if kind == "read":
                call = {"name": "read_file", "input": {"path": f"mod_{i:02d}.py"}}
            elif kind == "grep":
                call = {"name": "bash", "input": {"command": f"grep -n 'def handler_{i}_1' mod_*.py | head -n 60"}}
            elif kind == "log":
                call = {"name": "bash", "input": {"command": f"sed -n '{rng.randint(1, 500)},+2500p' server.log"}}
            elif kind == "test":
                call = {"name": "bash", "input": {"command": f"sed -n '{rng.randint(1, 3000)},+{rng.randint(60, 160)}p' "
                                                            "server.log | sort -k5 -n"}}
            elif kind == "edit":
                edited.add(i)
                call = {"name": "edit_file", "input": {"path": f"mod_{i:02d}.py", "old_text": f"# marker {i}\n",
                                                       "new_text": f"# marker {i} (reviewed in turn {turn})\n"}}
            elif kind == "write":
                call = {"name": "write_file", "input": {"path": f"notes/turn_{turn}_{i}.md",
                                                        "content": f"Notes on module {i}.\n" * 20}}
            else:
                call = {"name": "bash", "input": {"command": "ls -la | head -n 40"}}
            replies.append({"text": f"Step for turn {turn}.", "tool_calls": [call]})
        replies.append({"text": f"Turn {turn} is done: " + "the modules look consistent. " * 12})
    return replies


def run(name: str, settings: dict, template: Path, pause: float = 30, min_cacheable: int = 1024,
        window: int | None = None, turns: int = TURNS) -> dict:
    """Replay the session under one configuration; figures from what the stand-in saw. `window`: the
    endpoint's context window, which s08 is not told (it learns it from the first refusal)."""
    now = [0.0]
    model = Model(*scenario(turns), summaries=[{"text": SUMMARY}])

    def brain(body):
        now[0] += 2                  # simulated seconds per model call
        return model(body)
    with tempfile.TemporaryDirectory(prefix="s08-cost-") as tmp:
        workspace = Path(tmp) / "ws"
        shutil.copytree(template, workspace)
        cache = PromptCache(min_cacheable=min_cacheable, clock=lambda: now[0])
        with StandIn(api_key="bench", cache=cache, context_window=window or 200_000) as server:
            server.brain = brain
            env = {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "bench", "HOME": tmp,
                   "APPROVAL_MODE": "yolo",      # a replayed session: nobody is there to approve
                   **{k.upper(): str(v) for k, v in settings.items()}}
            app, events = App(workspace, environ=env), []
            app.set_emit(events.append)
            app.agent.compactor.cache.clock = lambda: now[0]       # s08 and the cache share the simulated clock
            for turn in range(turns):
                prep = app.agent.compactor.background.current
                if prep is not None:          # the pause is simulated: a summary prepared in the background at
                    prep.done.wait(60)        # the last answer is sent and done before it, as it would be
                now[0] += pause
                app.turn(f"Turn {turn}: keep going through the modules as planned.")
                if window is None and any(a.startswith("400") for a in server.answers):
                    break        # the prompt no longer fits: "none" ends here
            app.close()
            refused = None if window else next((n for n, a in enumerate(server.answers) if a.startswith("400")), None)
            answered = [u for u in server.usages if refused is None or u["request"] < refused]
            seen, ideal = set(), 0.0
            for u in answered:
                shared, total = shared_prefix(server.requests[u["request"]], seen)
                ideal += 0.1 * shared + 1.25 * (total - shared)
            prompt = [Usage.of(u).prompt for u in answered]
            tally = TokenTally()
            for u in answered:
                tally.add(u)
            billed = tally.billed_input
            layers = [getattr(e, "layer", "") for e in events]
            return {"billed": billed, "ideal": ideal, "peak": max(prompt), "calls": len(answered),
                    "hit": sum(Usage.of(u).cache_read for u in answered) / sum(prompt),
                    "output": sum(Usage.of(u).output for u in answered),
                    "summaries": sum(is_summary_request(server.requests[u["request"]]) for u in answered),
                    "micro": layers.count("micro_compact"), "snips": layers.count("snip_compact"),
                    "turns": turn + 1, "refused": refused is not None,
                    "over": sum(a.startswith("400 prompt is too long") for a in server.answers)}


def pipeline_ms(messages_count: int) -> float:
    """Median CPU milliseconds of compactor.prepare() per call in steady state, on a session history
    (a LoggedHistory, as in the agent) of this many messages, snipping off."""
    settings = Settings(snip_max_messages=NEVER, context_limit=NEVER)
    with tempfile.TemporaryDirectory() as tmp:
        compactor = Compactor(settings, Path(tmp), lambda request: ("", None))
        messages = LoggedHistory([{"role": "user", "content": "start"}])
        n = 0
        while len(messages) < messages_count:
            tool = "read_file" if n % 3 else "bash"
            messages.append({"role": "assistant", "content": [{"type": "text", "text": "Next step."},
                             {"type": "tool_use", "id": f"toolu_{n:06d}", "name": tool, "input": {"path": f"f{n}.py"}}]})
            messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{n:06d}",
                                                          "content": f"line {n}\n" * 120}]})
            n += 1
        out = compactor.prepare(messages)                    # a first pass may clear a batch; then steady state
        if out is not messages:
            messages[:] = out
        times = []
        for step in range(60):
            compactor.observe(messages, Usage(input=1000, cache_read=100_000, output=50).to_api())
            messages.append({"role": "assistant", "content": [{"type": "tool_use", "id": f"toolu_x{step}",
                                                               "name": "bash", "input": {"command": "ls"}}]})
            messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_x{step}",
                                                          "content": "a.py\nb.py\n"}]})
            started = time.process_time()
            out = compactor.prepare(messages)
            times.append((time.process_time() - started) * 1000)
            if out is not messages:
                messages[:] = out
        return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweep", action="store_true", help="also try other defaults")
    parser.add_argument("--timing", action="store_true", help="also try COLD_COMPACT_AT and CACHE_TTL values with "
                                                              "pauses of 30 s, 6, 20 and 90 minutes")
    parser.add_argument("--quick", action="store_true", help=f"tutorial and default over {QUICK_TURNS} turns only "
                                                             "(a few seconds: does the bench still run?)")
    parser.add_argument("--only", action="append", choices=list(CONFIGS), help="this configuration only (repeatable; "
                                                                                 "the tutorial runs too, as the base)")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a setting for every configuration but the tutorial's (e.g. BACKGROUND_COMPACT=off)")
    args = parser.parse_args()
    extra = dict(item.split("=", 1) for item in args.set)
    turns = QUICK_TURNS if args.quick else TURNS
    chosen = ["tutorial", "default"] if args.quick else ["tutorial", *args.only] if args.only else list(CONFIGS)
    configs = {name: CONFIGS[name] for name in dict.fromkeys(chosen)}
    if args.sweep:
        for clear in (0, 5_000, 10_000, 20_000, 40_000):
            for target in (20, 30, 40):
                configs[f"clear={clear},target={target}"] = (
                    dict(micro_clear_at_least=clear, snip_target_messages=target), 30, 1024, None)
    if args.sweep or args.timing:
        for pause in (30, 360, 1200, 5400):
            for at in (0.1, 0.3, 0.5, 1):
                for ttl in ("5m", "prefix", "1h", "auto"):
                    configs[f"{pause // 60 or 0.5}min,cold={at},{ttl}"] = (
                        dict(cold_compact_at=at, cache_ttl=ttl), pause, 1024, None)
    with tempfile.TemporaryDirectory(prefix="s08-cost-template-") as tmp:
        template = Path(tmp)
        make_workspace(template)
        print(f"{len(scenario(turns))} scripted replies over {turns} turns; window {Settings().context_window:,}, "
              f"CONTEXT_LIMIT {Settings().context_limit:,}\n")
        print(f"{'configuration':<27}{'billed input':>13}{'vs tutorial':>12}{'ideal':>11}{'vs ideal':>9}"
              f"{'hit':>6}{'peak prompt':>12}{'output':>9}{'calls':>6}{'summaries':>10}{'micro':>6}"
              f"{'snips':>6}{'refused':>8}")
        results = {}
        for name, (settings, pause, minimum, window) in configs.items():
            if not name.startswith("tutorial"):
                settings = {**settings, **{k.lower(): v for k, v in extra.items()}}
            r = results[name] = run(name, settings, template, pause, minimum, window, turns)
            base = results["tutorial"]["billed"]
            note = f"  (stopped: refused after {r['turns']} turns)" if r["refused"] else ""
            print(f"{name:<27}{r['billed']:>13,.0f}{r['billed'] / base:>11.2f}×{r['ideal']:>11,.0f}"
                  f"{r['billed'] / r['ideal']:>8.2f}×{r['hit']:>6.0%}{r['peak']:>12,}{r['output']:>9,}"
                  f"{r['calls']:>6}{r['summaries']:>10}{r['micro']:>6}{r['snips']:>6}{r['over']:>8}{note}", flush=True)
    for count in (200,) if args.quick else (200, 2_000, 20_000):
        ms = pipeline_ms(count)
        print(f"pipeline CPU per call at {count:,} messages: {ms:.3f} ms {'ok' if ms < 1 else 'MISSED (target < 1 ms)'}")
    if len(configs) < len(CONFIGS):
        return 0                        # the targets read the whole table
    d, t, p = results["default"], results["tutorial"], results["default, 6-min pauses"]
    small = results[f"default, {SMALL_WINDOW:,} window"]
    print(f"\ntargets: default ≤ 0.25× tutorial: {d['billed'] / t['billed']:.2f}× "
          f"{'ok' if d['billed'] <= 0.25 * t['billed'] else 'MISSED'}; with 6-minute pauses ≤ {PAUSED_TARGET}×: "
          f"{p['billed'] / t['billed']:.3f}× {'ok' if p['billed'] <= PAUSED_TARGET * t['billed'] else 'MISSED'}; "
          f"default ≤ 1.3× its ideal: {d['billed'] / d['ideal']:.2f}× {'ok' if d['billed'] <= 1.3 * d['ideal'] else 'MISSED'}; "
          f"refused as too long: default {d['over']}, {SMALL_WINDOW:,} window {small['over']} "
          f"{'ok' if small['over'] <= 1 else 'MISSED (target ≤ 1)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
