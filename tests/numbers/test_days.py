"""The closed days' count stops reading at the first round of the day still open: a restart
late in a busy day must not replay all of today to count the days before it; and a table
that journaled nothing before today needs no count at all."""

from __future__ import annotations

import asyncio
import shutil
from collections import Counter
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

import pytest

from daemon.history.audit import JournalReader
from daemon.journal import JOURNAL_FILE, database
from daemon.journal.archive import ARCHIVE_DIRECTORY_NAME, MANIFEST, Archive
from daemon.numbers import days, sources
from daemon.numbers.periods import Shifts
from daemon.simulator.tables import DEMO_TABLES
from daemon.testing.floor import Pace, write_journal
from rules.config import TableConfig
from rules.games import Game

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

START = datetime(2026, 11, 27, tzinfo=UTC)
SHIFTS = Shifts.parse(("06:00", "14:00", "22:00"))


async def test_the_days_before_today_are_counted_without_reading_today(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = TableConfig.from_mapping(dict(DEMO_TABLES[Game.BLACKJACK]))
    pace = Pace(rounds_per_hour=30, opens=8, hours=4)
    await write_journal(tmp_path, [config], START, 3, pace)
    today = date(2026, 11, 29)  # the journal's third day: still open
    reader = JournalReader(tmp_path / JOURNAL_FILE, Archive(tmp_path / ARCHIVE_DIRECTORY_NAME))
    # Each day's rounds as the journal's rounds table dates them: apart from the count.
    expected = Counter(
        SHIFTS.day_label(datetime.fromisoformat(entry.started))
        for entry in database.read_rounds(reader.db, config.table_id)
    )
    assert expected[today.isoformat()] > 0
    read = Counter[str]()
    table_lines = sources.table_lines

    def counted(*args: object, **kwargs: object) -> Iterator[dict[str, object]]:
        for line in table_lines(*args, **kwargs):  # type: ignore[arg-type]
            read["lines"] += 1
            yield line

    try:
        total = sum(1 for _ in table_lines(reader, config.table_id))
        monkeypatch.setattr(sources, "table_lines", counted)
        counted_days = days.count_days(
            reader, config.table_id, SHIFTS, today - timedelta(days=5), today
        )
    finally:
        reader.close()
    assert {n.key["day"]: n.rounds for n in counted_days} == {
        day: rounds for day, rounds in expected.items() if day < today.isoformat()
    }
    assert read["lines"] < total * 3 / 4  # the third day's lines were not read


def test_only_a_table_that_journaled_before_today_may_hold_closed_days(tmp_path: Path) -> None:
    """The journal's first event decides, by its stamp against the gaming day's start; an
    archive, or a journal that cannot be read, leaves every table to the count."""
    config = TableConfig.from_mapping(dict(DEMO_TABLES[Game.BLACKJACK]))
    asyncio.run(write_journal(tmp_path, [config], START, 1, Pace(rounds_per_hour=4, opens=8)))
    journal, archive = tmp_path / JOURNAL_FILE, tmp_path / ARCHIVE_DIRECTORY_NAME
    tables = ("bj-1", "bj-9")  # bj-9: a table the journal has not met
    # The table's first event (its configuration) is stamped 2026-11-26 08:00 UTC.
    first_day = datetime(2026, 11, 26, 6, tzinfo=UTC)
    assert days.may_hold_closed_days(journal, archive, tables, first_day) == set()
    next_day = first_day + timedelta(days=1)
    assert days.may_hold_closed_days(journal, archive, tables, next_day) == {"bj-1"}
    # The same instant in another zone: 03:00 in New York is 08:00 UTC, the first event's.
    at_eight = datetime(2026, 11, 26, 3, tzinfo=ZoneInfo("America/New_York"))
    assert days.may_hold_closed_days(journal, archive, tables, at_eight) == set()
    odd = tmp_path / "state #1?" / JOURNAL_FILE  # a directory name a URI must escape
    odd.parent.mkdir()
    shutil.copy(journal, odd)
    assert days.may_hold_closed_days(odd, archive, tables, next_day) == {"bj-1"}
    missing = tmp_path / "nowhere.db"
    assert days.may_hold_closed_days(missing, archive, tables, first_day) == set(tables)
    archive.mkdir(exist_ok=True)
    (archive / MANIFEST).write_text("{}", encoding="utf-8")  # exists: its content is not read
    assert Archive(archive).exists
    assert days.may_hold_closed_days(journal, archive, tables, first_day) == set(tables)


@pytest.mark.parametrize(
    ("at", "before"),
    [
        ("2026-11-26T05:59:59.999+00:00", True),
        ("2026-11-26T06:00:00.000+00:00", False),
        ("2026-11-26T01:00:00.000-05:00", False),  # 06:00 UTC
        ("2026-11-26T08:00:00.000", True),  # no offset: counted, as it always was
        ("not a time", True),
        (None, True),
    ],
)
def test_a_stamp_that_does_not_read_as_a_time_leaves_its_table_to_the_count(
    at: object, *, before: bool
) -> None:
    assert days.stamped_before(at, datetime(2026, 11, 26, 6, tzinfo=UTC)) is before
