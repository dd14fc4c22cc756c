"""The wire contract: what the daemon, the display, `watch` and a console share on the broker."""
