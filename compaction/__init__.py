"""The context-compaction pipeline (tool_result_budget → snip_compact → micro_compact → compact_history)."""
