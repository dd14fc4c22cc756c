"""`shoe2mqtt journal`: read the journal the way an auditor needs it.

    shoe2mqtt journal list   [--table ID]           every round, live or archived: a line each
    shoe2mqtt journal show   ROUND --table ID       the round's events and what was published
    shoe2mqtt journal export ROUND --table ID       the round as a replay log (docs/events.md)
    shoe2mqtt journal verify                        the hash chain through archive and database

Where the journal is (--config FILE, --state-directory DIR, --archive-directory DIR) may be
said before the action or after it.

The journal is read, never written (daemon/history/audit.py). `show` replays the round from
the checkpoint before it, so the messages it prints are the ones the pit received, with their
`id`, `seq` and `ts`; `shoe2mqtt replay` on an exported round prints exactly the round's
settlements. `verify` exits 1 and names the first row or line changed, removed, inserted or
reordered, per table.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Final, TextIO

from daemon.cli.command import Command, failure, usage_error, write_config_errors
from daemon.cli.exit_codes import ExitCode
from daemon.configuration.file import ConfigErrors
from daemon.configuration.service_config import DEFAULT_STATE_DIRECTORY, load_config
from daemon.history.audit import JournalReader, RoundNotFound
from daemon.journal import JOURNAL_FILE, JournalError
from daemon.journal.archive import ARCHIVE_DIRECTORY_NAME, Archive, ArchiveError
from daemon.wire.topics import Topics


def _add_arguments(cmd: argparse.ArgumentParser) -> None:
    # Where the journal is may be said before the action or after it, as a person types it
    # (`journal --config FILE list`, `journal list --config FILE`): each action's parser
    # has the same options, with no default of its own so that it never hides one said
    # before it (argparse lets a subparser's defaults overwrite its parent's values).
    _add_whereabouts(cmd, default=None)
    actions = cmd.add_subparsers(dest="action", required=True, metavar="ACTION")
    listing = _add_action(actions, "list", "every round, live or archived, a line each")
    listing.add_argument("--table", metavar="ID", help="only this table's rounds")
    for name, text in (
        ("show", "a round's events and every message it published, as published"),
        ("export", "a round as a replay log (docs/events.md)"),
    ):
        action = _add_action(actions, name, text)
        action.add_argument(
            "round", type=int, metavar="ROUND", help="the round's number at its table (`list`)"
        )
        action.add_argument("--table", metavar="ID", required=True, help="the round's table")
    _add_action(
        actions,
        "verify",
        "check the hash chain of every table, through the archive and the journal",
    )


def _add_action(
    actions: argparse._SubParsersAction[argparse.ArgumentParser], name: str, text: str
) -> argparse.ArgumentParser:
    action = actions.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".")
    _add_whereabouts(action, default=argparse.SUPPRESS)
    return action


def _add_whereabouts(cmd: argparse.ArgumentParser, *, default: object) -> None:
    """--config, --state-directory and --archive-directory: where the journal is."""
    where = cmd.add_mutually_exclusive_group()
    where.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        default=default,
        help="find the journal from this configuration file (off the table PC: its copy)",
    )
    where.add_argument(
        "--state-directory",
        type=Path,
        metavar="DIR",
        default=default,
        help=f"the service's state directory (default: {DEFAULT_STATE_DIRECTORY})",
    )
    cmd.add_argument(
        "--archive-directory",
        type=Path,
        metavar="DIR",
        default=default,
        help="where the archive is (default: the configuration's, or archive/ in the state "
        "directory)",
    )


def journal_command(args: argparse.Namespace, out: TextIO, err: TextIO) -> ExitCode:
    if args.config is not None and args.state_directory is not None:
        # Each level refuses both at once; said one before the action and one after, they
        # reach here together.
        return usage_error(
            err, "journal", "--config and --state-directory both say where the journal is: give one"
        )
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
    description="Read the daemon's journal and its archive (read-only). Rounds are numbered "
    "per table.",
    add_arguments=_add_arguments,
    run=journal_command,
)
