"""MCP servers (the Model Context Protocol), as a client on the official SDK (`mcp`): one job per module.

    config.py       the entries people keep (Claude Code's mcp.json format): read, ${VAR}, add, remove
    consent.py      a project's servers (.mcp.json) start only after the person agreed to that exact entry
    connection.py   one server's process or HTTP session and its calls (timeouts, cancellation, restarts)
    bridge.py       names (mcp__SERVER__TOOL), cleaned schemas, results as blocks
    deferral.py     the schemas a request carries, within MCP_SCHEMA_BUDGET; mcp_load_tools
    manager.py      all servers of a session: start, the tools list, calls, /mcp's report, the end

Named for its job: the SDK's own import name is `mcp`.
"""
