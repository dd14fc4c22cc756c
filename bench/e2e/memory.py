"""Resident memory of one daemon over a long run: after 10 thousand cards, and after as many
as `--cards` (default 1 million) or `--seconds` (default 600) allow, whichever comes first.

    uv run python -m bench.e2e.memory [--tables 8] [--cards 1000000] [--seconds 600]

The load is scale.py's (closed-loop players over MQTT, journal on disk); the daemon's RSS
is read from /proc every 10,000 cards and printed, so growth shows as it happens.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import time

from bench.e2e.harness import Pit, bench_broker, machine, serving, workspace
from rules.games import Game


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=8)
    parser.add_argument("--cards", type=int, default=1_000_000)
    parser.add_argument("--seconds", type=float, default=600.0)
    args = parser.parse_args()
    print(f"machine: {machine()}")
    games = list(itertools.islice(itertools.cycle(Game), args.tables))
    pit = Pit(games)
    with workspace() as directory, bench_broker(directory) as broker:
        async with serving(pit, directory, broker) as daemon:
            print(f"after start: RSS {daemon.rss_mib():.1f} MiB", flush=True)
            playing = asyncio.create_task(
                pit.play(broker.port, settlements=10**12, seconds=args.seconds)
            )
            began = time.monotonic()
            mark = 10_000
            samples: list[tuple[int, float]] = []
            while not playing.done():
                await asyncio.sleep(0.2)
                if pit.cards() >= mark:
                    samples.append((pit.cards(), daemon.rss_mib()))
                    print(
                        f"{samples[-1][0]:>9,} cards  {time.monotonic() - began:7.1f} s  "
                        f"RSS {samples[-1][1]:.1f} MiB",
                        flush=True,
                    )
                    mark += 10_000
                    if pit.cards() >= args.cards:
                        playing.cancel()
            await asyncio.gather(playing, return_exceptions=True)
            final = (pit.cards(), daemon.rss_mib())
    first = samples[0] if samples else final
    print(
        f"RSS after {first[0]:,} cards: {first[1]:.1f} MiB; after {final[0]:,} cards "
        f"({time.monotonic() - began:.0f} s): {final[1]:.1f} MiB; "
        f"growth {final[1] - first[1]:+.1f} MiB"
    )


if __name__ == "__main__":
    asyncio.run(main())
