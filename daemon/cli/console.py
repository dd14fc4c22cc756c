"""`shoe2mqtt console`: the dealer console, a touch page at one table (docs/console.md).

Reads `[mqtt]` (less the daemon's own credentials), `[console]` and its table's `[[table]]`
of the configuration file. A configuration it cannot start on exits 78 (`ExitCode.CONFIG`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from daemon.cli.command import Command, add_config_option, write_config_errors
from daemon.cli.exit_codes import ExitCode

if TYPE_CHECKING:
    import argparse
    from typing import TextIO


def _add_arguments(cmd: argparse.ArgumentParser) -> None:
    add_config_option(cmd, reads="[mqtt], [console] and its [[table]]")


def _console(args: argparse.Namespace, _out: TextIO, err: TextIO) -> ExitCode:
    from daemon.configuration.file import ConfigErrors
    from daemon.dealer_console.config import load_console_config

    try:
        config = load_console_config(args.config)
    except ConfigErrors as exc:
        write_config_errors(err, exc)
        return ExitCode.CONFIG
    from daemon.dealer_console.service import run_console

    return ExitCode(run_console(config))


COMMAND: Final = Command(
    description="Serve the dealer console of one table (docs/console.md): a touch page where "
    "a logged-in dealer places the wagers, calls No more bets, declares each decision, enters "
    "an unreadable card and resolves a held round, as the table's console broker user.",
    add_arguments=_add_arguments,
    run=_console,
)
