"""A floor's numbers: many table PCs' archives, read with DuckDB, and written as Parquet.

Each table PC's archive (docs/durability.md) is a directory of `<table>/<day>.jsonl.gz` round
logs. DuckDB reads the gzip JSON Lines as they are, in parallel, and cuts from them three
relations (the SQL below): one row per ended round (`rounds`: its times, dealer, seats, hands,
cards, notices, held and reviewed, and the settings its numbers are held against), one per
settlement (`settlements`: stake and won in cents, exact), and one per shoe (`shoes`: cards
out at its cut card). The rows become the same `RoundRecord`s and `ShoeRecord`s a table PC's
own report folds (daemon/numbers/records.py), so a floor's numbers are counted by the same
code as one table's.

`export` writes the three relations as Parquet, partitioned by table and the archive file's
day (`rounds/table=bj-1/day=2026-11-29/data_0.parquet`, ...): a warehouse engine (Spark,
Trino) reads that layout as it is, and so does `read`, which takes a directory holding such an
export as readily as an archive (docs/deploy.md, "A floor's numbers").

What the archive does not hold: rounds still in a table PC's live journal (within its
`keep_days`); a report on the PC itself counts those too.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import TYPE_CHECKING, Any

import duckdb

from daemon.numbers.records import RoundRecord, Settled, ShoeRecord, TableSettings

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from daemon.numbers.periods import Grouped
    from daemon.numbers.tally import Numbers

RELATIONS = ("rounds", "settlements", "shoes")
_CARDS_PER_DECK = {"standard": 52, "spanish": 48}

_COLUMNS = (
    "{type: 'VARCHAR', topic: 'VARCHAR', message: 'JSON', kind: 'VARCHAR', body: 'JSON', "
    "n: 'BIGINT', \"round\": 'BIGINT', \"table\": 'VARCHAR', id: 'VARCHAR', game: 'VARCHAR', "
    "decks: 'BIGINT', deck_kind: 'VARCHAR', paytable: 'JSON', dealer_hits_soft_17: 'BOOLEAN'}"
)

# Every statement reads the `lines` view, a table of the archive's lines (_COLUMNS). A round
# message of console contract 4 is read as what it carried, each with its envelope's table and
# time, ordered within its `seq` by its place (`seq` here orders; it is no message's number).
_SQL = """
CREATE TEMP TABLE published AS
SELECT filename, CAST(message->>'seq' AS DOUBLE) AS seq, message FROM lines
WHERE type = 'published' AND json_type(message, '$.events') IS DISTINCT FROM 'ARRAY'
UNION ALL
SELECT filename, CAST(message->>'seq' AS DOUBLE) + i / 1000.0 AS seq,
       json_merge_patch(json_object('table', message->>'table', 'ts', message->>'ts'), e)
FROM (SELECT filename, message, unnest(CAST(message->'events' AS JSON[])) AS e,
             generate_subscripts(CAST(message->'events' AS JSON[]), 1) AS i
      FROM lines WHERE type = 'published' AND json_type(message, '$.events') = 'ARRAY');

CREATE TEMP TABLE msgs AS
SELECT filename, message->>'table' AS tbl, message->>'type' AS mtype,
       seq, message->>'ts' AS ts,
       TRY_CAST(message->>'round' AS BIGINT) AS rnd, message AS m
FROM published
WHERE message->>'type' IN (
    'round_opened', 'round_ended', 'card_dealt', 'card_burned', 'wager_accepted',
    'settlement', 'notice', 'shoe_shuffled');

CREATE TEMP TABLE flagged AS
SELECT DISTINCT message->>'table' AS tbl, CAST(message->'round'->>'id' AS BIGINT) AS rnd,
       bool_or(message->>'doubt' IS NOT NULL) AS held,
       bool_or(json_array_length(message->'review') > 0) AS reviewed
FROM lines
WHERE type = 'published' AND message->>'type' = 'round_snapshot'
      AND (message->>'doubt' IS NOT NULL OR json_array_length(message->'review') > 0)
GROUP BY 1, 2;

CREATE TEMP TABLE settings AS
SELECT filename, game, decks, deck_kind, CAST(paytable AS VARCHAR) AS paytable,
       coalesce(dealer_hits_soft_17, false) AS dealer_hits_soft_17
FROM (SELECT *, row_number() OVER (PARTITION BY filename) AS k FROM lines WHERE type = 'table')
WHERE k = 1;

