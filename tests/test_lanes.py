"""The test lanes (tests/conftest.py): a test not marked slow cannot start a Python interpreter of s08,
whichever way it tries, and gets a clear error naming the marker; shell commands stay allowed."""

from __future__ import annotations

import os
import subprocess
import sys

import pexpect
import pytest

from conftest import AGENT, SpawnRefused, starts_s08_python


@pytest.mark.parametrize("argv, slow", [
    ([sys.executable, AGENT, "-p", "hi"], True),
    ([sys.executable, "-m", "standin"], True),
    (["python3", "-c", "pass"], True),
    (["/usr/bin/python3.11", "x.py"], True),
    (["pip", "install", "."], True),
    (["/tmp/venv/bin/s08", "-p", "run ls"], True),
    (["env", "HOME=/tmp", "./agent.py"], True),
    (f"{sys.executable} agent.py --continue", True),
    (["bash", "-c", "python3 -c 'print(1)'"], False),      # what the bash tool runs: a shell command
    (["git", "init", "-q"], False),
    (["sh", "-c", "cat agent.py"], False),
    ("ls -la", False),
])
def test_what_counts_as_starting_s08_python(argv, slow):
    assert starts_s08_python(argv) is slow


def test_an_unmarked_test_that_starts_python_is_refused_every_way(lane_guard):
    with pytest.raises(SpawnRefused, match="not marked slow: add @pytest.mark.slow"):
        subprocess.run([sys.executable, "-c", "pass"], check=False)
    with pytest.raises(SpawnRefused):
        subprocess.Popen(f"{sys.executable} -c pass", shell=False)
    with pytest.raises(SpawnRefused):
        pexpect.spawn(sys.executable, [AGENT])
    with pytest.raises(SpawnRefused):
        os.system("python3 -c pass")
    assert len(lane_guard) == 4                 # noted too: swallowing the error would not hide it
    lane_guard.clear()                          # refused on purpose here; otherwise the test fails


def test_an_unmarked_test_may_run_a_shell_command(lane_guard):
    out = subprocess.run(["bash", "-c", "echo fine"], capture_output=True, text=True, check=True)
    assert out.stdout == "fine\n" and not lane_guard


@pytest.mark.slow
def test_a_slow_test_may_start_python(lane_guard):
    out = subprocess.run([sys.executable, "-c", "print(6 * 7)"], capture_output=True, text=True, check=True)
    assert out.stdout == "42\n" and not lane_guard
