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

from pathlib import Path

from dotenv import dotenv_values

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
    """`text` with every secret value replaced by [redacted]."""
    if not isinstance(text, str):
        return text
    for value in secrets or ():
        if value in text:
            text = text.replace(value, REDACTED)
    return text


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
    """Redact a byte stream chunk by chunk. Holds back the last (longest secret − 1) bytes of each
    chunk, so a secret cut in two by a chunk boundary is joined before it is looked for."""

    def __init__(self, secrets):
        self.secrets = [s.encode("utf-8", "surrogatepass") for s in secrets or ()]
        self.keep = max((len(s) for s in self.secrets), default=1) - 1
        self.carry = b""

    def feed(self, data: bytes) -> bytes:
        """Redacted bytes that are safe to pass on now."""
        if not self.secrets:
            return data
        buf = self._replace(self.carry + data)
        if self.keep <= 0:
            self.carry = b""
            return buf
        cut = max(0, len(buf) - self.keep)
        self.carry = buf[cut:]
        return buf[:cut]

    def flush(self) -> bytes:
        """The held-back tail, at the end of the stream."""
        rest, self.carry = self.carry, b""
        return self._replace(rest)

    def _replace(self, buf: bytes) -> bytes:
        for secret in self.secrets:
            if secret in buf:
                buf = buf.replace(secret, REDACTED.encode())
        return buf
