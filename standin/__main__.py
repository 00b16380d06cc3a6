"""Run the stand-in by hand:  python -m standin [--port 8765] [--window 200000] [--script replies.json]

Then, in another terminal:
    ANTHROPIC_BASE_URL=http://127.0.0.1:8765 ANTHROPIC_API_KEY=test python agent.py

Options for a local server's behaviour (issue 32; `--help` lists them all):
    --silent-overflow    a streamed Messages request past --window gets an empty 200, not the 400
                         "prompt is too long" (what a gateway in front of llama.cpp answers)
    --props-window N     serve llama.cpp's GET /props with n_ctx N
    --ollama-window N    serve Ollama's POST /api/show with num_ctx N in its parameters
    --vllm-window N      serve GET /v1/models with max_model_len N (vLLM, SGLang)
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time

from .brain import Brain
from .cache import PromptCache
from .server import DEFAULT_WINDOW, StandIn


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m standin", description="Local Messages API stand-in")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--window", type=int, default=DEFAULT_WINDOW, help="context window in tokens")
    parser.add_argument("--script", help="JSON file with a list of replies to give before the demo brain")
    parser.add_argument("--key", help="accept only this API key, on the admin endpoints (/_standin/) too "
                        "(default: any non-empty key, and the admin endpoints are open to every local process)")
    parser.add_argument("--no-admin", action="store_true", help="serve no /_standin/ admin endpoints")
    parser.add_argument("--delay", type=float, default=0.01, help="seconds between streamed chunks")
    parser.add_argument("--reply-latency", type=float, default=0.0, metavar="SECONDS",
                        help="seconds before each answer starts (a real model's time to first token)")
    parser.add_argument("--summary-latency", type=float, default=0.0, metavar="SECONDS",
                        help="seconds before the answer to a summary request starts (one whose last message "
                             "holds s08's <summary-request> instruction)")
    parser.add_argument("--reread", action="store_true", help="asked 'about <file>', the demo model first reads "
                        "again a file it no longer sees whole (a pointer, or only its name in a summary)")
    parser.add_argument("--lenient", action="store_true", help="skip request validation")
    parser.add_argument("--min-cacheable", type=int, default=1024, help="smallest prompt prefix that is cached")
    parser.add_argument("--plain-only", type=int, default=0, metavar="STATUS", help="/v1/chat/completions "
                        "refuses a system message whose content is a list of parts with this status (422, 400, "
                        "500), as some local servers do")
    parser.add_argument("--silent-overflow", action="store_true", help="answer a streamed Messages request past "
                        "--window with an empty 200 instead of 400 'prompt is too long'")
    parser.add_argument("--props-window", type=int, metavar="N", help="serve llama.cpp's GET /props with n_ctx N")
    parser.add_argument("--ollama-window", type=int, metavar="N", help="serve Ollama's POST /api/show with "
                        "num_ctx N")
    parser.add_argument("--vllm-window", type=int, metavar="N", help="serve GET /v1/models with max_model_len N")
    parser.add_argument("-v", "--verbose", action="store_true", help="log every request")
    args = parser.parse_args(argv)
    script = []
    if args.script:
        with open(args.script, encoding="utf-8") as f:
            script = json.load(f)
    try:
        server = StandIn(script=script, brain=Brain(reread=args.reread), strict=not args.lenient, context_window=args.window,
                         api_key=args.key, port=args.port, delay=args.delay, verbose=args.verbose,
                         cache=PromptCache(min_cacheable=args.min_cacheable), admin=not args.no_admin,
                         plain_only=args.plain_only, reply_latency=args.reply_latency,
                         summary_latency=args.summary_latency,
                         messages_overflow="empty" if args.silent_overflow else "error",
                         props_window=args.props_window, ollama_window=args.ollama_window,
                         vllm_window=args.vllm_window).start()
    except OSError as exc:
        print(f"cannot listen on 127.0.0.1:{args.port}: {exc.strerror}", file=sys.stderr)
        return 1
    print(f"stand-in Messages API on {server.url} (window {args.window:,} tokens, "
          f"{'strict' if not args.lenient else 'lenient'}); Ctrl-C stops it", flush=True)
    key = shlex.quote(args.key) if args.key else "test"       # the key it accepts, when one was given
    print(f"  ANTHROPIC_BASE_URL={server.url} ANTHROPIC_API_KEY={key} python agent.py", flush=True)
    try:
        while True:
            time.sleep(1)
            for rejection in server.rejections:
                print(f"rejected: {rejection}", flush=True)
            server.rejections.clear()
    except KeyboardInterrupt:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
