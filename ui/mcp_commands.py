"""`s08 mcp …`: the MCP servers s08 starts, kept in Claude Code's format (servers/config.py). No model, no key.

    s08 mcp add NAME -- COMMAND [ARGS…]         a stdio server   (-e KEY=VALUE adds to its environment)
    s08 mcp add --transport http NAME URL       an HTTP server   (-H "Name: value" adds a header)
    s08 mcp list                                 the servers of both files, as written (no ${VAR} expanded)
    s08 mcp remove NAME

The person's ~/.config/s08/mcp.json by default; --project writes the workspace's .mcp.json (shared with
the repository: each person agrees to its servers before they start). Exit status: 0, 1 when the file
cannot be read or written or the server is not there, 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from servers import config as server_config


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=f"{prog} mcp", description="the MCP servers s08 starts (docs/mcp.md)")
    sub = parser.add_subparsers(dest="command", required=True)
    add = sub.add_parser("add", help="add a server: NAME -- COMMAND ARGS…, or --transport http NAME URL")
    add.add_argument("name")
    add.add_argument("target", nargs=argparse.REMAINDER, help="-- COMMAND ARGS… (stdio) or URL (http)")
    add.add_argument("--transport", "-t", choices=("stdio", "http"), default="stdio")
    add.add_argument("--env", "-e", action="append", default=[], metavar="KEY=VALUE")
    add.add_argument("--header", "-H", action="append", default=[], metavar="'NAME: VALUE'")
    for name, text in (("list", "list the servers"), ("remove", "remove a server")):
        p = sub.add_parser(name, help=text)
        if name == "remove":
            p.add_argument("name")
    for p in sub.choices.values():
        p.add_argument("--project", action="store_true", help="the workspace's .mcp.json, not your own file")
        p.add_argument("-w", "--workspace", type=Path, default=None, help="the workspace (default: here)")
    return parser


def _entry(args) -> dict:
    target = args.target[1:] if args.target[:1] == ["--"] else args.target
    if not target:
        raise ValueError("say what to start: NAME -- COMMAND ARGS…, or --transport http NAME URL")
    if args.transport == "http":
        words, header_list = [], list(args.header)
        while target:                           # -H after the URL lands among the remaining words
            word = target.pop(0)
            if word in ("-H", "--header") and target:
                header_list.append(target.pop(0))
            else:
                words.append(word)
        if len(words) != 1:
            raise ValueError("an http server takes one URL")
        target, headers = words, {}
        for h in header_list:
            key, sep, value = h.partition(":")
            if not sep or not key.strip():
                raise ValueError(f"a header is 'Name: value', not {h!r}")
            headers[key.strip()] = value.strip()
        return {"type": "http", "url": target[0], **({"headers": headers} if headers else {})}
    env = {}
    for pair in args.env:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"-e takes KEY=VALUE, not {pair!r}")
        env[key] = value
    return {"command": target[0], "args": target[1:], **({"env": env} if env else {})}


def main(argv: list[str], prog: str) -> int:
    from ui.quiet import say_err, say_out
    args = _parser(prog).parse_args(argv[1:])
    workspace = (args.workspace or Path(os.getcwd())).expanduser().resolve()
    path = server_config.project_file(workspace) if args.project else server_config.user_file(os.environ)
    try:
        if args.command == "add":
            server_config.add(path, args.name, _entry(args), os.environ)
            say_out(f"added MCP server {args.name} to {path}")
            return 0
        if args.command == "remove":
            if not server_config.remove(path, args.name):
                say_err(f"no MCP server {args.name} in {path}")
                return 1
            say_out(f"removed MCP server {args.name} from {path}")
            return 0
    except ValueError as exc:
        say_err(str(exc))
        return 2 if args.command == "add" else 1
    except OSError as exc:
        say_err(f"{path}: {exc.strerror or exc}")
        return 1
    from servers.bridge import clean
    loaded = server_config.load(workspace, os.environ)
    files = {"user": server_config.user_file(os.environ), "project": server_config.project_file(workspace)}
    if not loaded.servers:
        say_out(f"no MCP servers in {files['user']} or {files['project']}")
    for e in loaded.servers:
        say_out(f"{clean(e.name, 40)}  {e.scope}  {clean(e.shown(), 200)}")
    for line in loaded.problems:
        say_err(clean(line, 300))
    return 0
