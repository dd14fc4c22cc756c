"""A floor's numbers at scale: the report over many tables and days, its time and memory.

    uv run python -m bench.floor_year [--tables 100] [--days 30] [--pool-days 2] [--keep DIR]
        [--pool-from FLOOR]

1. A **pool** of real table-days: three tables (blackjack paytable A, blackjack paytable B,
   Double Attack), `--pool-days` days of 16 hours at 60 rounds an hour, dealt by the real
   engine and written by the journal's own store and archived by its own archiver
   (daemon.testing.floor.write_journal), exactly the archive a table PC leaves.
2. `shoe2mqtt report --archive POOL --export parquet`: the archive cut into rounds,
   settlements and shoes (the ingest, per table-day), timed.
   With `--pool-from FLOOR` the pool is taken back from a floor this bench made (its first
   three tables' first `--pool-days` days are the pool's, renamed and renumbered: undone)
   instead of being written again (15 minutes or more).
3. A **floor**: the pool's Parquet rows copied to `--tables` tables and `--days` days by
   DuckDB, ten days at a time: table i repeats pool table i mod 3 (so a third of the floor
   is each kind of table), day d repeats pool day d mod `--pool-days`, each copy under its
   own table id, its times moved to its own day and its round numbers moved on by a million
   a day. Every row is a real round, settlement or shoe; what repeats is which. Generating
   every table-day through the engine would take about 20 s each (36,500 for a year: eight
   days of one core); the copy of a year took 20 minutes here. What is timed reads every row.
4. `shoe2mqtt report --archive FLOOR --by` table, day, shift, dealer and floor, each as a
   process, timed, with its peak memory (the process's maximum resident set, from `wait4`).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from bench.e2e.harness import machine
from daemon.simulator.tables import DEMO_TABLES
from daemon.testing.floor import Pace, write_journal
from rules.config import TableConfig
from rules.games import Game

START = datetime(2026, 1, 1, tzinfo=UTC)
PACE = Pace(rounds_per_hour=60, opens=8, hours=16)


def _pool_tables() -> list[TableConfig]:
    blackjack = dict(DEMO_TABLES[Game.BLACKJACK])
    return [
        TableConfig.from_mapping({**blackjack, "id": "pool-a", "paytable": "A"}),
        TableConfig.from_mapping({**blackjack, "id": "pool-b", "paytable": "B"}),
        TableConfig.from_mapping({**DEMO_TABLES[Game.DOUBLE_ATTACK], "id": "pool-d"}),
    ]


def _run(argv: list[str]) -> tuple[float, float, str]:
    """Seconds, peak resident MiB (the child's own, from wait4) and standard output."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        began = time.monotonic()
        process = subprocess.Popen(argv, stdout=out, stderr=err)  # noqa: S603 - our command
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.monotonic() - began
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if process.returncode:
            raise SystemExit(f"{argv}: {err.read()}")
        return elapsed, usage.ru_maxrss / 1024, out.read()


_MOVED = (
    "strftime(CAST({column} AS TIMESTAMPTZ) + to_days(CAST(k.d - date_diff('day', "
    "DATE '{first}', CAST(p.day AS DATE)) AS INTEGER)), '%Y-%m-%dT%H:%M:%S.%g+00:00') AS {column}"
)
# Each copied day's round numbers moved on by a million a day, so that a table's rounds stay
# one of each number, as a real table's do (a round's settlements are found by its number).
_RENUMBERED = ", round + 1000000 * k.d AS round"
_KEPT = {
    "rounds": ('p.* EXCLUDE ("table", day, started, ended, round)', ("started", "ended")),
    "shoes": ('p.* EXCLUDE ("table", day, started)', ("started",)),
    "settlements": ('p.* EXCLUDE ("table", day, round)', ()),
}
POOL_TABLES = ("pool-a", "pool-b", "pool-d")
# A small server's DuckDB: the copy spills to disk rather than take the machine's memory.
_BOUNDED = ("SET memory_limit = '1GB'", "SET threads = 2", "SET preserve_insertion_order = false")


def _replicate(pool: Path, floor: Path, tables: int, days: int, chunk: int = 10) -> int:
    """The pool's rows as `tables` tables over `days` days; returns the floor's rounds.
    Written `chunk` days at a time: DuckDB holds every partition of a partitioned copy until
    it ends, and a year's 36,500 table-days at once spilled gigabytes and crawled."""
    con = duckdb.connect()
    for setting in (*_BOUNDED, f"SET temp_directory = '{floor}.spill'"):
        con.execute(setting)
    floor.mkdir(parents=True, exist_ok=True)
    rounds = f"read_parquet('{pool}/rounds/**/*.parquet', hive_partitioning = true)"
    pool_days = con.execute(f"SELECT DISTINCT day FROM {rounds} ORDER BY 1").fetchall()  # noqa: S608 - a bench's own path
    first, width = pool_days[0][0], len(pool_days)
    for name, (keep, moved) in _KEPT.items():
        times = "".join(", " + _MOVED.format(column=c, first=first) for c in moved)
        times += _RENUMBERED if name != "shoes" else ""
        source = f"read_parquet('{pool}/{name}/**/*.parquet', hive_partitioning = true)"
        for begin in range(0, days, chunk):
            con.execute(
                f"""COPY (
                    SELECT {keep} {times}, printf('t-%03d', t.i) AS "table",
                        strftime(DATE '{first}' + to_days(CAST(k.d AS INTEGER)), '%Y-%m-%d') AS day
                    FROM {source} p
                    JOIN range({tables}) t(i)
                        ON p."table" = {list(POOL_TABLES)}[t.i % 3 + 1]
                    JOIN range({begin}, {min(begin + chunk, days)}) k(d)
                        ON k.d % {width} = date_diff('day', DATE '{first}', CAST(p.day AS DATE))
                ) TO '{floor}/{name}' (FORMAT parquet, PARTITION_BY ("table", day),
                    OVERWRITE_OR_IGNORE true)"""  # noqa: S608 - a bench's own SQL
            )
    counted = f"SELECT count(*) FROM read_parquet('{floor}/rounds/**/*.parquet')"  # noqa: S608 - a bench's own path
    row = con.execute(counted).fetchone()
    con.close()
    return int(row[0]) if row else 0


def _pool_from_floor(floor: Path, pool: Path) -> int:
    """The pool's own rows again, from a floor `_replicate` made: its first three tables'
    first `width` days are the pool's tables' days, under other names and with each day's
    round numbers moved on by a million a day; both undone. Returns the pool's rounds."""
    con = duckdb.connect()
    for setting in _BOUNDED:
        con.execute(setting)
    pool.mkdir(parents=True, exist_ok=True)
    source = f"read_parquet('{floor}/rounds/**/*.parquet', hive_partitioning = true)"
    first = con.execute(f"SELECT min(day) FROM {source}").fetchall()[0][0]  # noqa: S608 - a bench's own path
    copies = ", ".join(f"'t-{i:03d}'" for i in range(len(POOL_TABLES)))
    for name in _KEPT:
        # The pool's width is two days (the floor's days repeat with it); rounds renumbered
        # back; the columns an older `_replicate` left behind (its ranges' i and d) dropped.
        renumbered = ", round - 1000000 * date_diff('day', DATE '{first}', day) AS round"
        con.execute(
            f"""COPY (
                SELECT p.* EXCLUDE ("table", day, i, d{", round" if name != "shoes" else ""})
                    {renumbered.format(first=first) if name != "shoes" else ""},
                    {list(POOL_TABLES)}[CAST(right("table", 3) AS INTEGER) + 1] AS "table",
                    strftime(day, '%Y-%m-%d') AS day
                FROM read_parquet('{floor}/{name}/**/*.parquet', hive_partitioning = true) p
                WHERE "table" IN ({copies}) AND day < DATE '{first}' + INTERVAL 2 DAY
            ) TO '{pool}/{name}' (FORMAT parquet, PARTITION_BY ("table", day))"""  # noqa: S608 - a bench's own SQL
        )
    row = con.execute(f"SELECT count(*) FROM read_parquet('{pool}/rounds/**/*.parquet')").fetchone()  # noqa: S608 - a bench's own path
    con.close()
    return int(row[0]) if row else 0


def _pool(state: Path, pool: Path, days: int, command: list[str]) -> None:
    """The pool written, archived and exported to `pool` (and its ingest timed)."""
    if not (state / "archive" / "manifest.json").exists():
        began = time.monotonic()
        asyncio.run(write_journal(state, _pool_tables(), START, days + 1, PACE, keep_days=1))
        print(f"pool: {3 * days} table-days written and archived in "
              f"{time.monotonic() - began:.0f} s", flush=True)  # fmt: skip
    archive = state / "archive"
    size = sum(p.stat().st_size for p in archive.rglob("*.jsonl.gz")) / 2**20
    shutil.rmtree(pool, ignore_errors=True)
    took, peak, out = _run([*command, "--archive", str(archive), "--export", "parquet",
                            "--output", str(pool)])  # fmt: skip
    print(f"export of the pool's archive ({size:.0f} MiB of gzip): {took:.1f} s, "
          f"{took / (3 * days):.1f} s a table-day, peak {peak:.0f} MiB: {out.strip()}")  # fmt: skip
    took, peak, _ = _run([*command, "--archive", str(archive), "--by", "table"])
    print(f"report --archive on the pool's archive: {took:.1f} s, peak {peak:.0f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--pool-days", type=int, default=2)
    parser.add_argument("--keep", type=Path, help="keep the pool and the floor here")
    parser.add_argument("--pool-from", type=Path, help="take the pool back from this floor")
    args = parser.parse_args()
    print(f"machine: {machine()}", flush=True)
    directory = args.keep or Path(tempfile.mkdtemp(prefix="floor-", dir=Path.cwd() / ".cache"))
    directory.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "daemon.cli", "report"]
    pool, floor = directory / "pool-parquet", directory / "floor"
    try:
        if args.pool_from:
            print(f"pool: {_pool_from_floor(args.pool_from, pool):,} rounds taken back")
        elif not (args.keep and (pool / "rounds").is_dir()):
            _pool(directory / "state", pool, args.pool_days, command)
        shutil.rmtree(floor, ignore_errors=True)
        began = time.monotonic()
        rounds = _replicate(pool, floor, args.tables, args.days)
        print(f"floor: {args.tables} tables x {args.days} days, {rounds:,} rounds, made in "
              f"{time.monotonic() - began:.0f} s", flush=True)  # fmt: skip
        for by in ("table", "day", "shift", "dealer", "floor"):
            took, peak, out = _run(
                [*command, "--archive", str(floor), "--by", by, "--format", "csv"]
            )
            print(f"report --archive FLOOR --by {by}: {took:.1f} s, peak {peak:.0f} MiB, "
                  f"{rounds / took:,.0f} rounds a second, {len(out.splitlines()) - 1} rows, "
                  f"load average {os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip
    finally:
        if args.keep is None:
            shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
