"""Everything a person sees or types; no other module imports rich or prompt_toolkit.

    render.py   events → screen (Renderer) or stderr (QuietRenderer), and the reports they show
    repl.py     the interactive `s08 >>` loop, the banner, resuming and picking a session
    onboarding.py   the demo model on screen, the first-run key question, the REPL's `ask`
"""

from .onboarding import demo_notice
from .render import QuietRenderer, Renderer, safe, seconds, summarize_input, summarize_output
from .repl import PROMPT, pick_session, print_help, run_repl

__all__ = ["demo_notice", "QuietRenderer", "Renderer", "PROMPT", "pick_session", "print_help", "run_repl", "safe",
           "seconds",
           "summarize_input", "summarize_output"]
