"""`shoe2mqtt check-config FILE`: every mistake of a configuration file, each with its line
and field, before the service is started on it; or one line saying what it will serve."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Final

from daemon.cli.command import Command, write_config_errors
from daemon.cli.exit_codes import ExitCode

if TYPE_CHECKING:
    import argparse
    from typing import TextIO


def _add_arguments(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("config", type=Path, help="the configuration file")


def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> ExitCode:
    from daemon.config import ConfigErrors, load_config

    path: Path = args.config
    try:
        config = load_config(path)
    except ConfigErrors as exc:
        write_config_errors(err, exc)
        err.write(f"{len(exc.errors)} mistake(s) in {path}\n")
        return ExitCode.FAILURE
    err.writelines(f"{note} (deprecated)\n" for note in config.deprecations)
    tables = ", ".join(
        f"{t.table.table_id} ({t.table.game.value}, {t.shoe.protocol})" for t in config.tables
    )
    out.write(f"{path}: OK: broker {config.mqtt.host}:{config.mqtt.port}; tables: {tables}\n")
    return ExitCode.OK


COMMAND: Final = Command(
    name="check-config",
    help="check a configuration file and name the line and field of each mistake",
    description=None,
    add_arguments=_add_arguments,
    run=_run,
)
