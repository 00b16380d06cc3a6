"""Which model a session talks to, and with which key: settings files, the demo model, /login, /logout.

    Access(workspace, env_file, environ, demo)   reads the settings; pins the endpoint, key and model
      .settings()      the settings to build the client from (the demo's, when it answers)
      .secrets()       every key and token value s08 knows of, for redaction (not only the one in use)
      .reload(ask, emit)   a settings file changed: re-read it; a changed endpoint, key or model
                       is used only if the person agrees (ask), else ignored and said once
      .sources         where each value in use came from (the key's: for a message after a 401)
      .needs_consent   this folder's .env names the endpoint, a key would go there, and the person has
                       not agreed (the trust rule: access/pins.needs_consent)
      .relax_pending   settings of this folder's .env that relax approvals (access/folder_trust.py), not agreed
                       to and not asked about yet; until agreed they are not used at all
      .settle(ask, emit)   before the first request: one question about both (yes is remembered in
                       credentials.consent_file; no falls back to the endpoint of any other folder and
                       ignores the relaxations); with nobody to ask, send nothing and say why in one line
      .user_pending    guarded settings of the user-level file changed behind s08's back
                       (user_file_guard.py): not used until settle() has the person's yes; -p and
                       piped input use the settings without them, said in one line
What else a folder's `.env` may set is config.py's table (its `folder` rule): PROVIDER, DEMO, MODEL_PRICE, …
never (ignored, said in one line).

Until the person agrees, settings() carries no key or token, so no client can be built and nothing
can be sent to that endpoint — whichever code path would try. "No" makes the session read the
endpoint, key and model as in any other folder (environment, user-level file, defaults): the key goes
where its owner pointed it, and the person can still work. -p and piped input cannot ask, so they send
nothing at all rather than talk to an endpoint the script's author did not choose.

/login and /logout are access/login.py (functions over an Access, through its public methods).

The demo model (access/demo.py) answers when no key is configured anywhere and DEMO
is `auto`, or always with `--demo` / DEMO=on; `--no-demo` / DEMO=off turns it
off. The choice is made when the session starts; a key that arrives later
(/login, or a settings file the person agrees to) ends the demo.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from config import SECRET_SETTINGS, SESSION_FIXED, load_settings, process_environ, user_settings_file
from access.credentials import URL_NAME, agreed_values, mark_first_run_done, remember_values
from access.demo import DEMO_MODEL, DemoModel
from events import Ask, Emit, Notice, Question
from access import user_file_guard
from access.folder_trust import after_change, question, relaxations, relaxations_ignored
from redact import credential_values, redact_url, url_credentials
from access.pins import YES, Pins, describe, fixed_values, needs_consent, shown

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
        self.relax_agreed: dict[str, str] = {}   # relaxing settings agreed to this session
        self.relax_wanted: dict[str, str] = {}   # the relaxing settings this folder's .env sets (used or not)
        self.relax_asked = False                 # asked (or, with nobody to ask, said) once this session
        self.refusal_said = False
        self.known_secrets: set[str] = set()     # every credential seen this session stays hidden
        self.demo = DemoModel()
        self.user_changed = user_file_guard.changed(self.user_file) if self.user_file != self.env_path else {}
        self.user_withheld: tuple[str, ...] = tuple(self.user_changed)   # until the person agrees
        self.user_asked = False
        self.result = self._read()
        self.relax_at_start = dict(self.relax_wanted)   # only these are asked about; later ones wait for a restart
        self.demo_choice = demo or self.result.settings.demo
        self.pins = Pins(self.result)
        self.stamps = self._stamps()

    def _read(self, not_from_env_file: tuple[str, ...] | None = None):
        """The settings, without what this folder's .env may set only with consent and has not got it."""
        skip = self.declined if not_from_env_file is None else not_from_env_file
        def read(names):
            safe = user_file_guard.safe_values(self.user_file, self.user_withheld) if self.user_withheld else None
            return load_settings(self.workspace, self.env_file, self.environ, self.user_file, names, safe)
        result = read(skip)
        self.relax_wanted = relaxations(result, self.workspace_env)
        start = getattr(self, "relax_at_start", None)      # a model named later asks as any change does
        withheld = tuple(name for name, value in self.relax_wanted.items() if not self._relax_agreed(name, value)
                         and (name != "MODEL_ID" or start is None or start.get(name) == value))
        if withheld:
            result = read(skip + withheld)
        return result

    def _relax_agreed(self, name: str, value: str) -> bool:
        return self.relax_agreed.get(name) == value or \
            agreed_values(self.user_file, self.workspace).get(name) == value

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

    def secrets(self) -> tuple[str, ...]:
        """Every key and token s08 knows of, to be redacted wherever a tool result could show one: the
        environment's (the key guard's hand-over included), each settings file's, the pinned ones, the
        demo's, and any seen earlier this session (a key /logout removed)."""
        if self.environ is None:
            environ = process_environ()
        else:
            environ = self.environ
        extra = [self.pins.values[name] for name in SECRET_SETTINGS] + [self.demo.key, *self.known_secrets]
        extra += url_credentials(self.pins.values[URL_NAME])
        values = credential_values(environ, dict.fromkeys((self.env_path, self.workspace / ".env", self.user_file)),
                                   extra)
        self.known_secrets.update(values)
        return values

    def close(self) -> None:
        self.demo.stop()

    # ---- what this folder's .env may set only with the person's consent ----------------------
    @property
    def needs_consent(self) -> bool:
        return self.pins.needs_consent(self.workspace_env) and not self.endpoint_agreed()

    @property
    def relax_pending(self) -> dict[str, str]:
        if self.relax_asked:
            return {}
        return {name: value for name, value in self.relax_wanted.items()
                if self.relax_at_start.get(name) == value and not self._relax_agreed(name, value)}

    @property
    def user_pending(self) -> dict[str, str]:
        return {} if self.user_asked else {n: v for n, v in self.user_changed.items() if n in self.user_withheld}

    @property
    def unsettled(self) -> bool:
        """Something to ask (or, with nobody to ask, to refuse) before the next request."""
        return (self.needs_consent and not self.demo_active) or bool(self.relax_pending) or bool(self.user_pending)

    def endpoint_agreed(self, url: str | None = None) -> bool:
        url = url or self.pins.base_url
        if url not in self.agreed and agreed_values(self.user_file, self.workspace).get(URL_NAME) == url:
            self.agreed.add(url)
        return url in self.agreed

    def _where(self, source: str | None) -> str:
        return "the environment" if source == "environment" else \
            f"your user-level file {self.user_file}" if source == str(self.user_file) else \
            "this folder's .env" if source == self.workspace_env else str(source)

    def _key_where(self) -> str:
        """Which credentials in use would go to the endpoint, and where each comes from."""
        return " and ".join(f"{name} from {self._where(self.pins.sources.get(name))}" for name in SECRET_SETTINGS
                            if self.pins.values[name])

    def shown_url(self, url: str | None = None) -> str:
        return shown(redact_url(url or self.pins.base_url))

    def settle(self, ask: Ask | None, emit: Emit) -> bool:
        """Before the first request. True when requests may go out (the person agreed, declined and the
        session falls back, or nothing needed asking); False with nobody to ask about the endpoint (said
        once, then briefly). Relaxations nobody can agree to are ignored, said in one line."""
        if self.user_pending:
            self._settle_user_file(ask, emit)
        endpoint, relax = self.needs_consent and not self.demo_active, self.relax_pending
        if not endpoint and not relax:
            return True
        if ask is None:
            if relax:
                emit(Notice(relaxations_ignored(relax, self.user_file), "warning"))
                self.relax_asked = True
            if not endpoint:
                return True
            emit(Notice(NOT_AGREED if self.refusal_said else
                        f"s08: sending nothing: this folder's .env sets ANTHROPIC_BASE_URL={self.shown_url()}, and "
                        f"nobody has agreed to use that endpoint here (the key: {self._key_where()}). To allow it, "
                        "run s08 here once in a terminal and answer yes, set ANTHROPIC_BASE_URL in the environment, "
                        "or name the file with --env-file.", "error"))
            self.refusal_said = True
            return False
        self.ask_consent(ask, emit, self._key_where() if endpoint else None, relax)
        return True

    def _settle_user_file(self, ask: Ask | None, emit: Emit) -> None:
        """The user-level file's guarded settings changed behind s08's back: ask (yes records them and
        uses them), or with nobody to ask, go on without them and say so in one line."""
        found, self.user_asked = self.user_pending, True
        if ask is None:
            emit(Notice(user_file_guard.refused(self.user_file, found), "warning"))
            return
        answer = ask(Question(user_file_guard.question(self.user_file, found)))
        if (answer or "").strip().lower() not in YES:
            emit(Notice(f"[ignoring {', '.join(found)} from {self.user_file} for this session]", "warning"))
            return
        try:
            user_file_guard.record(self.user_file, tuple(found))
            emit(Notice("[using them; remembered]", "info"))
        except OSError as exc:
            emit(Notice(f"[using them for this session; could not remember it: {exc.strerror or exc}]", "warning"))
        self.user_withheld = ()
        self.result = self._read()
        self.pins = Pins(self.result, self.pins)

    def ask_consent(self, ask: Ask, emit: Emit, key_where: str | None, relax: dict[str, str]) -> bool:
        """One question about this folder's endpoint (when `key_where` says where its key comes from) and
        its relaxing settings. Yes: used and remembered. No: the session reads the endpoint, key and model
        as in any other folder, and ignores the relaxations. True if the person agreed."""
        url, endpoint = self.pins.base_url, key_where is not None
        fallback = self._read(SESSION_FIXED) if endpoint else None
        elsewhere = self.shown_url(fallback.settings.base_url) if fallback else ""
        answer = ask(Question(question(str(self.workspace), (self.shown_url(), key_where) if endpoint else None,
                                       relax, elsewhere)))
        self.relax_asked = True
        if (answer or "").strip().lower() in YES:
            if endpoint:
                self.agreed.add(url)
            self.relax_agreed.update(relax)
            self._remember({**relax, **({URL_NAME: url} if endpoint else {})}, emit)
            self.result = self._read()
            if "MODEL_ID" in relax:                  # pinned at start without it
                self.pins = Pins(self.result, self.pins)
            return True
        if endpoint:
            self.declined, self.result = SESSION_FIXED, self._read(SESSION_FIXED)
            self.pins = Pins(self.result, self.pins)
            keyless = "" if self.pins.has_credentials else "; no key is configured for it, so " + \
                ("the demo model answers" if self.demo_active else "nothing is sent")
            emit(Notice(f"[not using it: this session uses {elsewhere} (model {shown(self.result.settings.model_id)})"
                        f"{' with your key' if self.pins.has_credentials else ''}, as in any other folder{keyless}]",
                        "warning"))
        if relax:
            emit(Notice(f"[ignoring {', '.join(relax)} from this folder's .env for this session]", "warning"))
        return False

    def _remember(self, values: dict[str, str], emit: Emit) -> None:
        try:
            path = remember_values(self.user_file, self.workspace, values)
            emit(Notice(f"[using it; remembered for this folder in {path}]", "info"))
        except OSError as exc:
            emit(Notice(f"[using it for this session; could not remember it: {exc.strerror or exc}]", "warning"))

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
        lines = describe(changes, self.result.sources, self._in_use())
        if ask is None:
            self.pins.decline(self.result)
            emit(Notice("[ignored a settings change: " + "; ".join(lines) + ". The endpoint, key and model are "
                        "fixed for this session; start s08 again to use the new values]", "warning"))
            return changed
        new_url = self.result.settings.base_url
        # a new endpoint named by this folder's .env: a yes here is the consent the trust rule asks for
        trust = "ANTHROPIC_BASE_URL" in changes and not self.endpoint_agreed(new_url) and needs_consent(
            fixed_values(self.result.settings), self.result.sources, self.workspace_env)
        answer = ask(Question("A settings file changed while s08 was running:\n  " + "\n  ".join(lines) +
                              "\nThe endpoint, key and model stay as they were unless you agree (a command or "
                              "the model may have made this change)." + self._after_change(trust) +
                              " Use the new values from now on?"))
        if (answer or "").strip().lower() in YES:
            was_demo = self.demo_active
            self.pins.accept(self.result)
            if trust:
                self.agreed.add(new_url)
                self._remember({URL_NAME: new_url}, emit)
            emit(Notice("[using the new endpoint, key and model settings]" +
                        (" — the demo model is off" if was_demo and not self.demo_active else ""), "info"))
        else:
            self.pins.decline(self.result)
            emit(Notice("[kept this session's endpoint, key and model; start s08 again to use the new ones]",
                        "info"))
        return changed

    def _in_use(self) -> dict[str, str] | None:
        """How a change question names what the session really uses when the demo model answers."""
        if not self.demo_active:
            return None
        return {"ANTHROPIC_BASE_URL": "the built-in demo model (offline)", "MODEL_ID": f"{DEMO_MODEL} (the demo model)"}

    def _after_change(self, trust: bool) -> str:
        """What a yes to the change question means beyond the values themselves."""
        keyed = any(fixed_values(self.result.settings)[name] for name in SECRET_SETTINGS)
        return after_change(trust, self.demo_choice == "on", self.demo_active and not keyed)

    def own_write(self) -> None:
        """The user-level file was changed by the person's own command: not a change to ask about.
        (The workspace file keeps its old stamp, so a change there is still checked.)"""
        self.stamps[self.user_file] = _stamp(self.user_file)
        still = user_file_guard.changed(self.user_file) if self.user_withheld else {}
        self.user_withheld = tuple(n for n in self.user_withheld if n in still)   # what s08 wrote is its own
        self.result = self._read()

    def first_run_done(self, emit: Emit) -> None:
        try:
            mark_first_run_done(self.user_file)
        except OSError as exc:
            emit(Notice(f"cannot write {self.user_file}: {exc.strerror or exc}", "warning"))
        self.first_run = False
        self.own_write()
