"""The configuration file: reading it, checking it, what a reload changes."""
