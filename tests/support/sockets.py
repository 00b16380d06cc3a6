"""Local sockets for tests: a port nothing listens on, and a listening socket for a raw test server."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A local port that was free a moment ago (nothing listens on it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening() -> tuple[socket.socket, str]:
    """A socket listening on a free local port, and its http:// URL (a raw server accepts on it)."""
    listener = socket.create_server(("127.0.0.1", 0))
    return listener, f"http://127.0.0.1:{listener.getsockname()[1]}"