CREATE TEMP TABLE named AS
SELECT "table" AS tbl, n,
       json_extract_string(CAST(body->>'payload' AS VARCHAR), '$.dealer') AS dealer
FROM lines WHERE type = 'journal' AND kind = 'request'
      AND json_extract_string(CAST(body->>'payload' AS VARCHAR), '$.dealer') IS NOT NULL;

CREATE TEMP TABLE firsts AS
SELECT "table" AS tbl, "round" AS rnd, min(n) AS first_n
FROM lines WHERE type = 'journal' AND "round" IS NOT NULL GROUP BY 1, 2;

CREATE TEMP TABLE rounds AS
WITH r AS (
    SELECT tbl, rnd, any_value(filename) AS filename,
        min(ts) FILTER (WHERE mtype = 'round_opened') AS started,
        max(ts) FILTER (WHERE mtype = 'round_ended') AS ended,
        bool_or(CAST(m->>'voided' AS BOOLEAN)) FILTER (WHERE mtype = 'round_ended') AS voided,
        count(*) FILTER (WHERE mtype = 'card_dealt') AS cards,
        count(DISTINCT (m->>'seat') || '/' || coalesce(m->>'hand', '1'))
            FILTER (WHERE mtype = 'card_dealt' AND m->>'to' = 'player') AS hands,
        count(DISTINCT m->>'seat') FILTER (WHERE mtype IN ('wager_accepted', 'settlement'))
            AS seats,
        count(*) FILTER (WHERE mtype = 'notice' AND m->>'kind' = 'floorperson_required')
            AS floorperson_calls,
        count(*) FILTER (WHERE mtype = 'notice' AND m->>'kind' = 'card_unreadable')
            AS unreadable_cards,
        bool_or(coalesce(CAST(m->>'review' AS BOOLEAN), false))
            FILTER (WHERE mtype = 'settlement') AS settled_review
    FROM msgs WHERE rnd IS NOT NULL GROUP BY 1, 2
)
SELECT r.tbl AS "table", regexp_extract(r.filename, '(\\d{4}-\\d{2}-\\d{2})[^/]*$', 1) AS day,
       r.rnd AS round, r.started, r.ended, coalesce(r.voided, false) AS voided, r.seats,
       r.hands, r.cards, r.floorperson_calls, r.unreadable_cards,
       coalesce(f.held, false) AS held,
       coalesce(f.reviewed, false) OR coalesce(r.settled_review, false) AS reviewed,
       d.dealer, s.game, s.decks, s.deck_kind, s.paytable, s.dealer_hits_soft_17
FROM r
LEFT JOIN flagged f ON f.tbl = r.tbl AND f.rnd = r.rnd
LEFT JOIN settings s ON s.filename = r.filename
LEFT JOIN firsts fi ON fi.tbl = r.tbl AND fi.rnd = r.rnd
ASOF LEFT JOIN named d ON d.tbl = r.tbl AND d.n <= fi.first_n
WHERE r.started IS NOT NULL AND r.ended IS NOT NULL;

CREATE TEMP TABLE settlements AS
SELECT tbl AS "table", regexp_extract(filename, '(\\d{4}-\\d{2}-\\d{2})[^/]*$', 1) AS day,
       rnd AS round, m->>'wager' AS wager, CAST(m->>'seat' AS BIGINT) AS seat,
       CAST(CAST(m->>'stake' AS DECIMAL(18, 2)) * 100 AS BIGINT) AS stake_cents,
       CAST(CAST(m->>'won' AS DECIMAL(18, 2)) * 100 AS BIGINT) AS won_cents,
       m->>'result' AS result, m->>'outcome' AS outcome
FROM msgs WHERE mtype = 'settlement';

CREATE TEMP TABLE shoes AS
WITH s AS (
    SELECT tbl, filename, seq, ts, mtype, m->>'kind' AS kind,
        sum(CASE WHEN mtype = 'shoe_shuffled' THEN 1 ELSE 0 END)
            OVER (PARTITION BY tbl ORDER BY seq) AS shoe
    FROM msgs
    WHERE mtype IN ('shoe_shuffled', 'card_dealt', 'card_burned')
          OR (mtype = 'notice' AND m->>'kind' = 'cut_card')
), c AS (
    SELECT tbl, shoe, any_value(filename) AS filename,
        min(ts) FILTER (WHERE mtype = 'shoe_shuffled') AS started,
        min(seq) FILTER (WHERE mtype = 'notice') AS cut_seq
    FROM s GROUP BY 1, 2
)
SELECT c.tbl AS "table", regexp_extract(c.filename, '(\\d{4}-\\d{2}-\\d{2})[^/]*$', 1) AS day,
       c.shoe, c.started, c.cut_seq IS NOT NULL AS cut_card_seen,
       count(*) FILTER (WHERE s.mtype IN ('card_dealt', 'card_burned')
                        AND (c.cut_seq IS NULL OR s.seq < c.cut_seq)) AS cards_at_cut,
       any_value(st.decks) AS decks, any_value(st.deck_kind) AS deck_kind
