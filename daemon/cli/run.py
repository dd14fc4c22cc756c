"""`shoe2mqtt run`: the service. Read every configured shoe, settle, publish over MQTT.

A configuration it cannot start on exits 78 (`ExitCode.CONFIG`), which the systemd units
name in RestartPreventExitStatus=: restarting cannot mend a file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from daemon.cli.command import Command, add_config_option, write_config_errors
from daemon.cli.exit_codes import ExitCode

if TYPE_CHECKING:
    import argparse
    from typing import TextIO


def _add_arguments(cmd: argparse.ArgumentParser) -> None:
    add_config_option(cmd)


def _run(args: argparse.Namespace, _out: TextIO, err: TextIO) -> ExitCode:
    from daemon.configuration.file import ConfigErrors
    from daemon.configuration.service_config import load_config
    from daemon.service import run_service

    try:
        config = load_config(args.config)
    except ConfigErrors as exc:
        write_config_errors(err, exc)
        return ExitCode.CONFIG
    return ExitCode(run_service(config))


COMMAND: Final = Command(
    description="Run the daemon: read every configured shoe, settle, publish over MQTT.",
    add_arguments=_add_arguments,
    run=_run,
)
