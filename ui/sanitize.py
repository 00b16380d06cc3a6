"""The one sanitizer: every byte of untrusted text passes through `safe` before it reaches a terminal.

Model text, tool names, inputs and outputs, server error messages, settings values, session logs
and file names can all carry control sequences (a prompt injection is enough). On a terminal
they would be obeyed: `ESC ] 52` writes the clipboard, `ESC [ 2 J` clears the screen, a C1 `CSI`
(0x9b) does the same in one byte. `safe` makes them visible instead:

    ESC  → ^[        C0 (0x00-0x1f except \\n and \\t) → ^@ … ^_        DEL → ^?
    C1 (0x80-0x9f) → ^[ plus the 7-bit equivalent (0x9b → ^[[)       \\r\\n and \\r → \\n
    bidi overrides and isolates (U+202A-202E, U+2066-2069) → <U+202E>

`safe_data` applies it to every string inside an event (dataclasses, dicts, lists, tuples), so a
renderer that sanitizes the event it receives cannot forget a field. Rich markup is a separate
matter: untrusted text is only ever put in `Text` objects or printed with markup off.
"""

from __future__ import annotations

import dataclasses
import re

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _visible(match: re.Match) -> str:
    code = ord(match.group())
    if code < 0x20 or code == 0x7f:
        return "^" + chr(code ^ 0x40)
    if code <= 0x9f:
        return "^[" + chr(code - 0x40)          # C1: its 7-bit form, ESC + (code - 0x40)
    return f"<U+{code:04X}>"


def safe(text) -> str:
    """`text` (any object, as str) with every terminal control character made visible."""
    text = text if isinstance(text, str) else str(text)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub(_visible, text)


def safe_line(text, width: int | None = None) -> str:
    """`safe` on one line: line breaks and tabs become spaces; cut to `width` with an ellipsis."""
    flat = safe(text).replace("\n", " ").replace("\t", " ")
    if width is not None and len(flat) > width:
        return flat[:max(0, width - 1)] + "…"
    return flat


def safe_data(value):
    """A copy of `value` with `safe` applied to every string in it (events, dicts, lists, tuples)."""
    if isinstance(value, str):
        return safe(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.replace(value, **{f.name: safe_data(getattr(value, f.name))
                                             for f in dataclasses.fields(value) if f.init})
    if isinstance(value, dict):
        return {safe_data(k): safe_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(safe_data(v) for v in value)
    return value
