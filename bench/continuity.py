"""What the agent still knows after many compactions (prints figures; not a test).

    python bench/continuity.py
    python bench/continuity.py --quick      the first QUICK_TURNS turns only (a few seconds)

One scripted session of 12 turns is replayed by the real agent (in-process, real SDK and HTTP)
against the local stand-in. Each turn the person gives one standing instruction ("never touch
legacy/", one of them in Chinese) and the model reads three modules and writes or edits one more
(48 paths in all). The model's summaries are deliberately forgetful: "The work continued." — no
instruction, no path. At the end, the last request the model was sent is searched for every
instruction and every path, side by side for:

    s08          s08's defaults (CONTEXT_LIMIT 50,000; USER_MESSAGES_BUDGET, LEDGER_BUDGET as shipped)
    blocking     the same with BACKGROUND_COMPACT=off (every summary waited for at the limit)
    tutorial     the seeds' compaction: only the summary survives a compaction (both budgets 0), micro
                 clearing every turn, snip one step at a time, no cache breakpoints

For each it prints: instructions visible X/Y, files visible P/Q, compactions C, the final prompt's
tokens T and the billed input B (input-token equivalents: uncached + 1.25 × cache writes + 0.1 ×
cache reads, from the stand-in's simulation of the API's prompt cache).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from agent import App  # noqa: E402
from session.costs import TokenTally  # noqa: E402
from support.helpers import Model, is_summary_request  # noqa: E402
from standin import StandIn, count_request_tokens  # noqa: E402
from standin.cache import PromptCache  # noqa: E402

TURNS, SEED = 12, 8
QUICK_TURNS = 4
INSTRUCTIONS = ["never touch legacy/", "keep tabs in the Makefile", "所有新注释都用中文写",
                "run pytest -q before you say you are done", "add no new dependencies",
                "keep every function under 60 lines", "use pathlib, never os.path", "answer in one short paragraph",
                "do not rename public functions", "log errors, never print them", "write type hints on new code",
                "commit nothing: the person reviews first"]
CONFIGS = {
    "s08": {},
    "blocking": dict(background_compact="off"),
    "tutorial": dict(user_messages_budget=0, ledger_budget=0, prompt_cache="off", micro_clear_at_least=0,
                     snip_target_messages=50, background_compact="off", recent_work=0),
}
FORGETFUL = {"text": "The work continued."}


def paths_of(turn: int) -> list[str]:
    return [f"pkg{(turn + k) % 4}/mod_{turn}_{k}.py" for k in range(3)] + [f"docs/turn_{turn}.md"]


def make_workspace(folder: Path) -> None:
    rng = random.Random(SEED)
    for turn in range(TURNS):
        for path in paths_of(turn)[:3]:
            (folder / path).parent.mkdir(parents=True, exist_ok=True)
            lines = [f'"""{path}: part of the benchmark project."""']
            for n in range(rng.randint(220, 320)):
                lines.append(f"def handler_{turn}_{n}(request, retries={rng.randint(1, 9)}):")
                lines.append(f"    return process(request, step={n}, scale={rng.random():.4f})")
            (folder / path).write_text("\n".join(lines) + "\n")


def scenario(turns: int = TURNS) -> list[dict]:
    replies = []
    for turn in range(turns):
        reads, notes = paths_of(turn)[:3], paths_of(turn)[3]
        replies.append({"text": f"Reading turn {turn}'s modules.",
                        "tool_calls": [{"name": "read_file", "input": {"path": p}} for p in reads]})
        replies.append({"text": "Writing notes.", "tool_calls": [{"name": "write_file", "input": {
            "path": notes, "content": f"# Turn {turn}\n" + "- reviewed\n" * 20}}]})
        replies.append({"text": f"Turn {turn} is done: " + "the modules look consistent. " * 10})
    return replies


def run(settings: dict, template: Path, turns: int = TURNS) -> dict:
    now = [0.0]
    model = Model(*scenario(turns), summaries=[FORGETFUL])

    def brain(body):
        now[0] += 2
        return model(body)
    with tempfile.TemporaryDirectory(prefix="s08-continuity-") as tmp:
        workspace = Path(tmp) / "ws"
        shutil.copytree(template, workspace)
        with StandIn(api_key="bench", cache=PromptCache(clock=lambda: now[0])) as server:
            server.brain = brain
            env = {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "bench", "HOME": tmp, "APPROVAL_MODE": "yolo",
                   **{k.upper(): str(v) for k, v in settings.items()}}
            app = App(workspace, environ=env)
            app.set_emit(lambda event: None)
            for turn, instruction in enumerate(INSTRUCTIONS[:turns]):
                prep = app.agent.compactor.background.current
                if prep is not None:          # the pause is simulated: a summary prepared in the background at
                    prep.done.wait(60)        # the last answer is sent and done before it, as it would be
                now[0] += 30
                app.turn(f"From now on, {instruction}. Then review turn {turn}'s modules.")
            app.close()
            final = [r for r in server.requests if not is_summary_request(r)][-1]
            text = json.dumps(final["messages"], ensure_ascii=False)
            tally = TokenTally()
            for usage in server.usages:
                tally.add(usage)
            paths = [p for t in range(turns) for p in paths_of(t)]
            return {"instructions": sum(i in text for i in INSTRUCTIONS[:turns]), "files": sum(p in text for p in paths),
                    "paths": len(paths), "compactions": sum(map(is_summary_request, server.requests)),
                    "prompt": count_request_tokens(final), "billed": tally.billed_input,
                    "refused": len(server.rejections)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"the first {QUICK_TURNS} turns only (does it still run?)")
    turns = QUICK_TURNS if parser.parse_args().quick else TURNS
    with tempfile.TemporaryDirectory(prefix="s08-continuity-template-") as tmp:
        template = Path(tmp)
        make_workspace(template)
        print(f"{turns} turns, one standing instruction each, {turns * 4} paths touched; summaries say only "
              f"{FORGETFUL['text']!r}\n")
        for name, settings in CONFIGS.items():
            r = run(settings, template, turns)
            print(f"{name:<10} instructions visible {r['instructions']}/{turns}, files visible {r['files']}/{r['paths']}, "
                  f"compactions {r['compactions']}, final prompt {r['prompt']:,} tokens, billed input "
                  f"{r['billed']:,.0f}" + (f", {r['refused']} requests refused" if r["refused"] else ""), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
