"""The `shoe2mqtt` command line: every command, one module each."""

from daemon.cli.main import EX_CONFIG, build_parser, main

__all__ = ["EX_CONFIG", "build_parser", "main"]
