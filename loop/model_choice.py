"""The person's choice of model: --model and /model [NAME]. access/pins.py keeps it (a settings file cannot
change it under them); it is logged ({"t": "model"}) so a resume keeps it; the window and prices follow it.

    set_model(app, name)      the choice, said on screen with the model's window and price
    pick_model(app, arg)      /model [NAME]: the list of models s08 knows, or the name given
    model_records(app)        what a snapshot of the session log writes of the choice
"""

from __future__ import annotations

import re

from access.pins import fixed_values
from events import Notice, Question
from session.costs import known_models, price_of, window_of

MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}")


def set_model(app, name: str, quiet: bool = False, log: bool = True) -> bool:
    """The person's own choice of model (False when `name` is not a model name); `log`: record it (not when a
    resume only restores what its log already says)."""
    name = name.strip()
    if not MODEL_NAME.fullmatch(name):
        app.emit(Notice(f"not a model name: {name[:80]!r} (letters, digits and . _ - : / @ +)", "warning"))
        return False
    access = app.access
    access.pins.choose(name, fixed_values(access.result.settings)["MODEL_ID"])
    app.load()                             # a new client and budgets for that model
    if log:
        _note_model(app, name)
    if quiet:
        return True
    window, price = window_of(name), price_of(name)
    said = f"[model: {name}"
    said += f" · context window {app.agent.compactor.window.tokens:,} tokens"
    said += f" · ${price[0]:g} / ${price[1]:g} per million tokens in / out]" if price else \
        " · price unknown (MODEL_PRICE sets one)]"
    if window is None:
        said += " — a model s08 does not know: check the name if the endpoint refuses it"
    if app.demo:
        said += " — the demo model answers until a key is in use (/login)"
    app.emit(Notice(said, "info"))
    return True


def _note_model(app, name: str) -> None:
    """The choice goes into the session log: in the header while nothing is written yet (a start with
    --model leaves no session file behind), else as a record."""
    log = app.messages.log
    if log is None:
        return
    if log.fd is None:
        log.header["model_choice"] = name
    else:
        app.messages.note({"t": "model", "id": name})


def model_records(app) -> list[dict]:
    chosen = app.access.pins.chosen
    return [{"t": "model", "id": chosen}] if chosen else []


def pick_model(app, arg: str):
    if arg:
        set_model(app, arg)
        return None
    current = app.access.pins.values["MODEL_ID"] or app.settings.model_id     # yours, even while the demo answers
    models = known_models()
    lines = ["Models s08 knows (price: USD per million tokens in / out; any other name works too: "
             "/model NAME):"]
    for n, name in enumerate(models, 1):
        price, window = price_of(name), window_of(name)
        mark = "  ← now" if name == current else ""
        lines.append(f"  {n:>2}  {name:<20} window {window or 0:,} · ${price[0]:g} / ${price[1]:g}{mark}"
                     if price else f"  {n:>2}  {name}{mark}")
    if app.ask is None:
        demo = " (the demo model answers until a key is in use)" if app.demo else ""
        app.emit(Notice("\n".join(lines + [f"now: {current}{demo}"]), "info"))
        return None
    answer = (app.ask(Question("\n".join(lines), f"model [1-{len(models)} or a name, Enter keeps {current}]: "))
              or "").strip()
    if not answer:
        return None
    if answer.isdigit():
        if not 1 <= int(answer) <= len(models):
            app.emit(Notice("not a number from the list", "warning"))
            return None
        answer = models[int(answer) - 1]
    set_model(app, answer)
    return None
