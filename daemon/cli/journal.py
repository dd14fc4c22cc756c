"""`shoe2mqtt journal`: read the journal the way an auditor needs it.

    shoe2mqtt journal list   [--table ID]           every round: when, settlements, review
    shoe2mqtt journal show   ROUND --table ID       every event and settlement of one round
    shoe2mqtt journal export ROUND --table ID       the round as a replay log (docs/events.md)

The journal is read, never written: each table is replayed through the same table service
the daemon runs, quietly, and the rounds are told apart by the rules core's round ids.
`shoe2mqtt replay` on an exported round prints exactly the round's settlements.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TextIO

from daemon.cli.command import Command, failure, usage_error, write_config_errors
from daemon.cli.exit_codes import ExitCode
from daemon.config import DEFAULT_STATE_DIRECTORY, ConfigErrors, load_config
from daemon.envelope import Envelopes
from daemon.journal import JOURNAL_FILE, connect, read_events
from daemon.replay import round_log
from daemon.table_service import TableService
from daemon.topics import Topics
from rules.config import TableConfig

if TYPE_CHECKING:
    import argparse

    from daemon.journal import JournalEvent
    from rules.events import TableEvent


@dataclass(slots=True)
class RoundRecord:
    table: str
    round_id: int
    config: TableConfig
    started: str = ""
    ended: str = ""
    journal: list[JournalEvent] = field(default_factory=list)  # inbound, as journaled
    events: list[TableEvent] = field(default_factory=list)  # as the rules core applied them
    settlements: list[dict[str, Any]] = field(default_factory=list)
    notices: list[dict[str, Any]] = field(default_factory=list)
    review: list[str] = field(default_factory=list)
    voided: bool = False


class _RoundCutter:
    """Replays one table's journal through a quiet table service and sorts it into rounds."""

    def __init__(self, table_id: str, config: TableConfig) -> None:
        self.table_id = table_id
        self.service = TableService(config, Topics(), Envelopes(table_id))
        self.service.recorder = self._applied
        self.rounds: dict[int, RoundRecord] = {}

    def _round(self, round_id: int) -> RoundRecord:
        if round_id not in self.rounds:
            self.rounds[round_id] = RoundRecord(self.table_id, round_id, self.service.config)
        return self.rounds[round_id]

    def _applied(self, event: TableEvent, round_id: int | None) -> None:
        if round_id is not None:
            self._round(round_id).events.append(event)

    def _current(self) -> tuple[int | None, int | None]:
        """(the open round's id, the latest round's id, open or not)."""
        latest = self.service.round_id
        return (latest if self.service.engine.round_open else None), latest

    def take(self, entry: JournalEvent) -> None:
        open_before, latest_before = self._current()
        messages = self.service.apply_record(entry.kind, entry.body, entry.at)
        _, latest_after = self._current()
        # An entry belongs to the round it was in, or to the round it opened; the rest
        # (shuffles, burn cards, link changes between rounds) belongs to no round.
        owner = open_before
        if owner is None and latest_after is not None and latest_after != latest_before:
            owner = latest_after
        if owner is not None:
            current = self._round(owner)
            current.journal.append(entry)
            current.started = current.started or entry.at
            current.ended = entry.at
            current.review = list(self.service.review)
        for message in messages:
            self._output(json.loads(message.payload))

    def _output(self, body: dict[str, Any]) -> None:
        round_id = body.get("round")
        if not isinstance(round_id, int) or round_id not in self.rounds:
            return
        owner = self.rounds[round_id]
        if body["type"] == "settlement":
            owner.settlements.append(body)
        elif body["type"] == "notice":
            owner.notices.append(body)
        elif body["type"] == "round_ended":
            owner.voided = bool(body.get("voided"))


def rounds_of(events: list[JournalEvent], table_id: str) -> list[RoundRecord]:
    """Replay one table's journal and cut it into rounds."""
    configs = [e for e in events if e.kind == "config"]
    if not configs:
        return []
    cutter = _RoundCutter(table_id, TableConfig.from_mapping(configs[0].body["table"]))
    with cutter.service.replaying():
        for entry in events:
            cutter.take(entry)
    return [cutter.rounds[k] for k in sorted(cutter.rounds)]


def load_rounds(path: Path, table: str | None) -> list[RoundRecord]:
    db = connect(path, read_only=True)
    try:
        events = read_events(db)
    finally:
        db.close()
    tables = sorted({e.table_id for e in events} if table is None else {table})
    return [r for t in tables for r in rounds_of([e for e in events if e.table_id == t], t)]


def _add_arguments(cmd: argparse.ArgumentParser) -> None:
    where = cmd.add_mutually_exclusive_group()
    where.add_argument("--config", type=Path, help="find the journal from this configuration")
    where.add_argument(
        "--state-directory",
        type=Path,
        help=f"the service's state directory (default: {DEFAULT_STATE_DIRECTORY})",
    )
    actions = cmd.add_subparsers(dest="action", required=True, metavar="ACTION")
    listing = actions.add_parser("list", help="every round, a line each")
    listing.add_argument("--table", help="only this table")
    for name, text in (
        ("show", "every event and settlement of a round"),
        ("export", "a round as a replay log"),
    ):
        action = actions.add_parser(name, help=text)
        action.add_argument("round", type=int)
        action.add_argument("--table", required=True)


def journal_command(args: argparse.Namespace, out: TextIO, err: TextIO) -> ExitCode:
    try:
        directory = (
            # The journal is read, never the broker reached: its TLS and password files
            # may be missing here (a copy of a table PC's journal on a laptop).
            load_config(args.config, read_host_files=False).state_directory
            if args.config is not None
            else (args.state_directory or DEFAULT_STATE_DIRECTORY)
        )
    except ConfigErrors as exc:
        write_config_errors(err, exc)
        return ExitCode.FAILURE
    path = directory / JOURNAL_FILE
    if not path.exists():
        return usage_error(err, "journal", f"no journal at {path}")
    rounds = load_rounds(path, args.table)
    if args.action == "list":
        out.writelines(json.dumps(_summary(record)) + "\n" for record in rounds)
        return ExitCode.OK
    found = [r for r in rounds if r.round_id == args.round]
    if not found:
        return failure(err, "journal", f"no round {args.round} at table {args.table}")
    record = found[0]
    if args.action == "export":
        out.writelines(line + "\n" for line in round_log(record.config, record.events))
        return ExitCode.OK
    out.writelines(
        json.dumps({"journal": entry.rowid, "at": entry.at, "kind": entry.kind, **entry.body})
        + "\n"
        for entry in record.journal
    )
    out.writelines(json.dumps(item) + "\n" for item in [*record.settlements, *record.notices])
    return ExitCode.OK


def _summary(record: RoundRecord) -> dict[str, object]:
    """A round in `journal list`: when, how much happened, and what a person must review."""
    return {
        "table": record.table,
        "round": record.round_id,
        "started": record.started,
        "ended": record.ended,
        "events": len(record.journal),
        "settlements": len(record.settlements),
        "voided": record.voided,
        "review": record.review,
    }


COMMAND: Final = Command(
    name="journal",
    help="read the journal: list rounds, show one, export it as a replay log",
    description="Read the daemon's journal (read-only). Rounds are numbered per table.",
    add_arguments=_add_arguments,
    run=journal_command,
)
