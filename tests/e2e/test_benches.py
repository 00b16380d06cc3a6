"""Every bench in bench/ still starts and prints its figures: each one's `--quick` mode (its smallest
configuration) runs as a real process. The figures themselves are not asserted (no timed assertions:
they are in bench/README.md); a bench that no longer imports or runs fails here, not months later."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from support.agents import ROOT

BENCHES = {          # bench → a line its figures are on
    "background.py": r"read-all +1 s +0\.2 s +on .*\d+/\d+",
    "continuity.py": r"s08 +instructions visible \d+/\d+, files visible \d+/\d+",
    "cost.py": r"default +[\d,]+ +[\d.]+×",
    "first_answer.py": r"1 +[\d.]+ +[\d.]+ +[\d.]+",
    "guard.py": r"one long word +[\d.]+s",
    "mcp.py": r"deferred +\d+ +\d+ +[\d,]+",
    "memory.py": r"read_file peak RSS +[\d.]+ MB",
    "subagents.py": r"task +[\d,]+ +\d+ +[\d,]+ +\d+",
    "sandbox.py": r"(true +[\d.]+ +[\d.]+ +[\d.]+|no kernel sandbox here)",
}


def test_every_bench_is_covered():
    assert sorted(p.name for p in (ROOT / "bench").glob("*.py")) == sorted(BENCHES)


@pytest.mark.parametrize("bench", sorted(BENCHES))
def test_quick_mode_runs_and_prints_figures(bench, tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "bench" / bench), "--quick"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert re.search(BENCHES[bench], done.stdout), done.stdout[-3000:]
