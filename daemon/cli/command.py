"""What a `shoe2mqtt` command is, and the few things every command does the same way.

Each command module builds one `Command`: the text its `--help` opens with, a function that
adds its arguments to its own parser, and the function that runs it. `daemon.cli.main` lists
the commands by name, with the line `shoe2mqtt --help` shows for each, and imports a
command's module only when the command is the one asked for (or the whole parser is built,
for the manual page and the completion); a command never touches the main parser.

This module is imported before any command runs, so it imports nothing heavy at its top.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeAlias

from daemon.cli.exit_codes import ExitCode

DEFAULT_CONFIG: Final = Path("/etc/shoe2mqtt/shoe2mqtt.toml")

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Coroutine
    from typing import TextIO

    from daemon.configuration.file import ConfigErrors

# A command runs with its parsed arguments, standard output and standard error; tests
# hand it string buffers instead.
Handler: TypeAlias = "Callable[[argparse.Namespace, TextIO, TextIO], ExitCode]"


@dataclass(frozen=True, slots=True)
class Command:
    """One subcommand of `shoe2mqtt`, as its module builds it (its name and its line in
    `shoe2mqtt --help` are where main.py lists it)."""

    description: str | None  # the text `shoe2mqtt NAME --help` opens with (None: none)
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Handler

    def fill(self, parser: argparse.ArgumentParser) -> None:
        """Give the command's own parser its description, its arguments and its handler."""
        parser.description = self.description
        self.add_arguments(parser)
        parser.set_defaults(run=self.run)


def add_config_option(cmd: argparse.ArgumentParser, *, reads: str = "") -> None:
    """`--config FILE`, the one way a command that serves is told its configuration file."""
    what = f": {reads}" if reads else ""
    cmd.add_argument(
        "--config",
        type=Path,
        default=DEFAULT_CONFIG,
        metavar="FILE",
        help=f"the configuration file{what} (default: {DEFAULT_CONFIG})",
    )


def usage_error(err: TextIO, command: str, problem: object) -> ExitCode:
    """Say which option is wrong and why; the command then exits with `ExitCode.USAGE`."""
    err.write(f"shoe2mqtt {command}: {problem}\n")
    return ExitCode.USAGE


def failure(err: TextIO, command: str, problem: object) -> ExitCode:
    """Say what went wrong; the command then exits with `ExitCode.FAILURE`."""
    err.write(f"shoe2mqtt {command}: {problem}\n")
    return ExitCode.FAILURE


def write_config_errors(err: TextIO, mistakes: ConfigErrors) -> None:
    """Every mistake of a configuration file, a line each: file, line, field, why; then,
    under their own heading, the problems of this host (a file it names is missing)."""
    err.writelines(f"{error}\n" for error in mistakes.errors)
    if mistakes.host_problems:
        err.write(HOST_PROBLEMS_HEADING)
        err.writelines(f"{problem}\n" for problem in mistakes.host_problems)


HOST_PROBLEMS_HEADING = "problems of this host, not of the file (`run` needs them mended):\n"


def broker_address(text: str) -> tuple[str, int]:
    """`HOST[:PORT]` as typed after `--broker`; raises ValueError for a port that is no number."""
    from daemon.mqtt.settings import DEFAULT_PORT

    host, colon, port = text.rpartition(":")
    return (host, int(port)) if colon else (text, DEFAULT_PORT)


async def until_signalled(work: Coroutine[Any, Any, ExitCode]) -> ExitCode:
    """Run `work`; SIGINT or SIGTERM cancels it and the command ends with `ExitCode.OK`."""
    import asyncio
    import signal

    loop = asyncio.get_running_loop()
    task = asyncio.create_task(work, name="shoe2mqtt command")
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, task.cancel)
    try:
        return await task
    except asyncio.CancelledError:
        if task.cancelled():
            return ExitCode.OK
        raise
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
