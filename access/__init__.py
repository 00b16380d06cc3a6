"""Which endpoint, key and model a session uses, with whose consent: the choice (model_access), /login
and /logout (login), the values fixed for a session (pins), what a folder's .env may decide
(folder_trust), the user-level settings file (credentials), the key kept from commands (keyguard) and
the built-in demo model (demo).

Kept light on purpose: the key guard runs before the heavy imports, so nothing is imported here."""
