"""The schema budget (servers/deferral.py): full schemas within it, names and one line past it, loaded schemas
appended at the end in load order (the cached prefix before them unchanged), each load that adds a tool
counted as one cache rewrite."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from servers.bridge import BridgedTool
from servers.deferral import LOAD_TOOL, Deferral, cost

SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}}


def tools(n: int) -> list[BridgedTool]:
    return [BridgedTool(f"mcp__s__t{i}", "s", f"t{i}", f"Tool {i} finds {'apples' if i % 2 else 'pears'}.\nmore", SCHEMA)
            for i in range(n)]


def test_within_the_budget_every_schema_is_sent():
    ts = tools(3)
    assert [s["name"] for s in Deferral().schemas(ts, cost(ts))] == [t.name for t in ts]


def test_past_the_budget_names_and_one_line_go_and_loads_append():
    ts, d = tools(60), Deferral()
    budget = cost(ts) // 4
    first = d.schemas(ts, budget)
    assert [s["name"] for s in first] == [LOAD_TOOL]
    assert "mcp__s__t59: Tool 59 finds apples." in first[0]["description"] and "more" not in first[0]["description"]
    new, unknown = d.load(ts, ["mcp__s__t5", "mcp__x__y"], None)
    assert new == ["mcp__s__t5"] and unknown == ["mcp__x__y"] and d.rewrites == 1
    second = d.schemas(ts, budget)
    assert second[0] == first[0] and [s["name"] for s in second] == [LOAD_TOOL, "mcp__s__t5"]
    assert d.load(ts, ["mcp__s__t5"], None) == ([], []) and d.rewrites == 1          # nothing new: no rewrite
    new, _ = d.load(ts, None, "pears")
    assert len(new) == 8 and all(int(n[len("mcp__s__t"):]) % 2 == 0 for n in new) and d.rewrites == 2
    third = d.schemas(ts, budget)
    assert third[:2] == second and cost([t for t in ts if t.name in d.loaded]) > 0


@given(st.lists(st.one_of(st.lists(st.integers(0, 70), max_size=5).map(lambda ns: ("names", ns)),
                          st.sampled_from(["apples", "pears", "Tool 3", "zzz", ""]).map(lambda q: ("query", q))),
                max_size=12))
def test_loads_only_ever_append_and_each_one_that_adds_is_one_rewrite(loads):
    ts, d = tools(60), Deferral()
    budget = cost(ts) // 4
    before = d.schemas(ts, budget)
    for kind, value in loads:
        names = [f"mcp__s__t{n}" for n in value] if kind == "names" else None
        rewrites = d.rewrites
        new, _ = d.load(ts, names, value if kind == "query" else None)
        after = d.schemas(ts, budget)
        assert after[:len(before)] == before                   # the cached prefix is never changed
        assert [s["name"] for s in after[len(before):]] == new
        assert d.rewrites == rewrites + (1 if new else 0)
        before = after
