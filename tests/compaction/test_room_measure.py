"""What must fit the window is measured in the endpoint's count once: the part a usage covered is
already its count; only what s08 estimates is scaled by how much the endpoint counts over the estimate
(compaction/room.py, `Compactor.fit`). Scaling the covered part again cut a history that fitted — at
every call (bench/cost.py's pipeline CPU went from 0.04 ms to 2 ms a call, each call writing files)."""

from __future__ import annotations

from compaction import Compactor
from config import Settings
from events import Compaction
from llm.usage import Usage
from session.log import LoggedHistory


def test_a_history_the_endpoint_counted_under_the_window_is_not_cut_for_its_scale(tmp_path):
    events: list = []
    compactor = Compactor(Settings(context_window=20_000, max_tokens=1_000), tmp_path, lambda request: ("", None),
                          emit=events.append)
    messages = LoggedHistory([{"role": "user", "content": "read the log"}])
    for n in range(15):
        messages.append({"role": "assistant", "content": [{"type": "tool_use", "id": f"toolu_{n:04d}",
                                                           "name": "read_file", "input": {"path": f"f{n}.log"}}]})
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{n:04d}",
                                                      "content": f"line {n}: 0x{n * 7919:08x} ok\n" * 60}]})
    messages[:] = compactor.prepare(messages)
    estimate = compactor.meter.estimate(messages)
    reported = int(estimate * 1.8)                   # a log of numbers counts far higher at the endpoint
    assert reported < compactor.fit_target < int(reported * 1.8)
    compactor.observe(messages, Usage(input=reported, output=50).to_api())
    assert compactor.endpoint.usage_scale > 1.5
    messages.append({"role": "assistant", "content": [{"type": "text", "text": "Read them."}]})
    messages.append({"role": "user", "content": "what failed?"})
    out = compactor.prepare(messages)
    assert not [e for e in events if isinstance(e, Compaction) and "to fit the window" in e.message]
    assert len(out) == len(messages)
    assert compactor.meter.measure(out, compactor.system, compactor.tools, compactor.endpoint.usage_scale) \
        <= compactor.fit_target
