"""The session log, which survives anything: the writer (log), the file itself (file), reading it back
(replay), making a replayed history sendable (repair) and the token and cost accounting (costs);
what happened besides the history — compactions, saved outputs (index) —, a session as a timeline of
requests and compactions (timeline), removing old sessions (clean), and the `s08 sessions / inspect /
clean` commands (cli)."""
