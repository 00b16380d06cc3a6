"""python -m standin with the admin flag."""

from __future__ import annotations


import pytest
from support.helpers import http


@pytest.mark.parametrize("flag, expected", [((), 200), (("--no-admin",), 404)])
def test_python_m_standin_admin_flag(flag, expected):
    import subprocess
    import sys

    from support.agents import ROOT
    from support.sockets import free_port
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "standin", "--port", str(port), *flag], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert "stand-in Messages API on" in proc.stdout.readline()
        assert http(f"http://127.0.0.1:{port}", "/_standin/reset", {}) == expected
    finally:
        proc.terminate()
        proc.wait(timeout=10)
