"""/login and /logout: a key checked with one request, stored in the user-level settings file (0600)
and used at once; or removed, the session falling back to the demo model.

    login(access, ask, emit, key=None)   ask for the key (hidden), check it, store it, use it
    logout(access, emit)                 remove it from the user-level file; stop using it

Both work through Access's public face: its pins, the user-level file, the consent question
(ask_consent, endpoint_agreed) and own_write.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from access.credentials import key_problem, remove_keys, store_key, stored_key
from events import Ask, Emit, Notice, Question
from access.pins import YES

if TYPE_CHECKING:
    from access.model_access import Access

KEY_CHECK_TIMEOUT = 20.0


def login(access: Access, ask: Ask | None, emit: Emit, key: str | None = None) -> bool:
    """Ask for a key, check it, store it in the user-level file and use it. True if the session's
    key changed."""
    if key is None and ask is None:
        emit(Notice("/login asks for a key: run it in the interactive REPL (s08 without -p or a pipe)",
                    "warning"))
        return False
    if not _endpoint_for_login(access, ask, emit):
        return False
    if key is None:
        key = ask(Question(f"Paste your Anthropic API key; it is checked with one request and stored in "
                           f"{access.user_file} (readable only by you). Enter alone cancels.",
                           "key (hidden): ", secret=True))
    key = (key or "").strip()
    if not key:
        emit(Notice("login cancelled; nothing stored", "info"))
        return False
    problem = key_problem(key)
    if problem:
        emit(Notice(f"that is not a key: {problem}; nothing stored", "error"))
        return False
    if not _check_and_store(access, key, ask, emit):
        return False
    access.first_run = False
    emit(Notice(f"key stored in {access.user_file} (mode 0600); /logout removes it", "info"))
    _warn_if_shadowed(access, emit)
    was_demo = access.demo_active
    access.pins.login(key, str(access.user_file))
    if access.demo_choice == "on":
        emit(Notice("this session stays on the demo model (--demo or DEMO=on); start s08 without it "
                    "to use the key", "warning"))
    elif was_demo:
        emit(Notice(f"the demo model is off: {access.pins.values['MODEL_ID']} at {access.shown_url()} answers "
                    "from now on (/clear starts a fresh conversation)", "info"))
    access.own_write()
    return True

def _endpoint_for_login(access: Access, ask: Ask | None, emit: Emit) -> bool:
    """The key /login checks goes only to an endpoint the person agreed to (the trust rule, for the
    key being stored). False: nobody to ask, nothing checked or stored."""
    if not access.pins.needs_consent(access.workspace_env, key_source=str(access.user_file)) or access.endpoint_agreed():
        return True
    if ask is None:
        emit(Notice(f"not checking a key with {access.shown_url()}, which this folder's .env names and nobody "
                    "agreed to; nothing stored", "error"))
        return False
    access.ask_consent(ask, emit, f"the key you give /login (stored in {access.user_file})", {})
    return True

def _warn_if_shadowed(access: Access, emit: Emit) -> None:
    source = access.result.sources.get("ANTHROPIC_API_KEY")
    if source and source != str(access.user_file):
        emit(Notice(f"note: ANTHROPIC_API_KEY is also set in {source}, which takes precedence over "
                    f"{access.user_file}: this session uses the new key, the next start the other one",
                    "warning"))

def logout(access: Access, emit: Emit) -> bool:
    """Remove the stored key; the session stops using it (if it was the one in use)."""
    stored = stored_key(access.user_file)
    try:
        removed = remove_keys(access.user_file)
    except OSError as exc:
        emit(Notice(f"cannot change {access.user_file}: {exc.strerror or exc}", "error"))
        return False
    access.own_write()
    if not removed:
        emit(Notice(f"no key stored in {access.user_file}; nothing to remove", "info"))
        return False
    emit(Notice(f"removed the key from {access.user_file}", "info"))
    if stored and access.pins.values["ANTHROPIC_API_KEY"] != stored:
        emit(Notice("this session keeps the key it started with (from the environment or the workspace's "
                    "settings file); /logout only removes the key /login stored", "warning"))
        return False
    access.pins.logout()
    emit(Notice("this session has no key now" + (": the demo model answers" if access.demo_active else ""),
                "info"))
    return True

def _check_and_store(access: Access, key: str, ask: Ask | None, emit: Emit) -> bool:
    """Check the key with one request to the session's endpoint, then store it (0600). True if stored."""
    base_url = access.pins.base_url
    emit(Notice(f"checking the key with {access.shown_url()} …", "info"))
    from llm import check_key
    check = check_key(key, base_url, KEY_CHECK_TIMEOUT, access.secrets())
    if check.refused:
        emit(Notice(f"{check.reason}; nothing stored. Check the key (console.anthropic.com) and "
                    "ANTHROPIC_BASE_URL.", "error"))
        return False
    if not check.ok:
        answer = ask(Question(f"Could not check the key: {check.reason}. Store it anyway?")) if ask else None
        if (answer or "").strip().lower() not in YES:
            emit(Notice("nothing stored", "info"))
            return False
    try:
        store_key(access.user_file, key)
    except OSError as exc:
        emit(Notice(f"cannot write {access.user_file}: {exc.strerror or exc}; nothing stored", "error"))
        return False
    return True
