"""The bash guard, measured in a new interpreter: linear on the largest commands it accepts."""

from __future__ import annotations

import subprocess
import sys

from support.agents import ROOT

GUARD_WORKOUT = """
import sys
sys.path.insert(0, sys.argv[1])
from tools.bash_guard import MAX_COMMAND_BYTES, dangerous_reason
n = MAX_COMMAND_BYTES
for shape in ["a" * n, "f()" + " " * n, "f(){ " * (n // 5), "x=1;" * (n // 4), "$(" * (n // 2), "(" * n,
              "{" * n, "cd / ; " * (n // 7), ":(){ :|" * (n // 8), "a" * n + "; rm -rf /"]:
    dangerous_reason(shape)
print(dangerous_reason("a" * (n - 20) + "; rm -rf /"))
"""


def test_the_guard_is_linear_on_the_largest_commands_it_accepts():
    # the old function-definition pattern took 81 s on 40 KB; here ten 128 KB shapes must finish, with
    # a limit 100 times what they need on an idle machine
    proc = subprocess.run([sys.executable, "-c", GUARD_WORKOUT, str(ROOT)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "recursive rm of /"
