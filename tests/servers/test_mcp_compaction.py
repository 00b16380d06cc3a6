"""MCP results go through the same layers as bash's (compaction/): a big one is saved with a preview, old ones
are cleared by micro-compaction (images too) and saved first when the background clears them; the window
never holds more than the layers allow."""

from __future__ import annotations

from compaction.budget import tool_result_budget
from compaction.micro import clear_saving, micro_compact
from support.helpers import call, results, ask, user

IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "aGk="}}


def history() -> list[dict]:
    out = [user("go")]
    for n in range(5):
        c = call("mcp__edge__image")
        out += [ask(c), results((c, [{"type": "text", "text": f"result {n} " + "x" * 500}, IMAGE]))]
    return out


def test_micro_compaction_clears_old_mcp_results_images_included():
    cleared = micro_compact(history(), keep_recent=2, clear_at_least=0)
    contents = [b["content"] for m in cleared if m["role"] == "user" for b in m["content"]
                if isinstance(b, dict) and b.get("type") == "tool_result"]
    assert all(isinstance(c, str) and "mcp__edge__image" in c for c in contents[:3])
    assert all(isinstance(c, list) and c[1] == IMAGE for c in contents[3:])


def test_cleared_results_are_saved_first(tmp_path):
    cleared, count, outputs = clear_saving(history(), tmp_path)
    assert count == 4 and all(o["tool"] == "mcp__edge__image" for o in outputs)    # all the model has seen
    assert all((tmp_path / o["path"]).read_text().startswith("result") for o in outputs)


def test_a_big_mcp_result_is_saved_with_a_preview(tmp_path):
    c = call("mcp__edge__big")
    messages = [user("go"), ask(c), results((c, "y" * 1_000_000))]
    out = tool_result_budget(messages, 30_000, workspace=tmp_path)
    kept = out[-1]["content"][0]["content"]
    assert kept.startswith("<persisted-output>") and len(kept) < 5_000
