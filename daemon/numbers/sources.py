"""Where a table's round-log lines come from: its archive, then its live journal.

The only part of the numbers that reads files. The archive's day files are read as they
are; the live journal's events are replayed from where the archive ends (the checkpoint the
archive's last file ends at, or the table's first event) by the replay every tool shares,
which makes the very lines the archive would write for them (`archive_lines`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from daemon.journal import database
from daemon.numbers.records import RoundFolder
from daemon.table.log_lines import archive_lines, table_line
from daemon.table.runner import TableRunner
from daemon.table.surveillance import SurveillanceConfig, render_summary

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping

    from daemon.history.audit import JournalReader
    from daemon.numbers.periods import Grouped
    from daemon.numbers.records import RoundRecord, ShoeRecord


def table_lines(
    reader: JournalReader,
    table_id: str,
    since_day: str | None = None,
    stands: Stands | None = None,
) -> Iterator[dict[str, Any]]:
    """Every line of the table's round log: archived days first, then the live journal;
    with `since_day` (an ISO date), no archive file of an earlier (UTC) day: each file
    begins with the table's settings, so what follows reads alone. With `stands`, the
    table's surveillance as the journal ends (its `summary()`, under `stands`' settings)
    goes into `stands.summaries` once the last line is read."""
    for file in reader.archive_files(table_id):
        if since_day is not None and file.day < since_day:
            continue
        for _, line in reader.archive.lines(file):
            yield line
    db = reader.db
    table = database.read_table(db, table_id)
    base = database.read_checkpoint(db, table_id, table.archived_n) if table.archived_n else None
    first = None if base is not None else database.first_config(db, table_id)
    if base is None and first is None:
        return  # a table the journal names but holds no event of
    replay = TableRunner.begin(
        table, reader.topics, reader.epoch, checkpoint=base, first_config=first,
        record_rules=True,
    )  # fmt: skip
    if stands is not None:
        replay.service.surveillance.configure(stands.settings)  # surveillance hook
    yield table_line(replay.service.config)
    for event in database.iter_events(db, table_id, after=replay.n):
        yield from archive_lines(event, replay.apply_stored(event))
    if stands is not None:
        stands.summaries[table_id] = replay.service.surveillance.summary()


@dataclass(slots=True)
class Stands:
    """Where `table_lines` leaves each table's surveillance summary, and its settings."""

    settings: SurveillanceConfig = field(default_factory=SurveillanceConfig)
    summaries: dict[str, dict[str, Any]] = field(default_factory=dict)

    def add_sections(self, grouped: Grouped) -> None:
        """Each table's surveillance as the journal ends (the shoe in play, each seat's
        session and its evidence): a section of the group that holds the table's last round."""
        for table, summary in self.summaries.items():
            group = grouped.last_group(table)
            if group is not None:
                group.sections.setdefault("surveillance", []).extend(render_summary(summary))


def records(
    reader: JournalReader,
    tables: list[str] | None = None,
    dealer_of: Callable[[str, Mapping[str, Any]], str | None] | None = None,
    stands: Stands | None = None,
) -> Iterator[RoundRecord | ShoeRecord]:
    """The round and shoe records of every table (or of `tables`), table by table (and,
    with `stands`, each table's surveillance as the journal ends: `table_lines`)."""
    for table_id in tables if tables is not None else reader.tables():
        folder = RoundFolder(table_id) if dealer_of is None else RoundFolder(table_id, dealer_of)
        for line in table_lines(reader, table_id, stands=stands):
            yield from folder.feed(line)
        yield from folder.finish()
