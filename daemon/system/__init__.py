"""The host's plumbing: systemd's notify protocol, signals, the status line, logging."""
