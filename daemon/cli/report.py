"""`shoe2mqtt report`: the pit's numbers from the journal, per table, shift, day or dealer.

    shoe2mqtt report [--by table|shift|day|dealer|floor] [--table ID] [--from DAY] [--to DAY]
                     [--format text|csv|json] [--plot FILE.png] [--posted ID=PAYTABLE]
    shoe2mqtt report --archive DIR [DIR ...]             a floor: many table PCs' archives
    shoe2mqtt report --archive DIR --export parquet --output OUT

From one table PC's journal (live and archived rounds alike: --config, --state-directory,
--archive-directory as `journal` takes them), or, with --archive, from the archive
directories many table PCs copied to one server, read by DuckDB (daemon/numbers/floor.py).
Read-only. docs/numbers.md says what every figure is.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Final, TextIO

from daemon.cli.command import Command, failure, usage_error, write_config_errors
from daemon.cli.exit_codes import ExitCode
from daemon.numbers.periods import DEFAULT_SHIFTS, GROUPINGS, Shifts, ShiftsError

if TYPE_CHECKING:
    import argparse

    from daemon.numbers.records import RoundRecord, ShoeRecord
    from daemon.numbers.tally import Numbers

FORMATS: Final = ("text", "csv", "json")


def _add_arguments(cmd: argparse.ArgumentParser) -> None:
    where = cmd.add_mutually_exclusive_group()
    where.add_argument(
        "--config", type=Path, metavar="FILE",
        help="find the journal (and the shifts) from this configuration file",
    )  # fmt: skip
    where.add_argument(
        "--state-directory", type=Path, metavar="DIR",
        help="the service's state directory (default: /var/lib/shoe2mqtt)",
    )  # fmt: skip
    where.add_argument(
        "--archive", type=Path, nargs="+", metavar="DIR",
        help="archive directories of many table PCs (a floor), read with DuckDB",
    )  # fmt: skip
    cmd.add_argument(
        "--archive-directory", type=Path, metavar="DIR",
        help="where one PC's archive is (default: the configuration's, or archive/ in the "
        "state directory)",
    )  # fmt: skip
    cmd.add_argument(
        "--by", choices=GROUPINGS, default="table", help="group rounds by (default: table)"
    )
    cmd.add_argument(
        "--table", action="append", metavar="ID", help="only this table (repeat for more)"
    )
    cmd.add_argument(
        "--from", dest="first_day", metavar="DAY", help="from this gaming day (YYYY-MM-DD)"
    )
    cmd.add_argument(
        "--to", dest="last_day", metavar="DAY", help="through this gaming day (YYYY-MM-DD)"
    )
    cmd.add_argument(
        "--format", choices=FORMATS, default="text", help="text (default), csv or json"
    )
    cmd.add_argument(
        "--plot", type=Path, metavar="FILE", help="also draw the numbers as a PNG chart"
    )
    cmd.add_argument(
        "--posted", action="append", default=[], metavar="ID=PAYTABLE",
        help="the paytable table ID posts (A, B, regulation), when its configuration may say "
        "otherwise: the hold is held against the posted paytable's figures",
    )  # fmt: skip
    cmd.add_argument(
        "--confidence", type=float, default=None, metavar="P",
        help="the band's confidence, both sides together (default: --config's, or 0.999)",
    )  # fmt: skip
    cmd.add_argument(
        "--shifts", metavar="HH:MM,...", default=None,
        help="the times shifts begin (default: --config's [numbers] shifts, or "
        f"{','.join(DEFAULT_SHIFTS)})",
    )  # fmt: skip
    cmd.add_argument(
        "--timezone", default=None, metavar="ZONE", help="the casino's time zone (default: UTC)"
    )
    cmd.add_argument(
        "--export", choices=("parquet",), default=None,
        help="with --archive: write the floor's rounds and settlements as Parquet, partitioned "
        "by table and day, to --output",
    )  # fmt: skip
    cmd.add_argument("--output", type=Path, metavar="DIR", help="where --export writes")


def _posted(values: list[str]) -> dict[str, str]:
    posted = {}
    for value in values:
        table, sep, paytable = value.partition("=")
        if not sep or not table or not paytable:
            raise ValueError(f"--posted {value!r}: say ID=PAYTABLE, such as bj-1=A")
        posted[table] = paytable
    return posted


def _confidence(value: float) -> float:
    if not 0.5 <= value < 1:
        raise ValueError(f"--confidence {value}: between 0.5 and 1 (0.999 is 99.9 %)")
    return value


def report_command(args: argparse.Namespace, out: TextIO, err: TextIO) -> ExitCode:
    try:
        posted = _posted(args.posted)
    except ValueError as exc:
        return usage_error(err, "report", exc)
    if args.export is not None and (args.archive is None or args.output is None):
        return usage_error(
            err, "report", "--export reads a floor's --archive and writes to --output"
        )
    settings = _settings(args, err)
    if isinstance(settings, ExitCode):
        return settings
    shifts, journal = settings
    try:
        confidence = _confidence(args.confidence)
    except ValueError as exc:
        return usage_error(err, "report", exc)
    if args.archive is not None:
        from daemon.cli.report_floor import floor_report

        return floor_report(args, shifts, posted, confidence, out, err, write_report)
    assert journal is not None
    return _journal_report(args, journal, shifts, posted, confidence, out, err)


def _settings(
    args: argparse.Namespace, err: TextIO
) -> tuple[Shifts, tuple[Path, Path, str] | None] | ExitCode:
    """The shifts, and where one PC's journal and archive are (None: a floor's archives)."""
    from daemon.configuration.file import ConfigErrors
    from daemon.configuration.service_config import DEFAULT_STATE_DIRECTORY, load_config
    from daemon.journal.archive import ARCHIVE_DIRECTORY_NAME
    from daemon.numbers.settings import NumbersConfig

    try:
        config = None if args.config is None else load_config(args.config, read_host_files=False)
    except ConfigErrors as exc:
        write_config_errors(err, exc)
        return ExitCode.FAILURE
    numbers = config.numbers if config is not None else NumbersConfig()
    if args.confidence is None:
        args.confidence = numbers.confidence
    args.surveillance = None if config is None else config.surveillance  # its count system
    try:
        shifts = Shifts.parse(
            args.shifts.split(",") if args.shifts else numbers.shifts,
            args.timezone or numbers.timezone,
        )
    except ShiftsError as exc:
        return usage_error(err, "report", exc)
    if args.archive is not None:
        return shifts, None
    directory = config.state_directory if config is not None else (
        args.state_directory or DEFAULT_STATE_DIRECTORY
    )  # fmt: skip
    archive = args.archive_directory or (
        config.archive_path if config is not None else directory / ARCHIVE_DIRECTORY_NAME
    )
    base = config.mqtt.base_topic if config is not None else "shoe2mqtt"
    return shifts, (directory, archive, base)


def _journal_report(
    args: argparse.Namespace,
    journal: tuple[Path, Path, str],
    shifts: Shifts,
    posted: dict[str, str],
    confidence: float,
    out: TextIO,
    err: TextIO,
) -> ExitCode:
    from daemon.history.audit import JournalReader
    from daemon.journal import JOURNAL_FILE, JournalError
    from daemon.journal.archive import Archive, ArchiveError
    from daemon.numbers import sources
    from daemon.numbers.periods import Grouped
    from daemon.wire.topics import Topics

    directory, archive, base = journal
    path = directory / JOURNAL_FILE
    if not path.exists():
        return usage_error(err, "report", f"no journal at {path}")
    try:
        reader = JournalReader(path, Archive(archive), Topics(base))
    except (ArchiveError, JournalError) as exc:
        return failure(err, "report", exc)
    stands = sources.Stands() if args.surveillance is None else sources.Stands(args.surveillance)
    try:
        grouped = Grouped(args.by, shifts, posted)
        for record in sources.records(reader, args.table, stands=stands):
            if _wanted(record, args, shifts):
                grouped.add(record)
    except (ArchiveError, JournalError) as exc:
        return failure(err, "report", exc)
    finally:
        reader.close()
    if args.last_day is None:  # the report reaches the journal's end: how each table stands
        stands.add_sections(grouped)
    return write_report(grouped.numbers(), args, confidence, out, err)


def _wanted(record: RoundRecord | ShoeRecord, args: argparse.Namespace, shifts: Shifts) -> bool:
    day = shifts.day_label(record.started)
    return (args.first_day is None or day >= args.first_day) and (
        args.last_day is None or day <= args.last_day
    )


def write_report(
    groups: list[Numbers], args: argparse.Namespace, confidence: float, out: TextIO, err: TextIO
) -> ExitCode:
    from daemon.numbers import render

    if args.format == "json":
        out.write(render.as_json(groups, confidence))
    elif args.format == "csv":
        out.write(render.as_csv(groups, confidence))
    else:
        out.write(render.text(groups, confidence) if groups else "no rounds\n")
    if args.plot is not None:
        from daemon.numbers.plot import draw

        try:
            draw(groups, confidence, args.plot)
        except ImportError:
            return failure(err, "report", "--plot needs matplotlib: install shoe2mqtt[plot]")
        err.write(f"report: chart written to {args.plot}\n")
    return ExitCode.OK


COMMAND: Final = Command(
    description="The pit's numbers from the journal (live and archived rounds alike): pace, "
    "and per bonus wager its handle, win and hold beside the exact theoretical hold and its "
    "band, per table, shift, gaming day, dealer or floor. Read-only.",
    add_arguments=_add_arguments,
    run=report_command,
)
