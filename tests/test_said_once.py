"""Start-up warnings are said once: a settings reload says only warnings not shown before (not the
AGENTS.md size or a bad value again at every reload). And a command -p cannot run (/login: it asks for
a key) fails the run with 2, like an unknown one."""

from __future__ import annotations

import pytest


from support.agents import base_env
from events import Notice


@pytest.mark.scripted
def test_a_reload_says_only_new_warnings(tmp_path, workspace, standin):
    from agent import App
    (workspace / "AGENTS.md").write_text("x" * 56_001)
    (workspace / ".env").write_text("MAX_TOKENS=lots\n")
    events: list = []
    app = App(workspace, environ=base_env(tmp_path, standin))
    app.set_emit(events.append)
    assert any("AGENTS.md is 56,001 bytes" in w for w in app.warnings) and any("MAX_TOKENS" in w for w in app.warnings)
    standin.queue({"text": "a"}, {"text": "b"}, {"text": "c"})
    for n, settings in enumerate(["MAX_TOKENS=lots\nKEEP_RECENT=2\n", "MAX_TOKENS=lots\nKEEP_RECENT=many\n",
                                  "MAX_TOKENS=lots\nKEEP_RECENT=many\nSNIP_MAX_MESSAGES=40\n"]):
        (workspace / ".env").write_text(settings)
        assert app.turn(f"turn {n}").ok
    warnings = [e.text for e in events if isinstance(e, Notice) and e.kind == "warning"]
    assert not any("AGENTS.md" in w or "MAX_TOKENS" in w for w in warnings)        # shown at start already
    assert len([w for w in warnings if "KEEP_RECENT='many'" in w]) == 1             # new: once
    assert sum("settings reloaded" in e.text for e in events if isinstance(e, Notice)) == 3
    app.close()
