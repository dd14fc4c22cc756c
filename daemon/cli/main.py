"""`shoe2mqtt`: the parser every command registers with, and the one `main()`."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Final

from daemon.cli import (
    analyze,
    asyncapi,
    check_config,
    demo,
    display,
    emulate,
    journal,
    listen,
    ports,
    replay,
    run,
    simulate,
    watch,
)
from daemon.cli.exit_codes import ExitCode
from daemon.cli.output import drop_standard_output
from daemon.version import installed_version

if TYPE_CHECKING:
    from daemon.cli.command import Command, Handler

# In the order `shoe2mqtt --help` lists them: the auditor's and the service's commands, the
# pit's, the engineer's shoe tools, then the journal, the mathematics and the API document.
COMMANDS: Final[tuple[Command, ...]] = (
    replay.COMMAND,
    run.COMMAND,
    check_config.COMMAND,
    watch.COMMAND,
    display.COMMAND,
    demo.COMMAND,
    emulate.COMMAND,
    listen.COMMAND,
    ports.COMMAND,
    journal.COMMAND,
    analyze.COMMAND,
    simulate.COMMAND,
    asyncapi.COMMAND,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="shoe2mqtt",
        description="Card-reading blackjack shoe to MQTT, settling New Jersey bonus wagers.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {installed_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.register(commands)
    return parser


def main(argv: list[str] | None = None) -> ExitCode:
    """Parse `argv` (default: the process's arguments), run the command, return its status.

    argparse answers --help, --version and a wrong invocation itself, by SystemExit (0, 0
    and 2), before any command runs.
    """
    args = build_parser().parse_args(argv)
    run_command: Handler = args.run
    try:
        return run_command(args, sys.stdout, sys.stderr)
    except BrokenPipeError:
        drop_standard_output()
        return ExitCode.OK
