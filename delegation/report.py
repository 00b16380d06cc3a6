"""The one message a sub-agent sends back: its report, bounded, and a trailer of what it cost.

    report(text, limit, transcript) -> the report cut to `limit` tokens (TASK_REPORT_MAX), with the path
                                       of the sub-agent's whole transcript when it was cut
    trailer(child)                  -> "[task 2 explore: done · read a.py, b.py · wrote — · 12,340 tokens ·
                                       $0.0123 · 8.4 s · transcript .transcripts/…-004-task.jsonl]"
"""

from __future__ import annotations

from compaction.tokens import estimate_text

FILES_SHOWN = 20


def report(text: str, limit: int, transcript: str) -> str:
    """`text` within `limit` tokens; a cut one ends with where the rest is."""
    text = text.strip() or "(the sub-agent gave no report)"
    if estimate_text(text) <= limit:
        return text
    low, high = 0, len(text)
    while low < high:                         # the longest head within the limit
        mid = (low + high + 1) // 2
        if estimate_text(text[:mid]) <= limit:
            low = mid
        else:
            high = mid - 1
    return (text[:low].rstrip() + f"\n[… the report was cut at TASK_REPORT_MAX={limit:,} tokens; the sub-agent's "
            f"whole work and answer are in {transcript} (read_file it for the rest)]")


def _files(paths: list[str]) -> str:
    if not paths:
        return "—"
    shown = ", ".join(paths[:FILES_SHOWN])
    return shown + (f" (+{len(paths) - FILES_SHOWN} more)" if len(paths) > FILES_SHOWN else "")


def trailer(number: int, agent: str, status: str, read: list[str], written: list[str], tokens: int,
            cost: float | None, seconds: float, transcript: str) -> str:
    money = f"${cost:.4f}" if cost is not None else "cost unknown"
    return (f"[task {number} {agent}: {status} · read {_files(read)} · wrote {_files(written)} · {tokens:,} tokens · "
            f"{money} · {seconds:.1f} s · transcript {transcript}]")