FROM c JOIN s ON s.tbl = c.tbl AND s.shoe = c.shoe
LEFT JOIN settings st ON st.filename = c.filename
WHERE c.started IS NOT NULL
GROUP BY c.tbl, c.filename, c.shoe, c.started, c.cut_seq;
"""


DuckError = duckdb.Error  # what a query of the floor may raise


class FloorError(Exception):
    """The archives cannot be read: none found, or a file DuckDB cannot read."""


def archive_files(directories: list[Path]) -> list[Path]:
    """Every round log of every table in the archive directories (quarantined ones aside)."""
    return sorted(
        path
        for directory in directories
        for path in directory.glob("*/*.jsonl.gz")
        if not path.parent.name.startswith(".") and "quarantine" not in path.parent.name
    )


def _is_export(directory: Path) -> bool:
    return all((directory / name).is_dir() for name in RELATIONS)


def connect(directories: list[Path], *, threads: int | None = None) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection holding the floor's `rounds`, `settlements` and `shoes`, from
    archives (read as they are) or from directories a Parquet export wrote."""
    con = duckdb.connect()
    if threads is not None:
        con.execute(f"SET threads = {int(threads)}")
    exports = [d for d in directories if _is_export(d)]
    archives = archive_files([d for d in directories if not _is_export(d)])
    if not exports and not archives:
        raise FloorError("no round logs (<table>/<day>.jsonl.gz) and no Parquet export found")
    try:
        parts: dict[str, list[str]] = defaultdict(list)
        if archives:
            files = ", ".join(_quoted(str(p)) for p in archives)
            con.execute(
                f"CREATE TEMP VIEW lines AS SELECT * FROM read_json([{files}], "  # noqa: S608 - file names quoted
                f"format = 'newline_delimited', columns = {_COLUMNS}, filename = true)"
            )
            con.execute(_SQL)
            for name in RELATIONS:
                con.execute(f"ALTER TABLE {name} RENAME TO archived_{name}")
                parts[name].append(f"SELECT * FROM archived_{name}")  # noqa: S608 - our names
        for directory in exports:
            for name in RELATIONS:
                glob = _quoted(str(directory / name / "**" / "*.parquet"))
                parts[name].append(
                    f"SELECT * FROM read_parquet({glob}, hive_partitioning = true)"  # noqa: S608 - a quoted path
                )
        for name in RELATIONS:
            con.execute(f"CREATE TEMP VIEW {name} AS {' UNION ALL BY NAME '.join(parts[name])}")
    except duckdb.Error as exc:
        con.close()
        raise FloorError(str(exc)) from exc
    return con


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def export(
    con: duckdb.DuckDBPyConnection, output: Path, first: str | None = None, last: str | None = None
) -> dict[str, int]:
    """The floor's relations as Parquet under `output`, partitioned by table and day (the
    archive file's day, from `first` through `last` when given); rows written per relation."""
    written = {}
    output.mkdir(parents=True, exist_ok=True)
    days = f"day >= {_quoted(first or '0000-00-00')} AND day <= {_quoted(last or '9999-99-99')}"
    for name in RELATIONS:
        target = _quoted(str(output / name))
        con.execute(f"CREATE OR REPLACE TEMP VIEW chosen AS SELECT * FROM {name} WHERE {days}")  # noqa: S608 - quoted days
        con.execute(
            f"COPY (SELECT * FROM chosen) TO {target} "  # noqa: S608 - our names, a quoted path
            '(FORMAT parquet, PARTITION_BY ("table", day), OVERWRITE_OR_IGNORE true)'
        )
        row = con.execute("SELECT count(*) FROM chosen").fetchone()
        written[name] = int(row[0]) if row is not None else 0
    return written


