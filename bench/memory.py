"""Peak memory of the agent while a tool produces or reads a huge output (not a test: it prints figures).

    python bench/memory.py [--gb 1]

Runs the real agent (`python agent.py -p ...`) against the local stand-in in a
temporary workspace, twice: the model asks bash for `yes | head -c <N>G`, then
read_file on a file of that size. It samples the agent process's peak RSS
(VmHWM in /proc) and prints it with what reached the model and the disk.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from standin import StandIn  # noqa: E402
from storage import TASK_OUTPUTS_DIR  # noqa: E402


def peak_rss_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def run_agent(workspace: Path, server: StandIn, prompt: str) -> tuple[float, float, int]:
    env = {"PATH": os.environ["PATH"], "HOME": str(workspace), "ANTHROPIC_BASE_URL": server.url,
           "ANTHROPIC_API_KEY": "bench", "LANG": "C.UTF-8", "BASH_TIMEOUT": "600",
           "APPROVAL_MODE": "yolo"}       # -p mode cannot ask, and this bench is not about approvals
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, str(ROOT / "agent.py"), "-p", prompt], cwd=workspace, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0.0
    while proc.poll() is None:
        peak = max(peak, peak_rss_mb(proc.pid) or 0.0)
        time.sleep(0.05)
    return peak, time.monotonic() - started, proc.returncode


def sent_result(server: StandIn) -> str:
    last = server.requests[-1]["messages"][-1]["content"]
    return next(b["content"] for b in last if b.get("type") == "tool_result")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gb", type=float, default=1.0, help="size of the output in GiB (default 1)")
    parser.add_argument("--quick", action="store_true", help="a 16 MiB output (does it still run?)")
    args = parser.parse_args()
    if args.quick:
        args.gb = 1 / 64
    size = int(args.gb * 1024 ** 3)
    with tempfile.TemporaryDirectory(prefix="s08-bench-") as tmp, StandIn(api_key="bench") as server:
        workspace = Path(tmp)
        print(f"output size: {size:,} bytes ({args.gb:g} GiB)")

        server.queue({"tool_calls": [{"name": "bash", "input": {"command": f"yes | head -c {size}"}}]},
                     {"text": "done"})
        peak, seconds, code = run_agent(workspace, server, "print a lot")
        result = sent_result(server)
        saved = sorted((workspace / TASK_OUTPUTS_DIR).glob("*.txt"))
        print(f"bash      peak RSS {peak:6.1f} MB  {seconds:5.1f} s  exit {code}  "
              f"model got {len(result):,} chars  kept on disk {saved[-1].stat().st_size:,} bytes")

        big = workspace / "big.txt"
        subprocess.run(f"yes | head -c {size} > {big}", shell=True, check=True)
        server.queue({"tool_calls": [{"name": "read_file", "input": {"path": "big.txt"}}]}, {"text": "done"})
        peak, seconds, code = run_agent(workspace, server, "read big.txt")
        print(f"read_file peak RSS {peak:6.1f} MB  {seconds:5.1f} s  exit {code}  "
              f"model got {len(sent_result(server)):,} chars")
        baseline, _, _ = run_agent(workspace, server, "hello")
        print(f"baseline  peak RSS {baseline:6.1f} MB  (the same agent answering 'hello', no tool)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
