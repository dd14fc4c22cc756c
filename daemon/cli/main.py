"""`shoe2mqtt`: the parser every command registers with, and the one `main()`.

A command's module is imported only when that command runs: `shoe2mqtt --version` and
`shoe2mqtt --help` import none of them (the demo alone would bring in the service, the
web server and their libraries: 0.4-0.55 s before anything was printed). The manual page
and the shell completion (scripts/install) call `build_parser()` with no argument, which
imports every command and builds each one's parser whole.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from daemon.cli.exit_codes import ExitCode

if TYPE_CHECKING:
    from collections.abc import Collection, Sequence

    from daemon.cli.command import Command, Handler


@dataclass(frozen=True, slots=True)
class Listed:
    """A command as `shoe2mqtt --help` lists it, and the module that builds it."""

    name: str
    module: str  # in daemon.cli; its COMMAND is the `Command`
    help: str  # the line `shoe2mqtt --help` shows

    def command(self) -> Command:
        built: Command = importlib.import_module(f"daemon.cli.{self.module}").COMMAND
        return built


# In the order `shoe2mqtt --help` lists them: the auditor's and the service's commands, the
# pit's, the engineer's shoe tools, then the journal, the mathematics and the API document.
COMMANDS: Final = (
    Listed(
        "replay",
        "replay",
        "run a round log through the rules core and print settlements and notices",
    ),
    Listed("run", "run", "serve the configured tables: shoes in, settlements out over MQTT"),
    Listed(
        "check-config",
        "check_config",
        "check configuration files: every mistake with its line and field, and what this "
        "host lacks for them",
    ),
    Listed("watch", "watch", "a live pit view of the tables, built from the MQTT topics alone"),
    Listed(
        "display", "display", "serve the pit display: a web page of every table, live from MQTT"
    ),
    Listed(
        "console",
        "console",
        "serve the dealer console of one table: a touch page that sends the dealer's requests",
    ),
    Listed(
        "demo",
        "demo",
        "a whole pit on this machine: broker, emulated shoes, daemon, players, live view, "
        "pit display",
    ),
    Listed("emulate", "emulate", "emulate a shoe on a virtual serial port"),
    Listed("listen", "listen", "print what a shoe says, decoded, as JSON Lines"),
    Listed("ports", "ports", "list serial ports and known USB shoe devices"),
    Listed(
        "journal",
        "journal",
        "read the journal: list rounds, show one as published, export it, verify the chain",
    ),
    Listed(
        "report",
        "report",
        "the pit's numbers: pace, handle and hold beside the exact theoretical, per table, "
        "shift, day, dealer or floor",
    ),
    Listed(
        "analyze", "analyze", "exact odds, hit frequency, return and house edge of each paytable"
    ),
    Listed(
        "simulate",
        "simulate",
        "play seeded shoes through the round engine and check them against analyze",
    ),
    Listed("asyncapi", "asyncapi", "print the AsyncAPI 3.0 document of every topic and payload"),
)


class _Version(argparse.Action):
    """`--version`: the package metadata is read only when asked (importlib.metadata is
    the slowest import `shoe2mqtt --help` would otherwise make)."""

    def __init__(self, option_strings: Sequence[str], dest: str, help: str) -> None:  # noqa: A002 - argparse's keyword
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        _namespace: argparse.Namespace,
        _values: object,
        _option: str | None = None,
    ) -> None:
        from daemon.version import installed_version

        sys.stdout.write(f"{parser.prog} {installed_version()}\n")  # as argparse's own
        parser.exit()


def build_parser(commands: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The whole `shoe2mqtt` parser; with `commands`, only those commands' modules are
    imported and their parsers filled, the others listed by name and help alone."""
    parser = argparse.ArgumentParser(
        prog="shoe2mqtt",
        description="Card-reading blackjack shoe to MQTT, settling New Jersey bonus wagers.",
    )
    parser.add_argument("--version", action=_Version, help="print the installed version and exit")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for listed in COMMANDS:
        own = subparsers.add_parser(listed.name, help=listed.help)
        if commands is None or listed.name in commands:
            listed.command().fill(own)
    return parser


def named_command(argv: Sequence[str]) -> str | None:
    """The command `argv` names: its first word that is no option (the top level's only
    options, --help and --version, take no value)."""
    return next((word for word in argv if not word.startswith("-")), None)


def main(argv: list[str] | None = None) -> ExitCode:
    """Parse `argv` (default: the process's arguments), run the command, return its status.

    argparse answers --help, --version and a wrong invocation itself, by SystemExit (0, 0
    and 2), before any command runs.
    """
    words = sys.argv[1:] if argv is None else argv
    name = named_command(words)
    args = build_parser(() if name is None else (name,)).parse_args(words)
    run_command: Handler = args.run
    try:
        return run_command(args, sys.stdout, sys.stderr)
    except BrokenPipeError:
        from daemon.cli.output import drop_standard_output

        drop_standard_output()
        return ExitCode.OK
