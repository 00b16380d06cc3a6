"""One redaction function: the configured key and token never leave s08 in a tool result or a message.

    redact(text, secrets)            every occurrence of a secret value → "[redacted]"
    StreamRedactor(secrets).feed(b)  the same over a byte stream cut into arbitrary chunks (the bash
                                     tool's spill file): a secret split across two chunks is still found
    secret_values(settings)          the values to hide: ANTHROPIC_API_KEY and ANTHROPIC_AUTH_TOKEN

Tool results are redacted at one point, as they enter the history (loop.py), so the history, the
session log, transcripts and persisted outputs never hold a key; the bash spill writer redacts its
stream before anything is kept. Values shorter than MIN_SECRET_CHARS are not real keys (the stand-in
accepts `test`) and are not hunted for: redacting every "test" would mangle outputs.
"""

from __future__ import annotations

from config import SECRET_SETTINGS

REDACTED = "[redacted]"
MIN_SECRET_CHARS = 8


def secret_values(settings) -> tuple[str, ...]:
    """The configured secret values worth hiding, longest first (a token containing a key wins)."""
    values = {getattr(settings, name.lower(), "") or "" for name in SECRET_SETTINGS}
    return tuple(sorted((v for v in values if len(v) >= MIN_SECRET_CHARS), key=len, reverse=True))


def redact(text: str, secrets) -> str:
    """`text` with every secret value replaced by [redacted]."""
    if not isinstance(text, str):
        return text
    for value in secrets or ():
        if value in text:
            text = text.replace(value, REDACTED)
    return text


def redact_url(url: str) -> str:
    """A URL without the user:password part (a base URL may carry credentials)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    host, slash, path = rest.partition("/")
    if "@" in host:
        host = "[redacted]@" + host.rsplit("@", 1)[1]
    return f"{scheme}://{host}{slash}{path}"


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
