"""The session log, which survives anything: the writer (log), the file itself (file), reading it back
(replay), making a replayed history sendable (repair) and the token and cost accounting (costs)."""
