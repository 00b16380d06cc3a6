"""Which tool calls run at once and which need the person's yes: the policy (policy), how a command
line is split (shell), who a simple command really runs (wrappers), its options (options) and the
rules for commands that only read (read_only). Policy only, no printing."""
