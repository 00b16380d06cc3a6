"""How long the first answer takes compared with later ones (not a test: it prints figures).

    python bench/first_answer.py [--runs 3] [--pause 1.5]

Starts `python agent.py` — a new interpreter each run, as a person's start is — in a pseudo-terminal
against the local stand-in (an instant `hi` answer, so what is timed is s08's own work), and prints:

    prompt     from the start of the process to the `s08 >>` prompt
    first      from Enter on the first message to its answer on the screen
    later      the same for the next three messages (median)

With more than one run, a last row gives the median of each column (the machine may be busy: read the
medians). `--pause` is how long the person "types" before the first Enter (the HTTP client is built
meanwhile, in the background, once the prompt is drawn); 0 sends at once, the worst case. A session's
calls do not import the Anthropic SDK (llm/anthropic_http.py): before they did, the first answer waited
for its import (about 1.8 s of CPU).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pexpect

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from standin import StandIn  # noqa: E402

PROMPT = "s08 >> "
KEY = "bench-key-0123456789"


def one_run(pause: float) -> tuple[float, float, list[float]]:
    server = StandIn(api_key=KEY).start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            home, ws = Path(tmp) / "home", Path(tmp) / "ws"
            home.mkdir()
            ws.mkdir()
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8",
                   "TERM": "xterm-256color", "PROMPT_TOOLKIT_NO_CPR": "1", "ANTHROPIC_BASE_URL": server.url,
                   "ANTHROPIC_API_KEY": KEY}
            for n in range(4):
                server.queue({"text": f"hi-{n}-done"})
            start = time.monotonic()
            child = pexpect.spawn(sys.executable, [str(ROOT / "agent.py")], cwd=str(ws), env=env,
                                  encoding="utf-8", dimensions=(50, 120), timeout=60)
            child.delaybeforesend = None
            child.expect_exact(PROMPT)
            prompt = time.monotonic() - start
            time.sleep(pause)
            times = []
            for n in range(4):
                sent = time.monotonic()
                child.send(f"hello {n}\r")
                child.expect_exact(f"hi-{n}-done")
                times.append(time.monotonic() - sent)
                child.expect_exact(PROMPT)
                time.sleep(0.3)
            child.sendline("/quit")
            child.expect(pexpect.EOF)
            return prompt, times[0], times[1:]
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pause", type=float, default=1.5, help="seconds of 'typing' before the first Enter")
    parser.add_argument("--quick", action="store_true", help="one run, no pause (does it still run?)")
    args = parser.parse_args()
    if args.quick:
        args.runs, args.pause = 1, 0.0
    print(f"{'run':<5}{'prompt':>9}{'first':>9}{'later':>9}   (seconds; pause before the first Enter {args.pause}s)")
    rows = []
    for run in range(1, args.runs + 1):
        prompt, first, later = one_run(args.pause)
        rows.append((prompt, first, statistics.median(later)))
        print(f"{run:<5}" + "".join(f"{x:>9.2f}" for x in rows[-1]))
    if len(rows) > 1:
        print("med. " + "".join(f"{statistics.median(column):>9.2f}" for column in zip(*rows)))


if __name__ == "__main__":
    main()
