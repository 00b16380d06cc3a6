"""Time what the kernel sandbox adds to a bash command (not a test: it prints figures).

    python bench/sandbox.py [--runs N]

For `true`, `ls -la`, `git status` and `grep -rn def tools`, the median wall time of the bash tool's
run_command: unsandboxed (as an approved command runs), in the read-only sandbox (as a command the
policy runs without a question), and under SANDBOX=workspace; and the launcher alone, read-only (Landlock and
the seccomp filter) and as SANDBOX=workspace runs it (with the user and mount namespace, when available).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from config import Settings  # noqa: E402
from tools.bash import run_command  # noqa: E402
from tools.sandbox import APPROVED, LAUNCHER, READ_ONLY, READ_ONLY_OPTIONS, Sandbox, probe, probe_mounts  # noqa: E402

COMMANDS = ["true", "ls -la", "git status", "grep -rn def tools"]


def median_ms(fn, runs: int) -> float:
    fn()                                   # warm the caches
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--quick", action="store_true", help="3 runs (does it still run?)")
    args = parser.parse_args()
    runs = 3 if args.quick else args.runs
    abi, problem = probe()
    if problem:
        print(f"no kernel sandbox here: {problem}")
        return
    plain = Sandbox(problem="off")
    ro = Sandbox.for_session(Settings())
    ws = Sandbox.for_session(Settings(sandbox="workspace"))
    print(f"Landlock ABI {abi}; median of {runs} runs, milliseconds")
    with tempfile.TemporaryDirectory() as spill:
        print(f"{'command':<22}{'unsandboxed':>12}{'read-only':>12}{'workspace':>12}")
        for command in COMMANDS:
            row = [median_ms(lambda s=s, k=k, c=command: run_command(c, ROOT, 30, Path(spill), sandbox=s, kind=k), runs)
                   for s, k in ((plain, APPROVED), (ro, READ_ONLY), (ws, APPROVED))]
            print(f"{command:<22}" + "".join(f"{ms:>12.1f}" for ms in row))
        with tempfile.TemporaryDirectory() as tmp:
            launcher = [sys.executable, "-S", "-I", str(LAUNCHER), "--write", tmp, *READ_ONLY_OPTIONS, "--", "true"]
            alone = median_ms(lambda: subprocess.run(launcher, check=True), runs)
            mounts = "" if probe_mounts() else "--read-only-mounts"
            workspace = [sys.executable, "-S", "-I", str(LAUNCHER), "--write", tmp, "--write", str(ROOT),
                         *([mounts] if mounts else []), "--", "true"]
            ws_alone = median_ms(lambda: subprocess.run(workspace, check=True), runs)
            bare = median_ms(lambda: subprocess.run(["true"], check=True), runs)
    print(f"launcher + true: {alone:.1f} ms read-only, {ws_alone:.1f} ms workspace"
          f"{' (read-only mounts)' if mounts else ' (no namespaces here)'}; true alone: {bare:.1f} ms")


if __name__ == "__main__":
    main()
