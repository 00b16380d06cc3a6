"""What each test worker makes once, rather than once per worker, per test or per agent it starts.

- `compile_for_workers` (in the xdist controller, before the workers start): each worker imports
  s08's modules and every test module; on a clean clone (CI), or wherever PYTHONDONTWRITEBYTECODE is
  set, each of them compiled all of that — and pytest's assertion-rewritten test modules — again, at
  the moment the workers compete for the cores. This writes the bytecode caches first (Python's own
  for the sources; pytest's rewritten ones, in its format and place, for the test modules and for
  the plugins it rewrites too: hypothesis, anyio and xdist, a CPU-second in every process), so the
  workers only read them. Only `__pycache__/` folders are written (in the repository ignored by
  git); pytest's rewriting functions are internal, and if they change the workers compile as before.
- `scan_for_hypothesis` (in the xdist controller, in a process of its own while the workers start):
  at its first example, hypothesis reads every local module's source for constants to try, and
  builds its Unicode tables (the categories, and what UTF-8 can encode, for st.text), and caches
  them under .hypothesis/; on a clean clone (CI) each worker did that itself, about four
  CPU-seconds each. Started first, at a low priority, the process fills the cache while the
  workers collect and wait; what it has not written yet a worker still computes, as before.
  Hypothesis internals again: if they change, the process fails quietly and nothing else changes.
- `warm_up` (in a worker, before it forks its first agent; forked_agent.py): the imports a run of
  agent.py makes after its start, so each forked child starts with them, as it does with the SDK.
- `freeze_what_is_loaded` (in a worker, after collecting and after the warm-up): the modules, classes
  and test items a worker holds live until it ends, yet each full garbage collection walked all of
  them again (a few tenths of a CPU-second per worker); `gc.freeze` sets them aside, so collections walk only
  what tests make. Forked agents inherit it, as a forking server would want (copy-on-write).
- `share_tls_context` (in a worker): every SDK client builds a TLS context and loads the CA bundle
  into it (about 50 ms), though the stand-in speaks plain HTTP and no test makes a TLS connection;
  a worker builds about 150 clients and each forked agent one more. One context per worker serves
  them all. The SDK's HTTP stack is not public API: where it differs, nothing is shared.
"""

from __future__ import annotations

import compileall
import functools
import gc
import io
import os
import re
import subprocess
import sys
from types import SimpleNamespace
from pathlib import Path

MARKDOWN_SAMPLE = "# t\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```python\nprint('x')\n```\n\n```bash\nls\n```\n"
SKIP = re.compile(r"[/\\](\.venv|venv|build|\.git|\.hypothesis|\.pytest_cache)[/\\]")
HYPOTHESIS_SCAN = """
import sys, types
from hypothesis.internal.charmap import charmap, intervals_from_codec
from hypothesis.internal.constants_ast import constants_from_module
charmap()
intervals_from_codec("utf-8")          # st.text()'s alphabet
for path in sys.argv[1:]:
    module = types.ModuleType("scanned")
    module.__file__ = path
    constants_from_module(module)
"""
TEST_MODULE = re.compile(r"(^|[/\\])(test_[^/\\]*|conftest)\.py$")         # pytest rewrites these itself


def compile_for_workers(config, root: Path, tests: Path) -> None:
    compileall.compile_dir(root, quiet=1, rx=re.compile(f"{SKIP.pattern}|{TEST_MODULE.pattern}"), workers=1)
    try:
        from _pytest.assertion import rewrite
        from _pytest.assertion import assertstate_key
        state = config.stash[assertstate_key]
        plugins = [Path(module.__file__) for name, module in list(sys.modules.items())       # hypothesis, anyio…
                   if str(getattr(module, "__file__", None)).endswith(".py")
                   and state.hook._is_marked_for_rewrite(name, state)]
    except Exception:                # noqa: BLE001 — internal API changed: the workers compile, as before
        return
    tests_modules = [path for path in sorted(tests.rglob("*.py")) if TEST_MODULE.search(str(path))
                     and not SKIP.search(str(path))]
    for source in tests_modules + plugins:
        try:
            cache = rewrite.get_cache_dir(source)
            pyc = cache / (source.name[:-3] + rewrite.PYC_TAIL)
            if rewrite._read_pyc(source, pyc) is None and rewrite.try_makedirs(cache):
                stamp, code = rewrite._rewrite_test(source, config)
                rewrite._write_pyc(SimpleNamespace(trace=lambda *_: None), code, stamp, pyc)   # state: its trace
        except Exception:            # noqa: BLE001 — as above
            return


def scan_for_hypothesis(root: Path) -> subprocess.Popen | None:
    """Start the scan (the caller waits for it at the end of the session)."""
    sources = []
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = [name for name in subfolders if name != "tests" and not SKIP.search(f"/{name}/")]
        sources += [os.path.join(folder, name) for name in files if name.endswith(".py")]
    try:
        return subprocess.Popen([sys.executable, "-c", HYPOTHESIS_SCAN, *sources], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=_yield_the_cores)
    except OSError:
        return None


def _yield_the_cores() -> None:
    os.nice(10)          # the workers' collection first; the scan takes the cores while pty tests wait


@functools.cache
def warm_up() -> None:
    """Import what a run of agent.py imports after its start (cli, app, ui, the SDK's HTTP stack,
    Markdown and the highlighters); without it every fork imported about 260 modules again (half a
    CPU-second)."""
    share_tls_context()
    import anthropic
    import app  # noqa: F401
    import cli  # noqa: F401
    from access import keyguard as keyguard  # noqa: F401
    import ui.quiet  # noqa: F401
    import ui.repl  # noqa: F401
    from rich.console import Console
    from rich.markdown import Markdown
    anthropic.Anthropic(api_key="warm-up", base_url="http://127.0.0.1:9").close()
    Console(file=io.StringIO(), force_terminal=True, width=60).print(Markdown(MARKDOWN_SAMPLE))
    freeze_what_is_loaded()


def freeze_what_is_loaded() -> None:
    gc.freeze()


def share_tls_context() -> None:
    try:
        import httpcore2
    except ImportError:
        return
    make = getattr(httpcore2, "default_ssl_context", None)
    if make is not None and not hasattr(make, "cache_info"):        # not shared yet
        httpcore2.default_ssl_context = functools.cache(make)
