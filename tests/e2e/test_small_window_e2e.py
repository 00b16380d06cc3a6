"""Issue 32's stuck session, reproduced with the stand-in over HTTP: a 4,096-token window served as
llama.cpp's `llama-server` serves it (standin/local_window.py: past the window, silence — the empty
answer a gateway passes on — or llama.cpp's 400 wording), a summarizer whose summary is not smaller
than the history (Brain(summary="restate")), and one session on pipes with default settings: three
parts of a build log (~1,200 tokens each), then short questions.

Every message must get its answer; after the first overflow — s08 with default settings cannot
know the window before it — no request may overflow again; and once the window has shown itself (that
overflow, or an answer it cut short) every request leaves room for the answer: the window cuts none. On main before the fix the session got stuck: the summary was "not smaller than the
history", the fallback had "nothing more to cut without the model", and every later question was
answered with silence.
"""

from __future__ import annotations

import pytest

from standin import Brain
from standin.local_window import LocalWindow
from support.agents import base_env, run_agent
from support.build_log import build_log_part

N_CTX = 4_096
QUESTIONS = ["what failed?", "which module warned first?", "how many warnings?", "ok, and the last part?",
             "thanks, anything else?"]


@pytest.mark.parametrize("overflow, part_tokens", [("empty", 1_200), ("empty", 1_300), ("error", 1_250)])
def test_a_small_window_with_a_summary_not_smaller_never_gets_stuck(tmp_path, workspace, standin, overflow,
                                                                    part_tokens):
    server = standin.brain = LocalWindow(N_CTX, Brain(summary="restate"), overflow=overflow)
    parts = [build_log_part(n, part_tokens, sep=" ; ") for n in (1, 2, 3)]
    typed = parts + QUESTIONS
    done = run_agent(input="".join(line + "\n" for line in typed), env=base_env(tmp_path, standin), cwd=workspace,
                     capture_output=True, text=True, timeout=300)

    answers = [a for a in done.stdout.split("You said: ") if a.strip()]
    report = (f"exit {done.returncode}; every request (prompt tokens, what the server did): {server.seen}\n"
              f"stderr: {done.stderr[-3000:]}")
    assert done.returncode == 0, report
    assert len(answers) == len(typed), report
    assert len(server.overflows) <= 1, report
    met = next((i for i, (_size, what) in enumerate(server.seen) if what != "answered"), len(server.seen))
    assert "cut" not in [what for _size, what in server.seen[met + 1:]], report
    # an answer the window cut before it showed itself is the one that may be short of its words
    short = [text[:40] for text, answer in zip(typed, answers) if not answer.startswith(text[:100])]
    early_cut = met < len(server.seen) and server.seen[met][1] == "cut"
    assert len(short) <= early_cut, f"{report}\nshort answers: {short}\nanswers: {[a[:120] for a in answers]}"
