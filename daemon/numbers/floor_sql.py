"""A floor's numbers counted inside DuckDB: Python gets each group's sums, never its rounds.

`report --archive` over a month of a hundred tables is millions of rounds; folding each in
Python (daemon/numbers/tally.py) takes about 120 µs a round. Here the same counting is SQL
over the floor's `rounds`, `settlements` and `shoes` (daemon/numbers/floor.py), and what
comes back to Python is small: per group, the round counts and sums; per group and wager
kind, the money; per group, wager kind, table settings and stake in cents, how many units
were wagered at that stake (the band's input: a stake with its multiplicity is the same
distribution, `rules.analysis.band.band_counted`); and one row per shoe (a few per table and
day) for the penetration. The result is the same `Numbers` the fold gives, field for field
(tests/numbers/test_floor_sql.py holds the two to that):

- a round's shift and gaming day come from the shift boundaries `Shifts` itself labels, one
  row per boundary over the floor's time span, joined to each round by its start (ASOF);
- the hours of play are the fold's: per group and table, in order of start, each round
  counts up to the next one's start, or its own length after a break or as the last one;
- a shoe counts where its table's last round before the next shoe's start was counted, as
  the fold hands a shoe to the group of its table's last round.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from daemon.numbers.floor import settings_of, shoe_of
from daemon.numbers.periods import NO_DEALER
from daemon.numbers.records import QUEEN_OF_HEARTS_LINES
from daemon.numbers.tally import BREAK, Numbers, WagerNumbers
from daemon.numbers.theory import ROUND_IS_UNIT, unit_distribution

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

    import duckdb

    from daemon.numbers.periods import Shifts

_US = 1_000_000
_GROUP_COLUMNS = {
    "table": ('"table"', "''"),
    "shift": ('"table"', "b.shift"),
    "day": ('"table"', "b.day"),
    "dealer": (f"coalesce(dealer, '{NO_DEALER}')", "''"),
    "floor": ("'all tables'", "''"),
}
Groups = dict[tuple[str, str], Numbers]  # (g1, g2) -> the group's numbers
# A small server's share for the report (docs/numbers.md, "A floor"): a month of a hundred
# tables fits in 1 GiB, a year needs 2 (docs/performance.md, "A year of a floor").
MEMORY_LIMIT = "2GB"
THREADS = 2
_SETTINGS = "hash(game, decks, deck_kind, paytable, dealer_hits_soft_17)"


def floor_numbers(
    con: duckdb.DuckDBPyConnection,
    by: str,
    shifts: Shifts,
    posted: Mapping[str, str],
    tables: list[str] | None = None,
    days: tuple[str | None, str | None] = (None, None),
) -> list[Numbers]:
    """The numbers of each group of the floor's rounds (grouped `by` one of GROUPINGS), in
    order of first round, as `Grouped` gives them: only `tables` when given, and only the
    rounds and shoes whose gaming day lies within `days` (first, last; either open)."""
    bound(con)
    with _working_tables(con):
        _boundaries(con, shifts)
        _chosen_rounds(con, by, tables, days)
        groups = _groups(con, by, posted)
        _add_money(con, groups, posted)
        _add_shoes(con, groups, days)
    return list(groups.values())


@contextlib.contextmanager
def _working_tables(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """The report's own tables (a row per round, a row per settlement: a year of a floor is
    tens of millions) in a database file of their own, removed after: on disk DuckDB keeps
    them compressed and pages them through its memory limit, where temporary tables (in
    memory) outgrew it and failed the month by day at one GiB."""
    directory = Path(tempfile.mkdtemp(prefix=f"shoe2mqtt-work-{os.getpid()}-"))
    before = con.execute("SELECT current_database()").fetchall()[0][0]
    con.execute("ATTACH ? AS floor_work", [str(directory / "work.duckdb")])
    con.execute("USE floor_work")
    try:
        yield
    finally:
        con.execute(f'USE "{before}"')
        con.execute("DETACH floor_work")
        shutil.rmtree(directory, ignore_errors=True)


def bound(
    con: duckdb.DuckDBPyConnection,
    memory: str = MEMORY_LIMIT,
    threads: int = THREADS,
    spill: Path | None = None,
) -> None:
    """DuckDB held to `memory` and `threads`, spilling what does not fit to `spill` (a
    directory of its own under the system's temporary directory unless given; DuckDB
    removes its files when the connection closes). Its defaults (80 % of the machine's
    memory, a thread per core) let a year of a floor take gigabytes beside the tables'
    own work on a small server; bounded, it spills, and the report takes a little longer."""
    spill = spill or Path(tempfile.gettempdir()) / f"shoe2mqtt-report-{os.getpid()}"
    for setting, value in (
        ("memory_limit", memory),
        ("threads", threads),
        ("temp_directory", str(spill)),
        # No query here relies on the order rows were inserted in (each orders what it
        # needs); without it DuckDB streams its copies and joins in less memory.
        ("preserve_insertion_order", False),
    ):
        con.execute(f"SET {setting} = ?", [value])


def _boundaries(con: duckdb.DuckDBPyConnection, shifts: Shifts) -> None:
    """`floor_bounds`: each shift's start over the floor's span, with its shift and day labels."""
    row = con.execute(
        "SELECT min(s), max(s) FROM (SELECT min(started::TIMESTAMPTZ) AS s FROM rounds "
        "UNION ALL SELECT max(started::TIMESTAMPTZ) FROM rounds "
        "UNION ALL SELECT min(started::TIMESTAMPTZ) FROM shoes "
        "UNION ALL SELECT max(started::TIMESTAMPTZ) FROM shoes)"
    ).fetchone()
    rows: dict[int, tuple[str, str]] = {}
    if row is not None and row[0] is not None:
        first: date = row[0].astimezone(shifts.zone).date() - timedelta(days=2)
        last: date = row[1].astimezone(shifts.zone).date() + timedelta(days=2)
        day = first
        while day <= last:
            for start in shifts.starts:
                moment = datetime.combine(day, start, tzinfo=shifts.zone).astimezone(UTC)
                at = (moment - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)
                rows[at] = (shifts.day_label(moment), shifts.shift_label(moment))
            day += timedelta(days=1)
    con.execute("CREATE OR REPLACE TABLE floor_bounds (at_us BIGINT, day VARCHAR, shift VARCHAR)")
    if rows:
        con.executemany(
            "INSERT INTO floor_bounds VALUES (?, ?, ?)", [(at, *rows[at]) for at in sorted(rows)]
        )


def _day_filter(days: tuple[str | None, str | None]) -> tuple[str, list[str]]:
    return "b.day >= ? AND b.day <= ?", [days[0] or "0000-00-00", days[1] or "9999-99-99"]


def _chosen_rounds(
    con: duckdb.DuckDBPyConnection,
    by: str,
    tables: list[str] | None,
    days: tuple[str | None, str | None],
) -> None:
    """`floor_rounds`: the rounds the report counts, each with its group (g1, g2), its settings'
    key, its start and end in µs, and what its round counts toward the hours of play."""
    g1, g2 = _GROUP_COLUMNS[by]
    where, params = _day_filter(days)
    if tables:
        where += ' AND "table" IN (SELECT unnest(?::VARCHAR[]))'
        params = [*params, tables]  # type: ignore[list-item] # DuckDB binds a list as a list
    con.execute(
        f"""
        CREATE OR REPLACE TABLE floor_rounds AS
        WITH r AS (
            SELECT *, epoch_us(started::TIMESTAMPTZ) AS s_us,
                   epoch_us(ended::TIMESTAMPTZ) AS e_us FROM rounds
        ), g AS (
            SELECT {g1} AS g1, {g2} AS g2, r."table" AS tbl, r.round, r.started, r.ended,
                   r.s_us, r.e_us, {_SETTINGS} AS sid, r.voided, r.seats, r.hands, r.cards,
                   r.floorperson_calls, r.unreadable_cards, r.held, r.reviewed
            FROM r ASOF JOIN floor_bounds b ON r.s_us >= b.at_us
            WHERE {where}
        )
        SELECT *, CASE
                WHEN lead(s_us) OVER w - s_us BETWEEN 0 AND {BREAK // timedelta(microseconds=1)}
                THEN lead(s_us) OVER w - s_us
                ELSE greatest(e_us - s_us, 0) END AS play_us
        FROM g WINDOW w AS (PARTITION BY g1, g2, tbl ORDER BY s_us)
        """,  # noqa: S608 - our own column expressions; the values are bound
        params,
    )


def _groups(
    con: duckdb.DuckDBPyConnection, by: str, posted: Mapping[str, str]
) -> dict[tuple[str, str], Numbers]:
    rows = con.execute(
        """
        SELECT g1, g2, count(*), count(*) FILTER (WHERE voided), sum(hands), sum(cards),
               sum(seats), sum(floorperson_calls), sum(unreadable_cards),
               count(*) FILTER (WHERE held), count(*) FILTER (WHERE reviewed),
               arg_min(started, s_us), arg_max(ended, e_us), sum(play_us),
               min(tbl || chr(1) || lpad(s_us::VARCHAR, 20, '0')) AS first_seen
        FROM floor_rounds GROUP BY 1, 2 ORDER BY first_seen
        """
    ).fetchall()
    groups = {}
    for row in rows:
        numbers = Numbers(_key(by, row[0], row[1]), posted)
        (numbers.rounds, numbers.voided, numbers.hands, numbers.cards, numbers.seats,
         numbers.floorperson_calls, numbers.unreadable_cards, numbers.held_rounds,
         numbers.reviewed_rounds) = (int(v) for v in row[2:11])  # fmt: skip
        numbers.first = datetime.fromisoformat(row[11])
        numbers.last = datetime.fromisoformat(row[12])
        numbers.play = timedelta(microseconds=int(row[13]))
        groups[row[0], row[1]] = numbers
    return groups


def _key(by: str, g1: str, g2: str) -> dict[str, str]:
    if by in {"shift", "day"}:
        return {"table": g1, by: g2}
    return {by: g1}


def _add_money(
    con: duckdb.DuckDBPyConnection,
    groups: dict[tuple[str, str], Numbers],
    posted: Mapping[str, str],
) -> None:
    """Each group's money per wager kind, its queen of hearts pairs, and its stakes counted."""
    con.execute(
        """
        CREATE OR REPLACE TABLE floor_money AS
        SELECT c.g1, c.g2, c.tbl, c.round, c.sid, s.wager, s.stake_cents AS stake,
               s.won_cents AS won, s.result, s.outcome
        FROM settlements s JOIN floor_rounds c ON c.tbl = s."table" AND c.round = s.round
        WHERE s.result <> 'void'
        """
    )
    qoh = ", ".join(f"'{line}'" for line in sorted(QUEEN_OF_HEARTS_LINES))
    for g1, g2, pairs in con.execute(
        f"SELECT g1, g2, count(*) FROM floor_money WHERE result = 'win' AND outcome IN ({qoh}) "  # noqa: S608 - our constants
        "GROUP BY 1, 2"
    ).fetchall():
        groups[g1, g2].queen_of_hearts_pairs_paid = int(pairs)
    for g1, g2, wager, n, handle, house, won in con.execute(
        "SELECT g1, g2, wager, count(*), sum(stake), "
        "sum(CASE result WHEN 'lose' THEN stake WHEN 'win' THEN -won ELSE 0 END), "
        "sum(CASE result WHEN 'win' THEN won ELSE 0 END) FROM floor_money GROUP BY 1, 2, 3"
    ).fetchall():
        groups[g1, g2].wagers[wager] = WagerNumbers(
            wager, int(n), int(handle), int(won), int(house)
        )
    _add_units(con, groups, posted)


def _add_units(
    con: duckdb.DuckDBPyConnection,
    groups: dict[tuple[str, str], Numbers],
    posted: Mapping[str, str],
) -> None:
    """(group, wager, settings, table where a paytable is posted for it, stake) -> units:
    a settlement is a unit, but a round's optional bonuses together are one (theory.py)."""
    whole = ", ".join(f"'{wager}'" for wager in sorted(ROUND_IS_UNIT)) or "''"
    table = "tbl" if posted else "''"
    rows = con.execute(
        f"""
        WITH units AS (
            SELECT g1, g2, wager, sid, {table} AS tbl, stake FROM floor_money
            WHERE wager NOT IN ({whole})
            UNION ALL
            SELECT g1, g2, wager, sid, {table} AS tbl, sum(stake) FROM floor_money
            WHERE wager IN ({whole}) GROUP BY g1, g2, wager, sid, floor_money.tbl, round
        )
        SELECT g1, g2, wager, sid, tbl, stake, count(*) FROM units GROUP BY ALL
        """  # noqa: S608 - our constants
    ).fetchall()
    settings = {
        sid: settings_of(tuple(key))
        for sid, *key in con.execute(
            f"SELECT DISTINCT {_SETTINGS}, game, decks, deck_kind, paytable, "  # noqa: S608 - ours
            "dealer_hits_soft_17 FROM rounds WHERE "
            f"{_SETTINGS} IN (SELECT DISTINCT sid FROM floor_rounds)"
        ).fetchall()
    }
    for g1, g2, wager, sid, tbl, stake, count in rows:
        numbers = groups[g1, g2].wagers[wager]
        unit = unit_distribution(settings[sid], wager, posted.get(tbl))
        if unit is None:
            numbers.without_figures += int(stake) * int(count)
        else:
            numbers.units[unit, int(stake)] += int(count)


def _add_shoes(
    con: duckdb.DuckDBPyConnection,
    groups: dict[tuple[str, str], Numbers],
    days: tuple[str | None, str | None],
) -> None:
    """Each shoe to the group of its table's last counted round before the next shoe began
    (or its table's last, for its last shoes); the last shoe only if its cut card came.
    A table's rounds are first cut into runs of one group (a day's, a shift's, a dealer's
    rounds in a row), and each shoe joined to the last run begun before it: the last round
    before a shoe is in that run. Joined to the rounds themselves, DuckDB held every round
    in memory and failed a month by day at one GiB (and two)."""
    where, params = _day_filter(days)
    # The shoes read into a table first, and their anchors added from it: DuckDB's window
    # straight over the Parquet scan (and its ASOF join over that window) took a GiB for a
    # month's 160,000 shoes; from a table, megabytes.
    con.execute(
        "CREATE OR REPLACE TABLE floor_shoes AS SELECT *, epoch_us(started::TIMESTAMPTZ) AS s_us "
        "FROM shoes WHERE cards_at_cut > 0"
    )
    con.execute(
        """
        CREATE OR REPLACE TABLE floor_shoes AS
        SELECT *, coalesce(lead(s_us) OVER w, 9223372036854775807) AS anchor,
               lead(s_us) OVER w IS NULL AS is_last
        FROM floor_shoes WINDOW w AS (PARTITION BY "table" ORDER BY s_us)
        """
    )
    rows = con.execute(
        f"""
        WITH d AS (
            SELECT n.* FROM floor_shoes n ASOF JOIN floor_bounds b ON n.s_us >= b.at_us
            WHERE (NOT is_last OR cut_card_seen) AND {where}
        ), runs AS (
            SELECT tbl, s_us, g1, g2 FROM (
                SELECT tbl, s_us, g1, g2, lag(g1) OVER w AS p1, lag(g2) OVER w AS p2
                FROM floor_rounds WINDOW w AS (PARTITION BY tbl ORDER BY s_us)
            ) WHERE p1 IS DISTINCT FROM g1 OR p2 IS DISTINCT FROM g2
        )
        SELECT c.g1, c.g2, d."table", d.started, d.cards_at_cut, d.cut_card_seen, d.decks,
               d.deck_kind
        FROM d ASOF JOIN runs c ON c.tbl = d."table" AND d.anchor > c.s_us
        ORDER BY d."table", d.s_us
        """,  # noqa: S608 - our own expressions; the values are bound
        params,
    ).fetchall()
    for g1, g2, *shoe in rows:
        groups[g1, g2].add_shoe(shoe_of(tuple(shoe)))
