"""Start-up with a large journal against start-up with none: from process start to READY=1.

    uv run python -m bench.e2e.startup [--events 1000000] [--tables 8] [--starts 3]

The journal is written first through the daemon's own path (`TableCommits.commit`: the inbound
event committed, applied, its checkpoints riding along, exactly as live), from
basic-strategy rounds of blackjack, Double Attack and Triple Attack tables, every table at
once: cards and shuffles as shoe records, wagers and actions as request records. Only the
generator runs with `sync = "normal"`, to be quick; every message it made is then marked
delivered, as a broker would have done. Then `shoe2mqtt run` starts, alternately, over an
empty state directory (a new install: the journal is created) and over the large journal,
with NOTIFY_SOCKET pointing at a listener here: each figure is the time from the process's
start to READY=1 (journal opened, every table rebuilt, broker connected). The goal (issue
13): the large journal's median within 1.5 times the empty one's, printed as the ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import itertools
import json
import random
import shutil
import statistics
import time
from typing import TYPE_CHECKING

from bench.e2e.harness import (
    ReadyDaemon,
    bench_broker,
    machine,
    table_mapping,
    workspace,
    write_config,
)
from daemon.configuration.service_config import load_config
from daemon.journal import prepare_state_directory
from daemon.service import Daemon
from daemon.system import logs
from daemon.table.records import JournalRecord, RequestRecord, ShoeRecord
from daemon.wire.console import console_request
from drivers.events import CardDrawn, NewShoe
from rules.engine import TableEngine
from rules.events import DealCard, Shuffle
from rules.games import GAMES, Game
from rules.player import Dealer

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from daemon.parts.items import ServedTable
    from rules.config import TableConfig
    from rules.events import TableEvent


def records(config: TableConfig, seed: int) -> Iterator[JournalRecord]:
    """Journal records of endless rounds at one table, every seat playing."""
    rules = GAMES[config.game]
    plan = {
        seat: {rule.kind: config.limits[rule.kind].minimum for rule in rules.wagers}
        for seat in range(1, config.seats + 1)
    }
    dealer = Dealer(TableEngine(config), random.Random(seed))  # noqa: S311 - a bench's shoe
    seq = itertools.count(1)
    while True:
        for event in dealer.play(plan).events:
            yield as_record(event, next(seq))


def as_record(event: TableEvent, seq: int) -> JournalRecord:
    if isinstance(event, DealCard):
        code = str(event.card)
        drawn = CardDrawn(code[:-1], code[-1], seq % 65536, burned=event.burned)  # type: ignore[arg-type]
        return ShoeRecord(drawn)
    if isinstance(event, Shuffle):
        return ShoeRecord(NewShoe())
    command, body = console_request(event)
    return RequestRecord(command, json.dumps(body).encode())


async def write_journal(config_path: Path, events: int) -> None:
    # sync "normal" for the generator only, to be quick: no fsync at every commit.
    config = dataclasses.replace(load_config(config_path), journal_sync="normal")
    logs.configure(fmt="console", level="warning", raw_frames=False)  # not every settlement
    daemon = Daemon(config, driver_factory=lambda *_: None)  # type: ignore[arg-type]
    journal = daemon.journal
    prepare_state_directory(daemon.config.state_directory)
    await journal.open()
    await daemon.recovery.recover()
    share = events // len(daemon.tables)

    async def deal(index: int, table: ServedTable) -> None:
        for record in itertools.islice(records(table.setup.table, index), share):
            await daemon.commits.commit(table, record)
            while (queued := daemon.outbox.peek()) is not None:  # as a broker would
                daemon.outbox.ack(queued.message_id)

    await asyncio.gather(*(deal(i, t) for i, t in enumerate(daemon.tables.values())))
    await journal.close()


async def start_once(config: Path, directory: Path) -> float:
    daemon = ReadyDaemon(config, directory)
    try:
        return await daemon.start()
    finally:
        await daemon.stop()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--tables", type=int, default=8)
    parser.add_argument("--starts", type=int, default=3, help="starts of each kind")
    args = parser.parse_args()
    print(f"machine: {machine()}")
    games = list(itertools.islice(itertools.cycle(Game), args.tables))
    with workspace() as directory, bench_broker(directory) as broker:
        tables = [
            (table_mapping(game, f"{game.value.replace('_', '-')}-{i}"), f"/dev/null-{i}")
            for i, game in enumerate(games)
        ]
        empty, full = directory / "empty", directory / "full"
        empty.mkdir()
        full.mkdir()
        empty_config = write_config(empty, broker, tables)
        full_config = write_config(full, broker, tables)
        began = time.monotonic()
        await write_journal(full_config, args.events)
        size = sum(f.stat().st_size for f in (full / "state").iterdir()) / 2**20
        print(
            f"journal: {args.events:,} events over {args.tables} tables, {size:.1f} MiB, "
            f"written in {time.monotonic() - began:.0f} s",
            flush=True,
        )
        empty_times, full_times = [], []
        for _ in range(args.starts):  # alternately, so that the machine's load falls on both
            shutil.rmtree(empty / "state", ignore_errors=True)  # a new install, every time
            empty_times.append(await start_once(empty_config, empty))
            full_times.append(await start_once(full_config, full))
    ratio = statistics.median(full_times) / statistics.median(empty_times)
    print("start to READY=1, empty journal: " + ", ".join(f"{t:.2f} s" for t in empty_times))
    print(
        f"start to READY=1, {args.events:,} journaled events: "
        + ", ".join(f"{t:.2f} s" for t in full_times)
    )
    print(f"ratio of the medians: {ratio:.2f} (goal: at most 1.5)")


if __name__ == "__main__":
    asyncio.run(main())
