"""One redaction function: the configured key and token never leave s08 in a tool result or a message.

    redact(text, secrets)            every occurrence of a secret value → "[redacted]"
    StreamRedactor(secrets).feed(b)  the same over a byte stream cut into arbitrary chunks (the bash
                                     tool's spill file): a secret split across two chunks is still found
    secret_values(settings)          the key and token of one Settings (tests, and a fallback)
    credential_values(environ, files, extra)   every credential s08 knows of: the environment's, each
                                     settings file's, and `extra` (the pinned values, the demo's key);
                                     access.Access.secrets() is the one caller that builds the set
    redact_data(value, secrets)      the same over JSON-shaped data (a resumed session's messages)

Tool results are redacted at one point, as they enter the history (loop/agent_loop.py), so the history, the
session log, transcripts and persisted outputs never hold a key; the bash spill writer redacts its
stream before anything is kept. Every credential s08 knows of is hidden, not only the one the session
sends: under --demo the person's real key is still in their settings file, and a folder's endpoint
must not receive the key of another. Values shorter than MIN_SECRET_CHARS are not real keys (the stand-in
accepts `test`) and are not hunted for: redacting every "test" would mangle outputs.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

SECRET_SETTINGS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")   # never shown, never given to commands
REDACTED = "[redacted]"
MIN_SECRET_CHARS = 8


def secret_values(settings) -> tuple[str, ...]:
    """The configured secret values worth hiding, longest first (a token containing a key wins)."""
    return _worth_hiding(getattr(settings, name.lower(), "") or "" for name in SECRET_SETTINGS)


def _worth_hiding(values) -> tuple[str, ...]:
    kept = {v.strip() for v in values if isinstance(v, str)}
    return tuple(sorted((v for v in kept if len(v) >= MIN_SECRET_CHARS), key=len, reverse=True))


def url_credentials(url: str) -> tuple[str, ...]:
    """The `user:password` of a URL, and its password alone (a base URL may carry them)."""
    rest = url.partition("://")[2] or url
    host = rest.split("/", 1)[0]
    if "@" not in host:
        return ()
    userinfo = host.rsplit("@", 1)[0]
    return (userinfo, userinfo.partition(":")[2])


def credential_values(environ: dict, files=(), extra=()) -> tuple[str, ...]:
    """Every key and token value in `environ`, in the settings files `files` (read literally; a file that
    cannot be read adds nothing), and in `extra`; with the credentials a base URL carries. Longest first."""
    from dotenv import dotenv_values      # here: the key guard imports this module before anything heavy
    layers = [environ]
    for path in files:
        try:
            if Path(path).is_file():
                layers.append(dotenv_values(path, interpolate=False))
        except (OSError, ValueError):
            continue
    values = list(extra)
    for layer in layers:
        values += [layer.get(name) or "" for name in SECRET_SETTINGS]
        values += url_credentials(layer.get("ANTHROPIC_BASE_URL") or "")
    return _worth_hiding(values)


def redact_data(value, secrets):
    """JSON-shaped data with every secret in its strings replaced (a new structure; `value` is kept)."""
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, list):
        return [redact_data(v, secrets) for v in value]
    if isinstance(value, dict):
        return {k: redact_data(v, secrets) for k, v in value.items()}
    return value


def redact(text: str, secrets) -> str:
    """`text` with every secret value replaced by [redacted]: scanned left to right, and where
    several secrets start at one place the longest is taken (a token containing a key wins)."""
    values = tuple(v for v in secrets or () if v)
    if not isinstance(text, str) or not values:
        return text
    return _pattern(values).sub(REDACTED, text)


@lru_cache(maxsize=32)
def _pattern(secrets: tuple) -> re.Pattern:
    """Secrets as one alternation, longest first: a regex takes the first alternative that matches at
    the leftmost place, so this is leftmost-longest. Works for str and for bytes secrets."""
    ordered = sorted(dict.fromkeys(secrets), key=len, reverse=True)
    return re.compile(b"|".join(map(re.escape, ordered)) if isinstance(ordered[0], bytes)
                      else "|".join(map(re.escape, ordered)))


def redact_url(url: str) -> str:
    """A URL without the user:password part (a base URL may carry credentials), also when the scheme
    is missing (`user:pw@host`, which s08 refuses with a message that shows the URL)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url
    host, slash, path = rest.partition("/")
    if "@" in host:
        host = "[redacted]@" + host.rsplit("@", 1)[1]
    return f"{scheme}{sep}{host}{slash}{path}"


class StreamRedactor:
    """Redact a byte stream chunk by chunk, holding back only what must wait: the longest ending of the
    output that could be the start of a secret (so a secret cut in two by a chunk boundary is joined
    before it is looked for). Everything else is passed on at once — a line that cannot begin a
    secret is never held. What is passed on, joined, is exactly `redact` of the whole stream."""

    def __init__(self, secrets):
        self.secrets = tuple(dict.fromkeys(s.encode("utf-8", "surrogatepass") for s in secrets or () if s))
        self.pattern = _pattern(self.secrets) if self.secrets else None
        self.longest = max((len(s) for s in self.secrets), default=0)
        # every proper beginning of a secret: a held-back ending is one of these
        self.starts = {s[:k] for s in self.secrets for k in range(1, len(s))}
        self.carry = b""

    def feed(self, data: bytes) -> bytes:
        """Redacted bytes that are safe to pass on now."""
        if self.pattern is None:
            return data
        out, self.carry = self._split(self.carry + data)
        return out

    def flush(self) -> bytes:
        """The held-back tail, redacted, at the end of the stream (it may hold a shorter secret that
        waited to see whether a longer one would follow)."""
        rest, self.carry = self.carry, b""
        return self.pattern.sub(REDACTED.encode(), rest) if self.pattern is not None else rest

    def _hold_from(self, buf: bytes, start: int) -> int:
        """The first index ≥ `start` from which the rest of `buf` could be the start of a secret
        (len(buf) when no ending could)."""
        for i in range(max(start, len(buf) - self.longest + 1), len(buf)):
            if buf[i:] in self.starts:
                return i
        return len(buf)

    def _split(self, buf: bytes) -> tuple[bytes, bytes]:
        """(what can go now, redacted; what must wait). A secret found before the held ending is replaced
        (no longer one can start where it starts, or the ending would begin there); one that runs into
        the ending consumes it, and the ending is looked for again after it."""
        assert self.pattern is not None
        parts, pos = [], 0
        hold = self._hold_from(buf, 0)
        for found in self.pattern.finditer(buf):
            if found.start() >= hold:
                break
            parts += [buf[pos:found.start()], REDACTED.encode()]
            pos = found.end()
            if pos > hold:
                hold = self._hold_from(buf, pos)
        parts.append(buf[pos:hold])
        return b"".join(parts), buf[hold:]
