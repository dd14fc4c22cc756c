"""Tables per daemon process: 1, 8, 32 and 64 emulated shoes in one `shoe2mqtt run`.

    uv run python -m bench.e2e.scale [--tables 1 8 32 64] [--seconds 30]

Each table (blackjack, Double Attack and Triple Attack in turn) is played by the demo's
dealer and players through the request topics, closed loop: a step (a card from the shoe,
or a request) waits for the daemon's round snapshot before the next, so every table deals as
fast as the daemon answers it (bench/e2e/harness.py). Over `--seconds` after a 3 s warm-up:
cards per second written by all shoes, settlement latency (card write to receipt), the
daemon's CPU time over wall time (1.0 = one core) and its resident memory at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import time

from bench.e2e.harness import Pit, bench_broker, describe_ms, machine, serving, workspace
from rules.games import Game


async def measure(tables: int, seconds: float) -> str:
    games = list(itertools.islice(itertools.cycle(Game), tables))
    pit = Pit(games)
    with workspace() as directory, bench_broker(directory) as broker:
        async with serving(pit, directory, broker) as daemon:
            playing = asyncio.create_task(
                pit.play(broker.port, settlements=10**12, seconds=seconds + 3)
            )
            await asyncio.sleep(3)
            cards, cpu, began = pit.cards(), daemon.cpu_seconds(), time.monotonic()
            pit.latencies.clear()
            await playing
            wall = time.monotonic() - began
            cards, cpu = pit.cards() - cards, daemon.cpu_seconds() - cpu
            rss = daemon.rss_mib()
    latency = describe_ms(pit.latencies)
    return (
        f"{tables:>3} shoes: {cards / wall:,.0f} cards/s, settlements {latency}, "
        f"CPU {cpu / wall:.2f} of a core, RSS {rss:.0f} MiB"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, nargs="+", default=[1, 8, 32, 64])
    parser.add_argument("--seconds", type=float, default=30.0)
    args = parser.parse_args()
    print(f"machine: {machine()}")
    for tables in args.tables:
        print(await measure(tables, args.seconds), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
