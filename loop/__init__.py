"""The turn: the agent loop (agent_loop), one round of tool calls (tool_round), the prompt-cache
policy (prompt_cache), the project instructions (instructions) and inputs too big for the context
(big_input)."""