def records(
    con: duckdb.DuckDBPyConnection, tables: list[str] | None = None
) -> Iterator[RoundRecord | ShoeRecord]:
    """The floor's rounds and shoes as records, table by table and in order within each:
    one table's rows in memory at a time (a Parquet export is read by its partitions)."""
    names = [
        row[0] for row in con.execute('SELECT DISTINCT "table" FROM rounds ORDER BY 1').fetchall()
    ]
    for table in names:
        if tables and table not in tables:
            continue
        settled: dict[tuple[str, int], list[Settled]] = defaultdict(list)
        rows = con.execute(
            "SELECT round, wager, seat, stake_cents, won_cents, result, outcome "
            'FROM settlements WHERE "table" = ?',
            [table],
        ).fetchall()
        for round_id, wager, seat, stake, won, result, outcome in rows:
            settled[table, round_id].append(Settled(wager, seat, stake, won, result, outcome))
        rounds = con.execute(
            'SELECT "table", round, started, ended, dealer, voided, seats, hands, cards, '
            "floorperson_calls, unreadable_cards, held, reviewed, game, decks, deck_kind, "
            'paytable, dealer_hits_soft_17 FROM rounds WHERE "table" = ? ORDER BY started',
            [table],
        ).fetchall()
        shoes = con.execute(
            'SELECT "table", started, cards_at_cut, cut_card_seen, decks, deck_kind '
            'FROM shoes WHERE "table" = ? ORDER BY started',
            [table],
        ).fetchall()
        yield from _merged(rounds, shoes, settled)


def _merged(
    rounds: list[tuple[Any, ...]],
    shoes: list[tuple[Any, ...]],
    settled: dict[tuple[str, int], list[Settled]],
) -> Iterator[RoundRecord | ShoeRecord]:
    """Rounds of each table in order, each shoe once the next has begun (after its own
    rounds), as the folder gives them: the last shoe only if its cut card came."""
    from daemon.numbers.records import parse_time

    by_table: dict[str, list[ShoeRecord]] = defaultdict(list)
    for row in shoes:
        shoe = shoe_of(row)
        if shoe.cards_at_cut:
            by_table[shoe.table].append(shoe)
    settings: dict[tuple[Any, ...], TableSettings] = {}
    table_now: str | None = None
    pending: list[ShoeRecord] = []
    for row in rounds:
        table, round_id, started, ended, dealer = row[:5]
        start = parse_time(started)
        if table != table_now:
            yield from _rest(pending)
            table_now, pending = table, list(by_table.get(table, ()))
        while len(pending) > 1 and pending[1].started <= start:
            yield pending.pop(0)
        key = row[13:]
        if key not in settings:
            settings[key] = settings_of(key)
        yield RoundRecord(
            table, round_id, start, parse_time(ended), settings[key], dealer, bool(row[5]),
            row[6], row[7], row[8], tuple(settled.get((table, round_id), ())), row[9], row[10],
            bool(row[11]), bool(row[12]),
        )  # fmt: skip
    yield from _rest(pending)


def _rest(pending: list[ShoeRecord]) -> list[ShoeRecord]:
    """A table's shoes after its last round: all that ended, and the last if its cut came."""
    return [*pending[:-1], *(s for s in pending[-1:] if s.cut_card_seen)]


def settings_of(key: tuple[Any, ...]) -> TableSettings:
    game, decks, deck_kind, paytable, hits = key
    posted = json.loads(paytable) if paytable is not None else ""
    return TableSettings.from_line(
        {"game": game or "", "decks": decks or 0, "deck_kind": deck_kind or "",
         "paytable": posted, "dealer_hits_soft_17": bool(hits)}
    )  # fmt: skip


def shoe_of(row: tuple[Any, ...]) -> ShoeRecord:
    from daemon.numbers.records import parse_time

    table, started, cards, seen, decks, deck_kind = row
    size = (decks or 0) * _CARDS_PER_DECK.get(deck_kind or "", 52)
    return ShoeRecord(table, parse_time(started), int(cards), bool(seen), size)


def folded(
    con: duckdb.DuckDBPyConnection,
    grouped: Grouped,
    tables: list[str] | None = None,
    days: tuple[str | None, str | None] = (None, None),
) -> list[Numbers]:
    """The floor's numbers folded round by round in Python, as a table PC's own report
    counts them: the reference `floor_sql.floor_numbers` is held to, not the report's way."""
    for record in records(con, tables):
        day = grouped.shifts.day_label(record.started)
        if (days[0] is None or day >= days[0]) and (days[1] is None or day <= days[1]):
            grouped.add(record)
    return grouped.numbers()
