"""An MCP server of the tests' own, on the SDK's MCPServer (FastMCP in SDK 1.x), for the edge cases:

    python tests/support/mcp_edge_server.py [MODE]

    (no mode)   echo, big (1 MB by default), fail (an error), slow (until cancelled: writes
                $EDGE_MARKS/cancelled then), crash (the process exits mid-call), image (a PNG), env (one
                variable of its environment, to check what s08 hands it), structured (structured content only)
    many        the above and tool_000 … tool_079 with long descriptions (for the schema budget; $EDGE_TOOLS
                of them when set)
    hostile     tools whose names, descriptions and schemas are attacks: control characters, ANSI,
                huge sizes, names the API refuses, a name that splits like mcp__a__b
    flood       writes 5 MB to stderr before it serves, and more on every call
    junk        writes non-JSON lines to stdout before it serves
    silent      never answers initialize (reads stdin and says nothing)
    http PORT   the default tools over streamable HTTP on 127.0.0.1:PORT (/mcp)

Runs with the interpreter of the s08 under test (the SDK is in its venv); stderr is what s08 keeps.
"""

import asyncio
import base64
import os
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.utilities.types import Image

PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")


def mark(name: str, text: str = "") -> None:
    folder = os.environ.get("EDGE_MARKS")
    if folder:
        Path(folder, name).write_text(text)


def build(mode: str):
    server = MCPServer("edge")

    @server.tool(description="Echo the text back.")
    def echo(text: str) -> str:
        if mode == "flood":
            sys.stderr.write("x" * 100_000 + "\n")
        return text

    @server.tool(description="Return `size` characters of text (1 MB by default).")
    def big(size: int = 1_000_000) -> str:
        line = "0123456789abcdefghijklmnopqrstuvwxyz" * 2 + "\n"
        return (line * (size // len(line) + 1))[:size]

    @server.tool(description="Always fails.")
    def fail() -> str:
        raise ValueError("EDGE-FAILURE: the tool failed on purpose")

    @server.tool(description="Wait until cancelled (or `seconds`).")
    async def slow(seconds: float = 3600) -> str:
        mark("started")
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            mark("cancelled")
            raise
        return "slept"

    @server.tool(description="Exit the server process in the middle of the call.")
    def crash() -> str:
        mark("crashed", str(os.getpid()))
        os._exit(3)

    @server.tool(description="A 1x1 PNG image.")
    def image() -> Image:
        return Image(data=PNG, format="png")

    @server.tool(description="One variable of this server's environment.")
    def env(name: str) -> str:
        return os.environ.get(name, "(unset)")

    if mode == "many":
        for i in range(int(os.environ.get("EDGE_TOOLS", "80"))):
            def numbered(query: str, limit: int = 10, i: int = i) -> str:
                return f"tool {i}: {query} ({limit})"
            server.add_tool(numbered, name=f"tool_{i:03d}",
                            description=f"Tool number {i} of the many: looks up records of kind {i} in the "
                                        "catalogue and returns them as lines; filters by query, at most limit. " * 3)
    if mode == "hostile":
        def plain(x: str = "") -> str:
            return "HOSTILE-RAN"
        server.add_tool(plain, name="ansi", description="\x1b[2J\x1b[31mCLEARED\x1b]0;title\x07 bell\x07 nul-ish\x01")
        server.add_tool(plain, name="huge_description", description="D" * 200_000)
        server.add_tool(plain, name="bad name\x1b[31m", description="a name with a space and an escape")
        server.add_tool(plain, name="b__c", description="splits like mcp__edge__b__c")
        server.add_tool(plain, name="n" * 80, description="a name longer than the API takes")
    return server


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    mark("pid", str(os.getpid()))
    if mode == "silent":
        while sys.stdin.buffer.read(1):
            pass
        return
    if mode == "flood":
        for _ in range(50):
            sys.stderr.write("E" * 100_000 + "\n")
        sys.stderr.flush()
    if mode == "junk":
        for i in range(1000):
            sys.stdout.write(f"\x1b[31mjunk line {i} not json\n")
        sys.stdout.flush()
    server = build(mode)
    if mode == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
        return
    if mode == "hostile":       # a schema the API would refuse, and one too big: edited after registration
        tools = server._tool_manager._tools if hasattr(server, "_tool_manager") else {}
        for name, tool in tools.items():
            if name == "ansi":
                tool.parameters = {"type": "object", "properties": {"x\x1b[0m": {"type": "string",
                                                                              "description": "\x1b[5mblink"}}}
    server.run()


if __name__ == "__main__":
    main()
