"""Archiving many days at start: how long it takes, and whether the tables wait on it.

    uv run python -m bench.archive_backlog [--days 20] [--cards-per-day 3000] [--requests 200]

Writes a journal of `--days` days of one seven-seat blackjack table (`--cards-per-day` cards
a day, 08:00 to midnight, through the daemon's own commit path on a simulated clock that
ends two days ago; every message delivered), as a daemon stopped for that long leaves it.
Then starts `shoe2mqtt run` over it with `keep_days = 1`, exactly as systemd starts it, and
measures: start to READY=1; the table's answers to `status` requests sent every 50 ms from
READY=1 on while the archive works (each is journaled, applied and answered: the path a
card takes), against the same requests once the archive is done; and the archive's own time
(`journal.archive_run` in the daemon's log, or READY=1 to its last `journal.archived`).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import itertools
import json
import time
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import aiomqtt

from bench.e2e.harness import (
    ReadyDaemon,
    bench_broker,
    describe_ms,
    machine,
    table_mapping,
    workspace,
    write_config,
)
from bench.e2e.startup import records
from bench.journal_size import OPENS, PLAY_HOURS, SimulatedClock
from daemon.configuration.service_config import load_config
from daemon.journal import prepare_state_directory
from daemon.journal.clock import JournalClock
from daemon.service import Daemon
from daemon.system import logs
from daemon.table.records import ConfigRecord, ShoeRecord
from daemon.wire.topics import Topics
from drivers.events import CardDrawn
from rules.games import Game

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from daemon.testing import Mosquitto

TABLE = "bj-1"
PACE = 0.05  # seconds between status requests


async def write_journal(config_path: Path, days: int, per_day: int) -> int:
    """The journal of `days` days ending two days ago; returns its events."""
    # sync "normal" for the generator only, to be quick: no fsync at every commit.
    config = dataclasses.replace(load_config(config_path), journal_sync="normal")
    logs.configure(fmt="console", level="warning", raw_frames=False)
    start = datetime.now(UTC).replace(hour=OPENS, minute=0, second=0, microsecond=0)
    simulated = SimulatedClock(start - timedelta(days=days + 2))
    clock = JournalClock(simulated, lambda: simulated.now.timestamp())  # noqa: PLW0108 - `now` moves
    daemon = Daemon(config, driver_factory=lambda *_: None, clock=clock)  # type: ignore[arg-type]
    prepare_state_directory(config.state_directory)
    await daemon.journal.open()
    await daemon.recovery.recover()
    [table] = daemon.tables.values()
    await daemon.commits.commit(table, ConfigRecord(table.setup.table))
    step = timedelta(hours=PLAY_HOURS) / per_day
    cards, events = 0, 0
    for record in records(table.setup.table, seed=1):
        if isinstance(record, ShoeRecord) and isinstance(record.event, CardDrawn):
            cards += 1
            simulated.now += step
            if simulated.now.hour < OPENS:
                simulated.now = simulated.now.replace(hour=OPENS, minute=0, second=0)
        if cards > days * per_day:
            break
        await daemon.commits.commit(table, record)
        events += 1
        while (queued := daemon.outbox.peek()) is not None:  # as a broker would
            daemon.outbox.ack(queued.message_id)
    await daemon.journal.close()
    return events


async def ask_status(broker: Mosquitto, until: Callable[[int], bool]) -> list[float]:
    """Round trips of `status` requests, one every PACE seconds, until `until(sent)`."""
    topics = Topics()
    latencies: list[float] = []
    async with aiomqtt.Client(broker.host, broker.port, identifier="bench-status") as client:
        await client.subscribe(topics.response(TABLE, "status"), qos=1)
        for n in itertools.count():
            if until(n):
                break
            sent = time.monotonic()
            transaction = f"s{n}"
            payload = json.dumps({"transaction": transaction})
            await client.publish(topics.request(TABLE, "status"), payload, qos=1)
            async for message in client.messages:
                assert isinstance(message.payload, bytes)
                if json.loads(message.payload).get("transaction") == transaction:
                    latencies.append(time.monotonic() - sent)
                    break
            await asyncio.sleep(max(0.0, PACE - (time.monotonic() - sent)))
    return latencies


def archived(log: Path) -> tuple[int, datetime | None]:
    """From the daemon's log: the files archived, and when the last was."""
    files, last = 0, None
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith("{"):
            entry = json.loads(line)
            if entry.get("event") == "journal.archived":
                files += 1
                last = datetime.fromisoformat(entry["timestamp"])
    return files, last


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=20)
    parser.add_argument("--cards-per-day", type=int, default=3000)
    parser.add_argument("--requests", type=int, default=200, help="after the archive")
    args = parser.parse_args()
    print(f"machine: {machine()}")
    with workspace() as directory, bench_broker(directory) as broker:
        tables = [(table_mapping(Game.BLACKJACK, TABLE), "/dev/null-0")]
        config = write_config(directory, broker, tables)
        text = config.read_text(encoding="utf-8")
        config.write_text(text.replace("[logging]", "keep_days = 1\n[logging]", 1), "utf-8")
        began = time.monotonic()
        events = await write_journal(config, args.days, args.cards_per_day)
        took = time.monotonic() - began
        print(f"journal: {args.days} days, {events:,} events, written in {took:.0f} s", flush=True)
        daemon = ReadyDaemon(config, directory)
        try:
            ready = await daemon.start()
            ready_at = datetime.now(UTC)
            log = daemon.process.log
            during = await ask_status(broker, lambda _: archived(log)[0] >= args.days)
            after = await ask_status(broker, lambda sent: sent >= args.requests)
        finally:
            await daemon.stop()
        files, last = archived(log)
    assert last is not None
    print(f"start to READY=1: {ready:.2f} s")
    print(f"archive: {files} files, READY=1 to the last: {(last - ready_at).total_seconds():.1f} s")
    print(f"status while archiving: {describe_ms(during)}")
    print(f"status after: {describe_ms(after)}")


if __name__ == "__main__":
    asyncio.run(main())
