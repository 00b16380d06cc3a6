"""python -m standin with the admin flag."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest


def http(url: str, path: str, body=None, key: str | None = None, content_type: str = "text/plain") -> int:
    """The status of one request, as a browser's simple request or another process would send it."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url + path, data=data, method="GET" if body is None else "POST",
                                     headers={"content-type": content_type, **({"x-api-key": key} if key else {})})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


@pytest.mark.parametrize("flag, expected", [((), 200), (("--no-admin",), 404)])
def test_python_m_standin_admin_flag(flag, expected):
    import socket
    import subprocess
    import sys

    from support.agents import ROOT
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "standin", "--port", str(port), *flag], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert "stand-in Messages API on" in proc.stdout.readline()
        assert http(f"http://127.0.0.1:{port}", "/_standin/reset", {}) == expected
    finally:
        proc.terminate()
        proc.wait(timeout=10)
