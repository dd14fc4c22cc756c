"""`shoe2mqtt journal`: read the journal the way an auditor needs it.

    shoe2mqtt journal list   [--table ID]           every round, live or archived: a line each
    shoe2mqtt journal show   ROUND --table ID       the round's events and what was published
    shoe2mqtt journal export ROUND --table ID       the round as a replay log (docs/events.md)
    shoe2mqtt journal verify                        the hash chain through archive and database

The journal is read, never written (daemon/journal/audit.py). `show` replays the round from
the checkpoint before it, so the messages it prints are the ones the pit received, with their
`id`, `seq` and `ts`; `shoe2mqtt replay` on an exported round prints exactly the round's
settlements. `verify` exits 1 and names the first row or line changed, removed, inserted or
reordered, per table.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Final, TextIO

from daemon.cli.command import Command, failure, usage_error, write_config_errors
from daemon.cli.exit_codes import ExitCode
from daemon.config import DEFAULT_STATE_DIRECTORY, ConfigErrors, load_config
from daemon.journal import JOURNAL_FILE, JournalError
from daemon.journal.archive import ARCHIVE_DIRECTORY_NAME, Archive, ArchiveError
from daemon.journal.audit import JournalReader, RoundNotFound
from daemon.topics import Topics

if TYPE_CHECKING:
    import argparse


def _add_arguments(cmd: argparse.ArgumentParser) -> None:
    where = cmd.add_mutually_exclusive_group()
    where.add_argument("--config", type=Path, help="find the journal from this configuration")
    where.add_argument(
        "--state-directory",
        type=Path,
        help=f"the service's state directory (default: {DEFAULT_STATE_DIRECTORY})",
    )
    cmd.add_argument(
        "--archive-directory",
        type=Path,
        help="where the archive is (default: the configuration's, or archive/ in the state "
        "directory)",
    )
    actions = cmd.add_subparsers(dest="action", required=True, metavar="ACTION")
    listing = actions.add_parser("list", help="every round, live or archived, a line each")
    listing.add_argument("--table", help="only this table")
    for name, text in (
        ("show", "a round's events and every message it published, as published"),
        ("export", "a round as a replay log"),
    ):
        action = actions.add_parser(name, help=text)
        action.add_argument("round", type=int)
        action.add_argument("--table", required=True)
    actions.add_parser(
        "verify", help="check the hash chain of every table, through the archive and the journal"
    )


def journal_command(args: argparse.Namespace, out: TextIO, err: TextIO) -> ExitCode:
    try:
        # The journal is read, never the broker reached: its TLS and password files may be
        # missing here (a copy of a table PC's journal on a laptop).
        config = (
            load_config(args.config, read_host_files=False) if args.config is not None else None
        )
    except ConfigErrors as exc:
        write_config_errors(err, exc)
        return ExitCode.FAILURE
    directory = (
        config.state_directory
        if config is not None
        else (args.state_directory or DEFAULT_STATE_DIRECTORY)
    )
    archive_directory = args.archive_directory or (
        config.archive_path if config is not None else directory / ARCHIVE_DIRECTORY_NAME
    )
    path = directory / JOURNAL_FILE
    if not path.exists():
        return usage_error(err, "journal", f"no journal at {path}")
    topics = Topics(config.mqtt.base_topic) if config is not None else Topics()
    try:
        reader = JournalReader(path, Archive(archive_directory), topics)
    except (ArchiveError, JournalError) as exc:
        return failure(err, "journal", exc)
    try:
        return _act(args, reader, out, err)
    except (ArchiveError, JournalError) as exc:
        return failure(err, "journal", exc)
    finally:
        reader.close()


def _act(args: argparse.Namespace, reader: JournalReader, out: TextIO, err: TextIO) -> ExitCode:
    if args.action == "list":
        err.writelines(f"journal: {unread}\n" for unread in reader.unread)
        out.writelines(_line(found.to_mapping()) for found in reader.rounds(args.table))
        return ExitCode.OK
    if args.action == "verify":
        verdicts = reader.verify()
        out.writelines(f"{unread}\n" for unread in reader.unread)
        out.writelines(f"{verdict}\n" for verdict in verdicts)
        broken = [v for v in verdicts if not v.ok]
        if broken:
            problem = f"verify: the chain is broken at {len(broken)} of {len(verdicts)} tables"
            return failure(err, "journal", problem)
        if reader.unread:
            problem = f"verify: {len(reader.unread)} quarantined archive(s) not read"
            return failure(err, "journal", problem)
        return ExitCode.OK
    try:
        found = reader.find(args.table, args.round)
    except RoundNotFound as exc:
        return failure(err, "journal", exc)
    lines = reader.show(found) if args.action == "show" else reader.export(found)
    out.writelines(_line(line) for line in lines)
    return ExitCode.OK


def _line(record: object) -> str:
    return json.dumps(record, ensure_ascii=False) + "\n"


COMMAND: Final = Command(
    name="journal",
    help="read the journal: list rounds, show one as published, export it, verify the chain",
    description="Read the daemon's journal and its archive (read-only). Rounds are numbered "
    "per table.",
    add_arguments=_add_arguments,
    run=journal_command,
)
