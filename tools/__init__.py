"""The agent's tools. Importing this package registers every tool in `REGISTRY`.

    bash        tools/bash.py      run a command (process group, timeout, bounded output)
    read_file   tools/files.py     text files, in pieces
    write_file  tools/files.py     atomic create/overwrite
    edit_file   tools/files.py     replace one exact occurrence
    compact     tools/compact.py   ask for the history to be summarized
    skill       tools/skill.py     load a skill's instructions (offered only when there are skills)
    task        tools/task.py      hand work to a sub-agent (delegation/)
"""

from . import bash, files, compact, skill, task  # noqa: F401  (registers the tools, in this order)
from .registry import REGISTRY, ToolContext, ToolResult, run_tool, tool, tool_schemas
from .workspace import ToolError, resolve_in_workspace

__all__ = ["REGISTRY", "ToolContext", "ToolResult", "ToolError", "run_tool", "tool", "tool_schemas",
           "resolve_in_workspace"]
