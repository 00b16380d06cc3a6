"""`pip install .` into a fresh venv gives an `s08` command that works in any folder (slow: it builds
a wheel; `python -m pytest -m install` runs it, and so does .ci/run).

The venv is fresh; only its dependencies are borrowed from the environment running the test (a .pth
file), so nothing but the build backend (setuptools, wheel) is fetched from the package index."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import venv

import pytest

from support.agents import base_env
from support.agents import copy_of_the_repository
from version import __version__

pytestmark = pytest.mark.install


def test_pip_install_gives_an_s08_command_that_runs_in_the_current_folder(tmp_path):
    source = copy_of_the_repository(tmp_path / "src")
    target = tmp_path / "venv"
    venv.create(target, with_pip=True)
    site = target / f"lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"
    (site / "_s08_test_packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    before = {p.name for p in site.iterdir()}
    pip = subprocess.run([str(target / "bin/python"), "-m", "pip", "install", "-q", str(source)],
                         capture_output=True, text=True, timeout=600)
    assert pip.returncode == 0, pip.stderr[-3000:]
    assert not (source / "build").exists() and not list(source.glob("*.egg-info"))   # nothing built in the clone

    added = {p.name for p in site.iterdir()} - before
    assert added == {"s08", f"s08-{__version__}.dist-info"}, added      # no flat module names at the top
    assert (site / "s08" / "agent.py").is_file() and (site / "s08" / "standin" / "brain.py").is_file()
    assert not (site / "s08" / "tests").exists()

    s08 = str(target / "bin" / "s08")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "only-here.txt").write_text("hi\n")
    env = base_env(tmp_path)                                  # a clean HOME, no key anywhere
    version = subprocess.run([s08, "--version"], capture_output=True, text=True, env=env, timeout=60)
    assert version.stdout.strip() == f"s08 {__version__}"
    proc = subprocess.run([s08, "-p", "run ls"], cwd=elsewhere, capture_output=True, text=True, env=env,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("[demo] Tool results:\n- ok: only-here.txt")
    assert "offline demo model" in proc.stderr
