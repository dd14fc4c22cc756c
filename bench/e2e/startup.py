"""Start-up with a large journal: from process start to READY=1.

    uv run python -m bench.e2e.startup [--events 100000] [--tables 8]

The journal is written first through the daemon's own path (`Daemon._commit`: the inbound
event, then its outputs, exactly as live), from basic-strategy rounds of blackjack, Double
Attack and Triple Attack tables: cards and shuffles as shoe records, wagers and actions as
request records. Only the generator runs with synchronous=OFF, to be quick; the messages it
made are then marked delivered, as a broker would have done. Then `shoe2mqtt run` starts
over it, with NOTIFY_SOCKET pointing at a listener here: the figure is the time from the
process's start to READY=1 (journal replayed, every table rebuilt, broker connected).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import random
import time
from typing import TYPE_CHECKING, Any

from bench.e2e.harness import (
    ReadyDaemon,
    bench_broker,
    machine,
    table_mapping,
    workspace,
    write_config,
)
from daemon.config import load_config
from daemon.console import console_request
from daemon.inbound import to_record
from daemon.journal import prepare_state_directory
from daemon.service import Daemon
from daemon.table_service import request_record
from drivers.events import CardDrawn, NewShoe
from rules.engine import TableEngine
from rules.events import DealCard, Shuffle
from rules.games import GAMES, Game
from rules.player import Dealer

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from daemon.journal import EventKind
    from rules.config import TableConfig
    from rules.events import TableEvent


def records(config: TableConfig, seed: int) -> Iterator[tuple[EventKind, dict[str, Any]]]:
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


def as_record(event: TableEvent, seq: int) -> tuple[EventKind, dict[str, Any]]:
    if isinstance(event, DealCard):
        code = str(event.card)
        drawn = CardDrawn(code[:-1], code[-1], seq % 65536, burned=event.burned)  # type: ignore[arg-type]
        return "shoe", to_record(drawn)
    if isinstance(event, Shuffle):
        return "shoe", to_record(NewShoe())
    command, body = console_request(event)
    return "request", request_record(command, json.dumps(body).encode())


async def write_journal(config_path: Path, events: int) -> None:
    daemon = Daemon(load_config(config_path), driver_factory=lambda _: None)  # type: ignore[arg-type,return-value]
    journal = daemon.journal
    prepare_state_directory(daemon.config.state_directory)
    await journal.open()
    await journal._run(lambda db: db.execute("PRAGMA synchronous = OFF"))  # noqa: SLF001 - generator only
    await daemon._recover()  # noqa: SLF001 - start and config events, as a first start writes
    streams = [
        (table, records(table.setup.table, index))
        for index, table in enumerate(daemon.tables.values())
    ]
    written = 0
    while written < events:
        for table, stream in streams:
            kind, record = next(stream)
            await daemon._commit(table, kind, record)  # noqa: SLF001 - the daemon's own path
            written += 1
    pending = await journal.pending()
    await journal.forget_delivered(m.rowid for m in pending)
    await journal.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--tables", type=int, default=8)
    args = parser.parse_args()
    print(f"machine: {machine()}")
    games = list(itertools.islice(itertools.cycle(Game), args.tables))
    with workspace() as directory, bench_broker(directory) as broker:
        tables = [
            (table_mapping(game, f"{game.value.replace('_', '-')}-{i}"), f"/dev/null-{i}")
            for i, game in enumerate(games)
        ]
        config = write_config(directory, broker, tables)
        began = time.monotonic()
        await write_journal(config, args.events)
        size = sum(f.stat().st_size for f in (directory / "state").iterdir()) / 2**20
        print(
            f"journal: {args.events:,} events over {args.tables} tables, {size:.1f} MiB, "
            f"written in {time.monotonic() - began:.0f} s",
            flush=True,
        )
        times = []
        for _ in range(3):
            daemon = ReadyDaemon(config, directory)
            try:
                times.append(await daemon.start())
            finally:
                await daemon.stop()
    print(
        f"start to READY=1 with {args.events:,} journaled events: "
        + ", ".join(f"{t:.2f} s" for t in times)
        + " (three starts; each start adds its own start and config events)"
    )


if __name__ == "__main__":
    asyncio.run(main())
