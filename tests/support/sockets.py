"""Local sockets for tests: a port nothing listens on, a listening socket for a raw test server, and a raw
server whose answer never ends (Endless)."""

from __future__ import annotations

import socket
import threading


def free_port() -> int:
    """A local port that was free a moment ago (nothing listens on it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening() -> tuple[socket.socket, str]:
    """A socket listening on a free local port, and its http:// URL (a raw server accepts on it)."""
    listener = socket.create_server(("127.0.0.1", 0))
    return listener, f"http://127.0.0.1:{listener.getsockname()[1]}"


class Endless:
    """A raw server for one request: it answers `first`, then `more` again and again until the client hangs up
    (`hung_up` is set then) or `most` bytes of `more` were sent (an end for a client that reads all); `sent`
    counts them."""

    def __init__(self, first: bytes, more: bytes, most: int = 1 << 40):
        self.first, self.more, self.most, self.sent = first, more, most, 0
        self.hung_up = threading.Event()
        self.sock, self.url = listening()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        conn, _ = self.sock.accept()
        conn.recv(65536)
        try:
            conn.sendall(self.first)
            while self.sent < self.most:
                conn.sendall(self.more)
                self.sent += len(self.more)
        except OSError:
            self.hung_up.set()
        finally:
            conn.close()

    def close(self) -> None:
        self.sock.close()
