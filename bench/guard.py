"""Time the bash guard on large one-line commands (not a test: it prints figures).

    python bench/guard.py [--old REV]

Each shape is a pathological command line at 10 KB, 40 KB and the largest size the bash tool
accepts (MAX_COMMAND_BYTES, 128 KB). With --old, the guard of an earlier revision (e.g. `--old
90c650a`, the one with the quadratic function-definition pattern) is timed on the 10 KB shapes too.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tools.bash_guard import MAX_COMMAND_BYTES, dangerous_reason  # noqa: E402

SHAPES = {
    "one long word": lambda n: "a" * n,
    "f() and spaces": lambda n: "f()" + " " * n,
    "f(){ repeated": lambda n: "f(){ " * (n // 5),
    "assignments": lambda n: "x=1;" * (n // 4),
    "$( repeated": lambda n: "$(" * (n // 2),
    "cd / repeated": lambda n: "cd / ; " * (n // 7),
}


def timed(guard, command: str) -> float:
    start = time.perf_counter()
    guard(command)
    return time.perf_counter() - start


def old_guard(rev: str):
    source = subprocess.run(["git", "show", f"{rev}:tools/bash_guard.py"], cwd=ROOT, capture_output=True,
                            text=True, check=True).stdout
    path = Path(tempfile.mkdtemp()) / "old_guard.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("old_guard", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.dangerous_reason


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", metavar="REV", help="also time the guard of this git revision (10 KB only)")
    parser.add_argument("--quick", action="store_true", help="10 KB commands only (does it still run?)")
    args = parser.parse_args()
    sizes = [10_000] if args.quick else [10_000, 40_000, MAX_COMMAND_BYTES]
    print(f"{'shape':<16}" + "".join(f"{n:>12,} B" for n in sizes) + ("   old, 10 KB" if args.old else ""))
    old = old_guard(args.old) if args.old else None
    for name, make in SHAPES.items():
        row = "".join(f"{timed(dangerous_reason, make(n)):>13.3f}s" for n in sizes)
        if old:
            row += f"   {timed(old, make(10_000)):>10.2f}s"
        print(f"{name:<16}{row}")


if __name__ == "__main__":
    main()
