"""/login and /logout: a key checked with one request, stored in the user-level settings file (0600)
and used at once; or removed, the session falling back to the demo model.

    LoginMixin.login(ask, emit, key=None)   ask for the key (hidden), check it, store it, use it
    LoginMixin.logout(emit)                 remove it from the user-level file; stop using it

A mixin of access.Access: it uses the session's pins, the user-level file, the consent question
(_ask_consent, _agreed) and _own_write, which are Access's.
"""

from __future__ import annotations

from credentials import key_problem, remove_keys, store_key, stored_key
from events import Ask, Emit, Notice, Question
from session_settings import YES

KEY_CHECK_TIMEOUT = 20.0


class LoginMixin:
    def login(self, ask: Ask | None, emit: Emit, key: str | None = None) -> bool:
        """Ask for a key, check it, store it in the user-level file and use it. True if the session's
        key changed."""
        if key is None and ask is None:
            emit(Notice("/login asks for a key: run it in the interactive REPL (s08 without -p or a pipe)",
                        "warning"))
            return False
        if not self._endpoint_for_login(ask, emit):
            return False
        if key is None:
            key = ask(Question(f"Paste your Anthropic API key; it is checked with one request and stored in "
                               f"{self.user_file} (readable only by you). Enter alone cancels.",
                               "key (hidden): ", secret=True))
        key = (key or "").strip()
        if not key:
            emit(Notice("login cancelled; nothing stored", "info"))
            return False
        problem = key_problem(key)
        if problem:
            emit(Notice(f"that is not a key: {problem}; nothing stored", "error"))
            return False
        if not self._check_and_store(key, ask, emit):
            return False
        self.first_run = False
        emit(Notice(f"key stored in {self.user_file} (mode 0600); /logout removes it", "info"))
        self._warn_if_shadowed(emit)
        was_demo = self.demo_active
        self.pins.login(key, str(self.user_file))
        if self.demo_choice == "on":
            emit(Notice("this session stays on the demo model (--demo or DEMO=on); start s08 without it "
                        "to use the key", "warning"))
        elif was_demo:
            emit(Notice(f"the demo model is off: {self.pins.values['MODEL_ID']} at {self._shown_url()} answers "
                        "from now on (/clear starts a fresh conversation)", "info"))
        self._own_write()
        return True

    def _endpoint_for_login(self, ask: Ask | None, emit: Emit) -> bool:
        """The key /login checks goes only to an endpoint the person agreed to (the trust rule, for the
        key being stored). False: nobody to ask, nothing checked or stored."""
        if not self.pins.needs_consent(self.workspace_env, key_source=str(self.user_file)) or self._agreed():
            return True
        if ask is None:
            emit(Notice(f"not checking a key with {self._shown_url()}, which this folder's .env names and nobody "
                        "agreed to; nothing stored", "error"))
            return False
        self._ask_consent(ask, emit, f"the key you give /login (stored in {self.user_file})", {})
        return True

    def _warn_if_shadowed(self, emit: Emit) -> None:
        source = self.result.sources.get("ANTHROPIC_API_KEY")
        if source and source != str(self.user_file):
            emit(Notice(f"note: ANTHROPIC_API_KEY is also set in {source}, which takes precedence over "
                        f"{self.user_file}: this session uses the new key, the next start the other one",
                        "warning"))

    def logout(self, emit: Emit) -> bool:
        """Remove the stored key; the session stops using it (if it was the one in use)."""
        stored = stored_key(self.user_file)
        try:
            removed = remove_keys(self.user_file)
        except OSError as exc:
            emit(Notice(f"cannot change {self.user_file}: {exc.strerror or exc}", "error"))
            return False
        self._own_write()
        if not removed:
            emit(Notice(f"no key stored in {self.user_file}; nothing to remove", "info"))
            return False
        emit(Notice(f"removed the key from {self.user_file}", "info"))
        if stored and self.pins.values["ANTHROPIC_API_KEY"] != stored:
            emit(Notice("this session keeps the key it started with (from the environment or the workspace's "
                        "settings file); /logout only removes the key /login stored", "warning"))
            return False
        self.pins.logout()
        emit(Notice("this session has no key now" + (": the demo model answers" if self.demo_active else ""),
                    "info"))
        return True

    def _check_and_store(self, key: str, ask: Ask | None, emit: Emit) -> bool:
        """Check the key with one request to the session's endpoint, then store it (0600). True if stored."""
        base_url = self.pins.base_url
        emit(Notice(f"checking the key with {self._shown_url()} …", "info"))
        from llm import check_key
        check = check_key(key, base_url, KEY_CHECK_TIMEOUT, self.secrets())
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
            store_key(self.user_file, key)
        except OSError as exc:
            emit(Notice(f"cannot write {self.user_file}: {exc.strerror or exc}; nothing stored", "error"))
            return False
        return True
