"""A floor's numbers counted in DuckDB (daemon/numbers/floor_sql.py) against the same archive
folded round by round in Python (the records a table PC's own report counts): every group,
every field, the band and the text alike, for every grouping, shift boundaries in a time
zone with the night shift across midnight, a day range, a table chosen, a paytable posted,
and the archive read as it is or as its Parquet export."""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pytest

from daemon.numbers import floor, render
from daemon.numbers.floor_sql import floor_numbers
from daemon.numbers.periods import GROUPINGS, Grouped, Shifts
from daemon.simulator.tables import DEMO_TABLES
from daemon.testing.floor import Pace, write_journal
from rules.config import TableConfig
from rules.games import Game
from tests.built_once import built_once

if TYPE_CHECKING:
    from collections.abc import Iterator

    from duckdb import DuckDBPyConnection as Connection

    from daemon.numbers.tally import Numbers

START: Final = datetime(2026, 11, 27, tzinfo=UTC)
NIGHT: Final = Shifts.parse(("07:00", "15:00", "23:00"), "America/New_York")
# The archive is written by the journal's own store and archiver: seconds, more under load.
pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def floors(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Connection]]:
    """Two days of a blackjack and a Double Attack table, archived by the journal's own
    archiver (play from 21:00 UTC for three hours, across midnight and shifts),
    read as they are ("archive") and as their Parquet export ("parquet"); built once for the
    session's workers (tests/built_once.py)."""
    state = built_once(tmp_path_factory, "floor-sql-state", _two_days)
    archive = floor.connect([state / "archive"])
    parquet = floor.connect([state / "parquet"])
    yield {"archive": archive, "parquet": parquet}
    archive.close()
    parquet.close()


def _two_days(state: Path, contract: int | None = None) -> None:
    configs = [
        TableConfig.from_mapping(dict(DEMO_TABLES[g])) for g in (Game.BLACKJACK, Game.DOUBLE_ATTACK)
    ]
    pace = Pace(rounds_per_hour=30, opens=21, hours=3, dealer_minutes=50)
    asyncio.run(write_journal(state, configs, START, 2, pace, keep_days=0, contract=contract))
    with contextlib.closing(floor.connect([state / "archive"])) as archive:
        floor.export(archive, state / "parquet")


def _both(
    con: Connection, by: str, shifts: Shifts, **options: Any
) -> tuple[list[Numbers], list[Numbers]]:
    posted = options.pop("posted", {})
    sql = floor_numbers(con, by, shifts, posted, **options)
    return sql, floor.folded(con, Grouped(by, shifts, posted), **options)


def _same(sql: list[Numbers], fold: list[Numbers]) -> None:
    """Every field of every group, the band and any alert included (the band is the slow
    part: the text and CSV, made of the same fields, are compared once)."""
    assert [n.to_mapping() for n in sql] == [n.to_mapping() for n in fold]


@pytest.mark.parametrize("by", GROUPINGS)
def test_sql_counts_what_the_fold_counts(floors: dict[str, Connection], by: str) -> None:
    for shifts in (Shifts(), NIGHT):
        sql, fold = _both(floors["archive"], by, shifts)
        assert sum(n.rounds for n in fold) > 200
        assert sum(n.shoes for n in fold) > 2
        assert all(w.units for n in fold for w in n.wagers.values() if w.wager != "attack")
        _same(sql, fold)


def test_an_archive_of_contract_4_counts_what_contract_3_s_counts(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The same play journaled under console contract 4 (one round message an input, its
    events inside) and under 3 (a numbered message an event): the same numbers, by SQL and
    by the fold."""
    four = built_once(tmp_path_factory, "floor-sql-state-4", lambda state: _two_days(state, 4))
    three = built_once(tmp_path_factory, "floor-sql-state-3", lambda state: _two_days(state, 3))
    with (
        contextlib.closing(floor.connect([four / "archive"])) as con_four,
        contextlib.closing(floor.connect([three / "archive"])) as con_three,
    ):
        for by in ("shift", "dealer"):
            sql, fold = _both(con_four, by, NIGHT)
            _same(sql, fold)
            assert sum(n.rounds for n in fold) > 200
            expected = floor_numbers(con_three, by, NIGHT, {})
            assert [n.to_mapping() for n in sql] == [n.to_mapping() for n in expected]
        alone = con_four.execute(
            "SELECT count(*) FROM lines "
            "WHERE type = 'published' AND message->>'type' = 'settlement'"
        ).fetchone()
        assert alone == (0,)  # every settlement was carried by a round message


def test_a_day_range_a_table_and_a_posted_paytable(floors: dict[str, Connection]) -> None:
    day = "2026-11-27"
    options: dict[str, Any] = {"tables": ["bj-1"], "days": (day, day), "posted": {"bj-1": "B"}}
    sql, fold = _both(floors["archive"], "shift", NIGHT, **options)
    assert {n.key["table"] for n in fold} == {"bj-1"}
    _same(sql, fold)
    assert render.text(sql, 0.999) == render.text(fold, 0.999)
    assert render.as_csv(sql, 0.99) == render.as_csv(fold, 0.99)
    _same(*_both(floors["archive"], "dealer", Shifts(), days=(None, day)))


def test_the_parquet_export_gives_the_same_numbers(floors: dict[str, Connection]) -> None:
    for by in ("day", "dealer"):
        sql, fold = _both(floors["parquet"], by, NIGHT)
        _same(sql, fold)
        assert [n.to_mapping() for n in sql] == [
            n.to_mapping() for n in floor_numbers(floors["archive"], by, NIGHT, {})
        ]


def test_duckdb_is_held_to_its_limits_and_leaves_nothing_behind(
    floors: dict[str, Connection],
) -> None:
    """The report's DuckDB is bounded (memory, threads, a spill directory of its own), and its
    working database is detached and removed when the numbers are made."""
    con = floors["parquet"]
    floor_numbers(con, "day", Shifts(), {})
    settings = dict(
        con.execute(
            "SELECT name, value FROM duckdb_settings() WHERE name IN "
            "('memory_limit', 'threads', 'temp_directory')"
        ).fetchall()
    )
    assert settings["memory_limit"] == "1.8 GiB"  # 2 GB as DuckDB shows it
    assert settings["threads"] == "2"
    assert Path(settings["temp_directory"]).parent == Path(tempfile.gettempdir())
    databases = [
        r[0] for r in con.execute("SELECT database_name FROM duckdb_databases()").fetchall()
    ]
    assert "floor_work" not in databases
    assert not list(Path(tempfile.gettempdir()).glob(f"shoe2mqtt-work-{os.getpid()}-*"))
