"""Which model a session talks to, and with which key: settings files, the demo model, /login, /logout.

    Access(workspace, env_file, environ, demo)   reads the settings; pins the endpoint, key and model
      .settings()      the settings to build the client from (the demo's, when it answers)
      .reload(ask, emit)   a settings file changed: re-read it; a changed endpoint, key or model
                       is used only if the person agrees (ask), else ignored and said once
      .login(ask, emit, key=None)   ask for a key, check it with one request, store it (0600), use it
      .logout(emit)    remove it from the user-level file; the session falls back to the demo
      .sources         where each value in use came from (the key's: for a message after a 401)

The demo model (demo.py) answers when no key is configured anywhere and DEMO
is `auto`, or always with `--demo` / DEMO=on; `--no-demo` / DEMO=off turns it
off. The choice is made when the session starts; a key that arrives later
(/login, or a settings file the person agrees to) ends the demo.
"""

from __future__ import annotations

import os
from pathlib import Path

from config import DEFAULT_BASE_URL, load_settings, user_settings_file
from credentials import key_problem, mark_first_run_done, remove_keys, store_key, stored_key
from demo import DemoModel
from events import Ask, Emit, Notice, Question
from session_settings import YES, Pins, describe

KEY_CHECK_TIMEOUT = 20.0


def _stamp(path: Path):
    try:
        st = path.stat()
        return st.st_mtime_ns, st.st_size, st.st_ino
    except OSError:
        return None


class Access:
    def __init__(self, workspace: Path, env_file: Path | None = None, environ: dict | None = None,
                 demo: str | None = None):
        self.workspace, self.env_file, self.environ = workspace, env_file, environ
        self.env_path = env_file or workspace / ".env"
        self.user_file = user_settings_file(os.environ if environ is None else environ)
        self.first_run = not self.user_file.exists()
        self.result = self._read()
        self.demo_choice = demo or self.result.settings.demo
        self.pins = Pins(self.result)
        self.demo = DemoModel()
        self.stamps = self._stamps()

    def _read(self):
        return load_settings(self.workspace, self.env_file, self.environ, self.user_file)

    def _stamps(self) -> dict[Path, object]:
        return {path: _stamp(path) for path in (self.env_path, self.user_file)}

    @property
    def demo_active(self) -> bool:
        return self.demo_choice == "on" or (self.demo_choice == "auto" and not self.pins.has_credentials)

    @property
    def sources(self) -> dict[str, str | None]:
        """Where each setting in use came from: "environment", a settings file's path, or None (a default).
        For the endpoint, key and model: where the session's fixed value came from (e.g. for a 401)."""
        return {**self.result.sources, **self.pins.sources}

    def settings(self):
        settings = self.pins.apply(self.result.settings)
        if self.demo_active:
            return self.demo.start().settings_for(settings)
        self.demo.stop()
        return settings

    def close(self) -> None:
        self.demo.stop()

    # ---- settings files changed ------------------------------------------------------
    def reload(self, ask: Ask | None, emit: Emit) -> list[str]:
        """Re-read the settings if a file changed; returns the names of the files that did."""
        stamps = self._stamps()
        changed = [p.name if p == self.env_path else str(p) for p in stamps if stamps[p] != self.stamps[p]]
        if not changed:
            return []
        self.stamps, self.result = stamps, self._read()
        changes = self.pins.changes(self.result.settings)
        if not changes or not self.pins.is_new(changes):
            return changed
        lines = describe(changes, self.result.sources)
        if ask is None:
            self.pins.decline(self.result)
            emit(Notice("[ignored a settings change: " + "; ".join(lines) + ". The endpoint, key and model are "
                        "fixed for this session; start s08 again to use the new values]", "warning"))
            return changed
        answer = ask(Question("A settings file changed while s08 was running:\n  " + "\n  ".join(lines) +
                              "\nThe endpoint, key and model stay as they were unless you agree (a command or "
                              "the model may have made this change). Use the new values from now on?"))
        if (answer or "").strip().lower() in YES:
            was_demo = self.demo_active
            self.pins.accept(self.result)
            emit(Notice("[using the new endpoint, key and model settings]" +
                        (" — the demo model is off" if was_demo and not self.demo_active else ""), "info"))
        else:
            self.pins.decline(self.result)
            emit(Notice("[kept this session's endpoint, key and model; start s08 again to use the new ones]",
                        "info"))
        return changed

    # ---- /login and /logout -----------------------------------------------------------
    def login(self, ask: Ask | None, emit: Emit, key: str | None = None) -> bool:
        """Ask for a key, check it, store it in the user-level file and use it. True if the session's
        key changed."""
        if key is None:
            if ask is None:
                emit(Notice("/login asks for a key: run it in the interactive REPL (s08 without -p or a pipe)",
                            "warning"))
                return False
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
        base_url = (self.pins.values["ANTHROPIC_BASE_URL"] or DEFAULT_BASE_URL).rstrip("/")
        emit(Notice(f"checking the key with {base_url} …", "info"))
        from llm import check_key
        check = check_key(key, base_url, KEY_CHECK_TIMEOUT)
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
        self.first_run = False
        emit(Notice(f"key stored in {self.user_file} (mode 0600); /logout removes it", "info"))
        self._warn_if_shadowed(emit)
        was_demo = self.demo_active
        self.pins.login(key, str(self.user_file))
        if self.demo_choice == "on":
            emit(Notice("this session stays on the demo model (--demo or DEMO=on); start s08 without it "
                        "to use the key", "warning"))
        elif was_demo:
            emit(Notice(f"the demo model is off: {self.pins.values['MODEL_ID']} at {base_url} answers from now "
                        "on (/clear starts a fresh conversation)", "info"))
        self._own_write()
        return True

    def _own_write(self) -> None:
        """The user-level file was changed by the person's own command: not a change to ask about.
        (The workspace file keeps its old stamp, so a change there is still checked.)"""
        self.stamps[self.user_file] = _stamp(self.user_file)
        self.result = self._read()

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

    def first_run_done(self, emit: Emit) -> None:
        try:
            mark_first_run_done(self.user_file)
        except OSError as exc:
            emit(Notice(f"cannot write {self.user_file}: {exc.strerror or exc}", "warning"))
        self.first_run = False
        self._own_write()
