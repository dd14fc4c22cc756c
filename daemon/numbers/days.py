"""A table's closed gaming days, for the display's numbers page: `<table>/days`.

Each day's numbers are the report's (`shoe2mqtt report --by day`, the same folder and the
same `Numbers`), read from the table's archive and live journal (`sources.py`) by a
read-only snapshot, in a process of its own at the lowest CPU priority (`count_apart`: this
module run as `python -m daemon.numbers.days`): a month of the live journal is replayed
event by event, minutes of one core that must not hold the tables' event loop back. The
daemon counts them at start (the last `DAYS` days before today) and again when a day closes
(a table's first round of the next gaming day), then only the days since the last it
counted. Today is not among them: it is not over, and its current shift is `<table>/stats`.

The state is a pure function of the journal, like `<table>/stats`, and is not journaled; it
carries no envelope: the table, when it was counted, and its days, oldest first.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sqlite3
import sys
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from daemon.history.audit import JournalReader
from daemon.journal import database, schema
from daemon.journal.archive import Archive
from daemon.journal.errors import JournalError
from daemon.numbers import sources
from daemon.numbers.periods import Shifts
from daemon.numbers.records import RoundFolder, RoundRecord
from daemon.numbers.tally import Numbers
from daemon.system.parent import end_with_parent
from daemon.wire.topics import Topics

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

DAYS: Final = 30  # the closed days the state carries: a month of the table's days
COMMAND: Final = (sys.executable, "-m", "daemon.numbers.days")
_LIMIT: Final = 1 << 26  # bytes of the answer's one line
_MARGIN: Final = timedelta(days=2)  # archive files are named by UTC day, gaming days local


def count_days(
    reader: JournalReader, table_id: str, shifts: Shifts, since: date, before: date
) -> list[Numbers]:
    """The table's gaming days from `since` up to (not including) `before`, each with rounds,
    oldest first (the archive's and the live journal's rounds alike, as `sources` reads them).
    The reading stops at the first round of `before` or later: the rounds come in the
    journal's order, and what follows is the days still open (after a restart late in a busy
    day, all of today's rounds, which replaying cost minutes of a core). A round stamped in
    a closed day after one stamped in `before` (the clock stepped back across the day's
    start) is not counted: the clock's step is told when it happens (`clock.stepped`)."""
    first, last = since.isoformat(), before.isoformat()
    days: dict[str, Numbers] = {}
    folder, counting = RoundFolder(table_id), None
    for line in sources.table_lines(reader, table_id, (since - _MARGIN).isoformat()):
        for record in folder.feed(line):
            if isinstance(record, RoundRecord):
                day = shifts.day_label(record.started)
                counting = None
                if day >= last:
                    return [days[d] for d in sorted(days)]
                if first <= day:
                    if (counting := days.get(day)) is None:
                        counting = days[day] = Numbers({"table": table_id, "day": day})
                    counting.add(record)
            elif counting is not None:  # a shoe counts where the table's last round did
                counting.add_shoe(record)
    return [days[d] for d in sorted(days)]


@dataclass(slots=True)
class TableDays:
    """One table's closed days as last counted, and how far they reach."""

    table: str
    through: date | None = None  # the last day counted (closed), rounds or none
    days: list[dict[str, Any]] = field(default_factory=list)
    updated: str | None = None

    def since(self, today: date) -> date:
        """The first day still to count before `today`."""
        oldest = today - timedelta(days=DAYS)
        return oldest if self.through is None else max(self.through + timedelta(1), oldest)

    def take(self, counted: list[dict[str, Any]], today: date) -> None:
        """`counted` days, up to the day before `today`, after those held (the oldest let go)."""
        self.days.extend(counted)
        oldest = (today - timedelta(days=DAYS)).isoformat()
        self.days = [d for d in self.days if d["day"] >= oldest][-DAYS:]
        self.through = today - timedelta(days=1)
        self.updated = datetime.now(UTC).isoformat(timespec="milliseconds")

    def state(self) -> dict[str, Any]:
        return {"table": self.table, "updated": self.updated, "days": list(self.days)}

    def payload(self) -> bytes:
        return json.dumps(self.state(), separators=(",", ":")).encode()


def may_hold_closed_days(
    journal: Path, archive: Path, tables: Iterable[str], opened: datetime
) -> set[str]:
    """Of `tables`, those whose days before the gaming day `opened` began may hold a round:
    all of them once anything is archived; else each whose first event in the live journal
    is stamped before `opened`, or cannot be read. The others have journaled nothing before
    today (a new table PC, a table first dealt today): their count is no day, known without
    the counting process (half a second of a core at every start). Blocking: a thread's."""
    wanted = list(tables)
    if Archive(archive).exists:
        return set(wanted)
    try:
        with contextlib.closing(schema.connect(journal, read_only=True)) as db:
            first = {table: database.first_stamp(db, table) for table in wanted}
    except (sqlite3.Error, JournalError):  # missing, unreadable, of another schema
        return set(wanted)
    return {table for table, at in first.items() if at is not None and stamped_before(at, opened)}


def stamped_before(at: object, moment: datetime) -> bool:
    """Whether a journaled stamp is before `moment`; one that does not read as a time, or
    as a time with its offset, is taken to be (its table is counted, as it always was)."""
    try:
        return datetime.fromisoformat(str(at)) < moment
    except (ValueError, TypeError):  # TypeError: a time without an offset
        return True


async def count_apart(job: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Each table's days of `job` (below, `count_job`), counted by a process of its own;
    killed if the daemon stops meanwhile. Raises RuntimeError when it fails."""
    process = await asyncio.create_subprocess_exec(
        *COMMAND,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=_LIMIT,
    )
    try:
        # `parent`: the count ends with this process, killed or not (daemon.system.parent).
        out, err = await process.communicate(json.dumps({**job, "parent": os.getpid()}).encode())
    except BaseException:
        if process.returncode is None:
            process.kill()
        await process.wait()
        raise
    if process.returncode != 0:
        said = err.decode(errors="replace").strip().splitlines()[-3:]
        raise RuntimeError(f"the days' count exited with {process.returncode}: {said}")
    answer: dict[str, list[dict[str, Any]]] = json.loads(out)
    return answer


def count_job(job: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """`job`: the journal and archive paths, the base topic, the shifts, their time zone, the
    band's confidence, and `tables`: each table's [since, before] (ISO dates). The answer:
    each table's days, as `report --by day --format json` gives a group."""
    shifts = Shifts.parse(job["shifts"], job["timezone"])
    reader = JournalReader(Path(job["journal"]), Archive(Path(job["archive"])), Topics(job["base"]))
    try:
        known = set(reader.tables())
        return {
            table: [
                n.to_mapping(job["confidence"])
                for n in count_days(reader, table, shifts, date.fromisoformat(since),
                                    date.fromisoformat(before))
            ]
            if table in known
            else []  # a table the journal has not met yet
            for table, (since, before) in job["tables"].items()
        }  # fmt: skip
    finally:
        reader.close()


def main() -> None:
    """The job on standard input, the answer on standard output, one line."""
    with contextlib.suppress(OSError):  # the unit's system call filter refuses it (EPERM)
        os.nice(19)  # the tables' own work comes first
    job = json.loads(sys.stdin.buffer.read())
    end_with_parent(job.get("parent"))
    answer = count_job(job)
    sys.stdout.write(json.dumps(answer, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
