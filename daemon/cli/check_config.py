"""`shoe2mqtt check-config FILE...`: every mistake of each configuration file, each with its
line and field, and apart from them what this host lacks for it (a CA or password file
missing or unreadable), before the service is started on it; or one line per file saying
what it will serve."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Final

from daemon.cli.command import Command, write_config_errors
from daemon.cli.exit_codes import ExitCode

if TYPE_CHECKING:
    import argparse
    from typing import TextIO


def _add_arguments(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument(
        "config",
        type=Path,
        nargs="+",
        help="the configuration file; several, e.g. /etc/shoe2mqtt/*.toml, one per instance",
    )


def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> ExitCode:
    results = [_check(path, out, err) for path in args.config]
    # EX_CONFIG, as `run` answers the same file: a script or a unit can test either alike.
    return ExitCode.OK if all(results) else ExitCode.CONFIG


def _check(path: Path, out: TextIO, err: TextIO) -> bool:
    from daemon.config import ConfigErrors, load_config

    try:
        config = load_config(path)
    except ConfigErrors as exc:
        write_config_errors(err, exc)
        return False
    err.writelines(f"{note} (deprecated)\n" for note in config.deprecations)
    tables = ", ".join(
        f"{t.table.table_id} ({t.table.game.value}, {t.shoe.protocol})" for t in config.tables
    )
    out.write(f"{path}: OK: broker {config.mqtt.host}:{config.mqtt.port}; tables: {tables}\n")
    return True


COMMAND: Final = Command(
    name="check-config",
    help="check configuration files: every mistake with its line and field, and what this "
    "host lacks for them",
    description=None,
    add_arguments=_add_arguments,
    run=_run,
)
