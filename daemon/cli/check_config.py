"""`shoe2mqtt check-config [FILE...]`: every mistake of each configuration file, each with its
line and field, and apart from them what this host lacks for it (a CA or password file
missing or unreadable), before the service is started on it; or one line per file saying
what it will serve. Warnings (a setting on its way out, a pit display served in clear
beyond this PC) are printed and fail nothing.

`--daemon` checks what `shoe2mqtt run` reads and nothing of the pit display's files: the
systemd units run it as ExecReload= before they signal the daemon, as the daemon's user, so
that `systemctl reload` fails on a file the daemon would refuse.

The files are named after the options (as the systemd units and the docs do), or each with
`--config FILE` as `run`, `watch` and `display` take theirs; with neither, the file `run`
reads by default is checked."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Final

from daemon.cli.command import DEFAULT_CONFIG, Command, write_config_errors
from daemon.cli.exit_codes import ExitCode

if TYPE_CHECKING:
    import argparse
    from typing import TextIO


def _add_arguments(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument(
        "--daemon",
        action="store_true",
        help="only what `shoe2mqtt run` reads, not the pit display's files "
        "(what `systemctl reload` checks)",
    )
    cmd.add_argument(
        "files",
        type=Path,
        nargs="*",
        metavar="FILE",
        help="a configuration file; several, e.g. /etc/shoe2mqtt/*.toml, one per instance "
        f"(default: {DEFAULT_CONFIG})",
    )
    cmd.add_argument(
        "--config",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help="a configuration file, as `run --config FILE` names it; repeatable, and the same "
        "as naming it after the options",
    )


def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> ExitCode:
    paths = [*args.config, *args.files] or [DEFAULT_CONFIG]
    results = [_check(path, out, err, display=not args.daemon) for path in paths]
    if not [*args.config, *args.files] and not DEFAULT_CONFIG.exists():
        err.write(
            f"(with no file named, check-config checks {DEFAULT_CONFIG}, the file `run` reads: "
            "name yours with --config FILE; scripts/install puts one there)\n"
        )
    # EX_CONFIG, as `run` answers the same file: a script or a unit can test either alike.
    return ExitCode.OK if all(results) else ExitCode.CONFIG


def _check(path: Path, out: TextIO, err: TextIO, *, display: bool) -> bool:
    from daemon.configuration.file import ConfigErrors
    from daemon.configuration.service_config import load_config
    from daemon.display.config import file_warnings

    try:
        config = load_config(path)
    except ConfigErrors as exc:
        write_config_errors(err, exc)
        if display:
            _write_page_problems(path, err)
        return False
    if display and _write_page_problems(path, err):
        return False
    err.writelines(f"{note} (deprecated)\n" for note in config.deprecations)
    if display:
        err.writelines(f"{warning} (warning)\n" for warning in file_warnings(path))
    tables = ", ".join(
        f"{t.table.table_id} ({t.table.game.value}, {t.shoe.protocol})" for t in config.tables
    )
    mqtt = config.mqtt  # the contract too: what the consoles and the pit must read (mqtt.md)
    out.write(
        f"{path}: OK: broker {mqtt.host}:{mqtt.port}, console contract {mqtt.contract}; "
        f"tables: {tables}\n"
    )
    return True


def _write_page_problems(path: Path, err: TextIO) -> bool:
    """What `shoe2mqtt display` and `shoe2mqtt console` would refuse in the file's
    `[display]` and `[console]` sections that the daemon's own check does not see: the daemon
    checks those sections' shape only (their password, dealers and certificate files are
    theirs, which the daemon's user may rightly be unable to read), so a file that `run`
    accepts could still stop either. True when there were any; each has its own heading."""
    from daemon.dealer_console.config import file_problems as console_problems
    from daemon.display.config import file_problems as display_problems

    found = False
    for heading, problems in (
        (DISPLAY_PROBLEMS_HEADING, display_problems(path)),
        (CONSOLE_PROBLEMS_HEADING, console_problems(path)),
    ):
        if problems:
            err.write(heading)
            err.writelines(f"{problem}\n" for problem in problems)
            found = True
    return found


DISPLAY_PROBLEMS_HEADING: Final = (
    "problems for the pit display (`shoe2mqtt display` needs them mended; `run` does not):\n"
)
CONSOLE_PROBLEMS_HEADING: Final = (
    "problems for the dealer console (`shoe2mqtt console` needs them mended; `run` does not):\n"
)


COMMAND: Final = Command(
    description="Check configuration files before the service starts on them: every mistake "
    "of each, with its line and field, then what this host lacks for it (a CA or password "
    "file missing or unreadable); or a line per file saying what it will serve.",
    add_arguments=_add_arguments,
    run=_run,
)
