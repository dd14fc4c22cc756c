"""The live journal stays bounded: its size while a table deals a million cards, archive on.

    uv run python -m bench.journal_size [--cards 1000000] [--cards-per-day 10000] [--keep-days 30]

One blackjack table (seven seats, every wager, basic strategy) deals through the daemon's own
path (`TableCommits.commit`: journaled, applied, checkpoints riding along), on a simulated clock
that spreads `--cards-per-day` cards over sixteen hours of each day; every message is
acknowledged at once, as a broker would. At each simulated midnight the archive runs
(`daemon.journal.archive.archive_due`, the daemon's hourly task) with `--keep-days`. The
journal is synced "normal" here, to be quick: the size is the same either way.

Every 100,000 cards it prints the live database's size (file and write-ahead log, and the
pages in use), the archive's, and the simulated day; at the end, the same for the last card.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sqlite3
import time
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from bench.e2e.harness import machine, workspace
from bench.e2e.startup import records
from daemon.configuration.service_config import LoggingConfig, ServiceConfig, ShoeConfig, TableSetup
from daemon.history.archiving import archive_due
from daemon.journal import JOURNAL_FILE, prepare_state_directory
from daemon.journal.archive import Archive
from daemon.journal.clock import JournalClock
from daemon.mqtt.settings import MqttSettings
from daemon.service import Daemon
from daemon.simulator.tables import DEMO_TABLES
from daemon.system import logs
from daemon.table.records import ShoeRecord
from drivers.events import CardDrawn
from drivers.transports import SerialSettings
from rules.config import TableConfig
from rules.games import Game

if TYPE_CHECKING:
    from pathlib import Path

OPENS = 8  # a table deals from 08:00 to midnight
PLAY_HOURS = 24 - OPENS
REPORT_EVERY = 100_000  # cards


class SimulatedClock:
    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now


def _mib(path: Path) -> float:
    return path.stat().st_size / 2**20 if path.exists() else 0.0


def sizes(state: Path, archive: Path) -> str:
    journal = state / JOURNAL_FILE
    with contextlib.closing(sqlite3.connect(f"file:{journal}?mode=ro", uri=True)) as db:
        pages, free, page_size = (
            db.execute(f"PRAGMA {pragma}").fetchone()[0]
            for pragma in ("page_count", "freelist_count", "page_size")
        )
        events = db.execute("SELECT count(*) FROM events").fetchone()[0]
    stored = sum(f.stat().st_size for f in archive.rglob("*") if f.is_file()) / 2**20
    files = sum(1 for _ in archive.rglob("*.jsonl.gz"))
    log = _mib(journal.with_name(journal.name + "-wal"))
    return (
        f"live database {_mib(journal):.1f} MiB (+ log {log:.1f} MiB; "
        f"{(pages - free) * page_size / 2**20:.1f} MiB in use) holding {events:,} events; "
        f"archive {stored:.1f} MiB in {files} files"
    )


async def deal(args: argparse.Namespace, directory: Path) -> None:
    state = directory / "state"
    prepare_state_directory(state)
    settings = dict(DEMO_TABLES[Game.BLACKJACK])
    table = TableConfig.from_mapping(settings)
    config = ServiceConfig(
        path=directory / "shoe2mqtt.toml",
        mqtt=MqttSettings(host="127.0.0.1", node="bench"),
        tables=(TableSetup(table, ShoeConfig("reference", SerialSettings(port="/dev/null"))),),
        state_directory=state,
        logging=LoggingConfig(format="console", level="warning"),
        journal_sync="normal",
        keep_days=args.keep_days,
    )
    logs.configure(fmt="console", level="warning", raw_frames=False)
    clock = SimulatedClock(datetime(2026, 1, 1, OPENS, tzinfo=UTC))
    # The simulated days are the monotonic clock too: no step is seen.
    journal_clock = JournalClock(clock, lambda: clock.now.timestamp())  # noqa: PLW0108 - `now` moves
    daemon = Daemon(config, driver_factory=lambda _: None, clock=journal_clock)  # type: ignore[arg-type,return-value]
    archive = Archive(config.archive_path)
    await daemon.journal.open()
    await daemon.recovery.recover()
    first_day = clock.now.date()
    [served] = daemon.tables.values()
    step = timedelta(hours=PLAY_HOURS) / args.cards_per_day  # per card, events in between
    cards, day, began = 0, clock.now.date(), time.monotonic()
    for record in records(table, seed=1):
        if isinstance(record, ShoeRecord) and isinstance(record.event, CardDrawn):
            cards += 1
            clock.now += step
            if clock.now.hour < OPENS:  # closed from midnight: the next cards come at 8
                clock.now = clock.now.replace(hour=OPENS, minute=0, second=0, microsecond=0)
        if clock.now.date() != day:
            day = clock.now.date()
            await archive_due(daemon.journal, archive, args.keep_days, daemon.topics, now=clock.now)
        await daemon.commits.commit(served, record)
        while (queued := daemon.outbox.peek()) is not None:  # as a broker would
            daemon.outbox.ack(queued.message_id)
        if cards and cards % REPORT_EVERY == 0 and record.kind == "shoe":
            await daemon.journal.flush()
            print(f"{cards:>9,} cards, day {day}: {sizes(state, archive.directory)}", flush=True)
        if cards >= args.cards:
            break
    await daemon.journal.close()
    print(
        f"after {cards:,} cards ({(clock.now.date() - first_day).days} days, "
        f"keep_days = {args.keep_days}): {sizes(state, archive.directory)}; "
        f"{time.monotonic() - began:.0f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cards", type=int, default=1_000_000)
    parser.add_argument("--cards-per-day", type=int, default=10_000)
    parser.add_argument("--keep-days", type=int, default=30)
    args = parser.parse_args()
    print(f"machine: {machine()}")
    with workspace() as directory:  # on the disk a journal would use, not tmpfs
        asyncio.run(deal(args, directory))


if __name__ == "__main__":
    main()
