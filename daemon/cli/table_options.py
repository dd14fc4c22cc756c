"""Which tables `analyze` and `simulate` work on: the tables of a configuration file, the
table of a round log, or one described by options (--game, --decks, --deck-kind,
--paytable, --soft-17).

A wrong option raises `UsageError`, a file that cannot give the tables asked for raises
`TableFileError`; `refuse` turns either into the command's message and exit code.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Final

from daemon.cli.command import failure, usage_error
from rules.cards import DeckKind
from rules.config import TableConfig
from rules.errors import ConfigError
from rules.games import Game

if TYPE_CHECKING:
    import argparse
    from typing import TextIO

    from daemon.cli.exit_codes import ExitCode


class UsageError(Exception):
    """A wrong option: the message says which and why."""


class TableFileError(Exception):
    """A configuration file or round log that cannot give the tables asked for."""


# What choosing the tables may raise: the two above, and a table the rules core refuses.
REFUSALS: Final = (UsageError, TableFileError, ConfigError)


def refuse(err: TextIO, command: str, exc: UsageError | TableFileError | ConfigError) -> ExitCode:
    """A wrong option is a usage error; a file with a mistake is the command failing."""
    if isinstance(exc, UsageError):
        return usage_error(err, command, exc)
    return failure(err, command, exc)


def add_table_options(cmd: argparse.ArgumentParser, *, many_decks: bool) -> None:
    source = cmd.add_argument_group(
        "a configured table", "instead of --game and the options below it"
    )
    source.add_argument(
        "--config", type=Path, metavar="FILE", help="a shoe2mqtt TOML configuration file"
    )
    source.add_argument(
        "--table", metavar="ID", help="the table's id in --config (default: every table)"
    )
    source.add_argument(
        "--round-log", type=Path, metavar="FILE", help="a round log: its first, 'table' line"
    )
    builtin = cmd.add_argument_group("a table described here")
    builtin.add_argument(
        "--game",
        choices=[game.value for game in Game],
        action="append",
        help="the game (repeat for several; default: all three)",
    )
    builtin.add_argument(
        "--decks",
        type=int,
        nargs="+" if many_decks else None,
        help="decks in the shoe (default: the game's, 6 at blackjack, 8 at the others)",
    )
    builtin.add_argument(
        "--deck-kind",
        choices=[kind.value for kind in DeckKind],
        help="standard, or Spanish (no 10s); default: the game's",
    )
    builtin.add_argument(
        "--paytable",
        nargs="+",
        help="built-in paytable names (20 point bonus: A, B; Double Attack: regulation); "
        "default: every built-in one",
    )
    builtin.add_argument(
        "--soft-17",
        choices=["hit", "stand"],
        help="the dealer's soft-17 rule (default: the game's; Triple Attack hits)",
    )


def configured_tables(args: argparse.Namespace, err: TextIO) -> list[tuple[TableConfig, str]]:
    """The tables a --config or --round-log names, each with where it came from."""
    if args.config is not None and args.round_log is not None:
        raise UsageError("give --config or --round-log, not both")
    if args.round_log is not None:
        if args.table is not None:
            raise UsageError("--table goes with --config; a round log holds one table")
        return [(_round_log_table(args.round_log), f"round log {args.round_log}")]
    tables = _config_file_tables(args.config, err)
    if args.table is not None:
        tables = [t for t in tables if t.table_id == args.table]
        if not tables:
            raise TableFileError(f"{args.config}: no table with id {args.table!r}")
    return [(table, f"table {table.table_id} in {args.config}") for table in tables]


def _config_file_tables(path: Path, err: TextIO) -> list[TableConfig]:
    """Every table of a configuration file, checked as `shoe2mqtt check-config` checks it.

    A mistake outside the tables (a typo in `[mqtt]`, say) does not stop the analysis of a
    paytable: it is reported as a warning and the tables are read from the file as
    `load_config` reads them. The broker's files are not read: an analysis never connects.
    """
    from daemon.configuration.file import ConfigErrors, ConfigFileError, read_toml
    from daemon.configuration.service_config import load_config

    try:
        return [setup.table for setup in load_config(path, read_host_files=False).tables]
    except ConfigErrors as exc:
        in_tables = [e for e in exc.errors if e.field.startswith("table") or not e.field]
        if in_tables:
            raise TableFileError("\n".join(map(str, in_tables))) from None
        err.writelines(f"warning (not about the tables): {error}\n" for error in exc.errors)
    try:
        document, _ = read_toml(path)
    except ConfigFileError as exc:  # pragma: no cover - load_config read it a moment ago
        raise TableFileError(str(exc)) from None
    return [
        TableConfig.from_mapping({k: v for k, v in table.items() if k != "shoe"})
        for table in document.get("table", [])
    ]


def _round_log_table(path: Path) -> TableConfig:
    from daemon.round_log import ReplayError, read_table_line

    try:
        with path.open(encoding="utf-8") as log:
            for number, line in enumerate(log, start=1):
                if line.strip():
                    return read_table_line(number, line)
    except OSError as exc:
        raise TableFileError(f"cannot read {path}: {exc.strerror}") from None
    except ReplayError as exc:
        raise TableFileError(f"{path}: {exc}") from None
    raise TableFileError(f"{path}: the round log is empty")


def chosen_games(args: argparse.Namespace) -> list[Game]:
    return [Game(name) for name in args.game] if args.game else list(Game)
