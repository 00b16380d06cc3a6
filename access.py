"""Which model a session talks to, and with which key: settings files, the demo model, /login, /logout.

    Access(workspace, env_file, environ, demo)   reads the settings; pins the endpoint, key and model
      .settings()      the settings to build the client from (the demo's, when it answers)
      .reload(ask, emit)   a settings file changed: re-read it; a changed endpoint, key or model
                       is used only if the person agrees (ask), else ignored and said once
      .login(ask, emit, key=None)   ask for a key, check it with one request, store it (0600), use it
      .logout(emit)    remove it from the user-level file; the session falls back to the demo
      .sources         where each value in use came from (the key's: for a message after a 401)
      .needs_consent   this folder's .env names the endpoint and the key comes from elsewhere, and the
                       person has not agreed (the trust rule: session_settings.needs_consent)
      .settle(ask, emit)   before the first request: ask about such an endpoint (yes is remembered in
                       credentials.consent_file; no falls back to the endpoint of any other folder);
                       with nobody to ask, send nothing and say why in one line

Until the person agrees, settings() carries no key or token, so no client can be built and nothing
can be sent to that endpoint — whichever code path would try. "No" makes the session read the
endpoint, key and model as in any other folder (environment, user-level file, defaults): the key goes
where its owner pointed it, and the person can still work. -p and piped input cannot ask, so they send
nothing at all rather than talk to an endpoint the script's author did not choose.

The demo model (demo.py) answers when no key is configured anywhere and DEMO
is `auto`, or always with `--demo` / DEMO=on; `--no-demo` / DEMO=off turns it
off. The choice is made when the session starts; a key that arrives later
(/login, or a settings file the person agrees to) ends the demo.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from config import SECRET_SETTINGS, SESSION_FIXED, load_settings, user_settings_file
from credentials import (endpoint_agreed, key_problem, mark_first_run_done, remember_endpoint, remove_keys,
                         store_key, stored_key)
from demo import DemoModel
from events import Ask, Emit, Notice, Question
from redact import redact_url
from session_settings import YES, Pins, describe, shown

KEY_CHECK_TIMEOUT = 20.0
SHOWN_FOLDER_CHARS = 200
NOT_AGREED = "not sent: this folder's .env names an endpoint nobody agreed to (see above)"


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
        self.workspace_env = None if env_file else str(workspace / ".env")   # a file the person named is theirs
        self.declined: tuple[str, ...] = ()      # SESSION_FIXED once the person said no to this .env's endpoint
        self.agreed: set[str] = set()            # endpoints agreed to for this folder (this session, or remembered)
        self.refusal_said = False
        self.result = self._read()
        self.demo_choice = demo or self.result.settings.demo
        self.pins = Pins(self.result)
        self.demo = DemoModel()
        self.stamps = self._stamps()

    def _read(self, not_from_env_file: tuple[str, ...] | None = None):
        skip = self.declined if not_from_env_file is None else not_from_env_file
        return load_settings(self.workspace, self.env_file, self.environ, self.user_file, skip)

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
        if self.needs_consent:          # no credentials: no client, nothing sent until the person agrees
            return dataclasses.replace(settings, anthropic_api_key="", anthropic_auth_token="")
        return settings

    def close(self) -> None:
        self.demo.stop()

    # ---- an endpoint from this folder's .env, a key from elsewhere ------------------------
    @property
    def needs_consent(self) -> bool:
        return self.pins.needs_consent(self.workspace_env) and not self._agreed()

    def _agreed(self) -> bool:
        url = self.pins.base_url
        if url not in self.agreed and endpoint_agreed(self.user_file, self.workspace, url):
            self.agreed.add(url)
        return url in self.agreed

    def _where(self, source: str | None) -> str:
        return "the environment" if source == "environment" else \
            f"your user-level file {self.user_file}" if source == str(self.user_file) else str(source)

    def _foreign_keys(self) -> str:
        """Which credentials in use come from outside this folder's .env, and from where."""
        url_source = self.pins.sources.get("ANTHROPIC_BASE_URL")
        return " and ".join(f"{name} from {self._where(self.pins.sources.get(name))}" for name in SECRET_SETTINGS
                            if self.pins.values[name] and self.pins.sources.get(name) != url_source)

    def _shown_url(self, url: str | None = None) -> str:
        return shown(redact_url(url or self.pins.base_url))

    def settle(self, ask: Ask | None, emit: Emit) -> bool:
        """Before the first request. True when requests may go out (the person agreed, declined and the
        session falls back, or nothing needed asking); False with nobody to ask (said once, then briefly)."""
        if not self.needs_consent:
            return True
        if ask is None:
            emit(Notice(NOT_AGREED if self.refusal_said else
                        f"s08: sending nothing: this folder's .env sets ANTHROPIC_BASE_URL={self._shown_url()}, but "
                        f"the key ({self._foreign_keys()}) is not from that file and nobody has agreed to send it "
                        "there. To allow it, run s08 here once in a terminal and answer yes, set ANTHROPIC_BASE_URL "
                        "in the environment, or name the file with --env-file.", "error"))
            self.refusal_said = True
            return False
        self._ask_consent(ask, emit, self._foreign_keys())
        return True

    def _ask_consent(self, ask: Ask, emit: Emit, key_where: str) -> bool:
        """Ask about the endpoint this folder's .env names. Yes: remembered. No: the session reads the
        endpoint, key and model as in any other folder. True if the person agreed."""
        url, here = self.pins.base_url, self._shown_url()
        fallback = self._read(SESSION_FIXED)
        elsewhere = self._shown_url(fallback.settings.base_url)
        answer = ask(Question(
            f"This folder's .env points s08 at an endpoint you have not agreed to, and your key comes from "
            f"elsewhere:\n  folder    {shown(str(self.workspace), SHOWN_FOLDER_CHARS)}\n"
            f"  endpoint  {here}   (ANTHROPIC_BASE_URL in .env)\n  key       {key_where}\n"
            "Whoever runs that endpoint receives your key and everything in this session, and anyone who could "
            "write this folder (a cloned repository, a model in an earlier session) could have set it.\n"
            f"Send your key there? Yes is remembered for this folder and this URL; no uses {elsewhere} instead."))
        if (answer or "").strip().lower() in YES:
            self.agreed.add(url)
            try:
                path = remember_endpoint(self.user_file, self.workspace, url)
                emit(Notice(f"[using it with your key; remembered for this folder in {path}]", "info"))
            except OSError as exc:
                emit(Notice(f"[using it for this session; could not remember it: {exc.strerror or exc}]",
                            "warning"))
            return True
        self.declined, self.result = SESSION_FIXED, fallback
        self.pins = Pins(fallback)
        model = fallback.settings.model_id
        emit(Notice(f"[not using it: this session uses {elsewhere} (model {shown(model)}) with your key, as in "
                    "any other folder]", "warning"))
        return False

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
        base_url = self.pins.base_url
        emit(Notice(f"checking the key with {self._shown_url()} …", "info"))
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
        self._ask_consent(ask, emit, f"the key you give /login (stored in {self.user_file})")
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
