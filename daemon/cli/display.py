"""`shoe2mqtt display`: the pit display, a web page of every table live from MQTT.

Reads `[mqtt]` (less the daemon's own credentials) and `[display]` of the configuration
file (docs/display.md). A configuration it cannot start on exits 78 (`ExitCode.CONFIG`),
which its systemd unit names in RestartPreventExitStatus=, as the daemon's does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from daemon.cli.command import Command, add_config_option, write_config_errors
from daemon.cli.exit_codes import ExitCode

if TYPE_CHECKING:
    import argparse
    from typing import TextIO


def _add_arguments(cmd: argparse.ArgumentParser) -> None:
    add_config_option(cmd, reads="[mqtt] and [display]")


def _display(args: argparse.Namespace, _out: TextIO, err: TextIO) -> ExitCode:
    from daemon.configuration.file import ConfigErrors
    from daemon.display.config import load_display_config

    try:
        config = load_display_config(args.config)
    except ConfigErrors as exc:
        write_config_errors(err, exc)
        return ExitCode.CONFIG
    # The web server is loaded only now: checking a configuration needs none of it.
    from daemon.display.service import run_display

    return ExitCode(run_display(config))


COMMAND: Final = Command(
    description="Serve the pit view and the table view (docs/display.md) to browsers, as the "
    "broker's read-only display user.",
    add_arguments=_add_arguments,
    run=_display,
)
