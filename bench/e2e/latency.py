"""Card-to-settlement latency, side by side with a bare relay on the same ports.

    uv run python -m bench.e2e.latency [--settlements 10000] [--tables 4] [--sync full,normal]

Phase 1, the bare relay (`bench.e2e.relay`, its own process): each table's emulated shoe
writes a card, the relay reads the frame and publishes it as-is, and the subscriber (this
process) notes its arrival; then the next card. Then, for each `[journal] sync` mode asked
for, the daemon (`shoe2mqtt run`, its own process, journal on disk, JSON logs at level
info): the demo's dealer and players drive Triple Attack tables through the request topics;
each settlement is timed from the write of the last card on its table (the card that decided
it) to its receipt here. Both clocks are this process's CLOCK_MONOTONIC. Every phase runs
in this one process tree, one after another, and each daemon phase prints its ratios to the
relay, the baseline.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time
from typing import TYPE_CHECKING

import aiomqtt

from bench.e2e.harness import (
    Pit,
    TimedShoe,
    bench_broker,
    describe_ms,
    machine,
    no_delay,
    percentile,
    serving,
    workspace,
)
from daemon.simulator.tables import demo_shoe
from rules.games import Game

if TYPE_CHECKING:
    from daemon.testing import Mosquitto


async def relay_phase(port: int, tables: int, cards: int) -> list[float]:  # noqa: C901 - one phase, read top to bottom
    shoes = [TimedShoe(demo_shoe(Game.TRIPLE_ATTACK, 7000 + i)) for i in range(tables)]
    for shoe in shoes:
        await shoe.__aenter__()
    relay = subprocess.Popen(  # noqa: S603, ASYNC220 - our own module; started once, at once
        [sys.executable, "-m", "bench.e2e.relay", str(port), *(s.path for s in shoes)],
        stdout=subprocess.PIPE,
    )
    latencies: list[float] = []
    try:
        assert relay.stdout is not None
        await asyncio.to_thread(relay.stdout.readline)
        arrived = [asyncio.Event() for _ in shoes]
        async with aiomqtt.Client("127.0.0.1", port, identifier="bench-relay-sub") as client:
            no_delay(client)
            await client.subscribe("relay/#", qos=1)
            for shoe in shoes:
                await asyncio.wait_for(shoe.wait_for_host(), 10)
            await asyncio.sleep(0.5)  # the power-up frames go by first

            async def listen() -> None:
                async for message in client.messages:
                    now = time.monotonic()
                    index = int(message.topic.value.rsplit("/", 1)[1])
                    if arrived[index].is_set() is False:
                        latencies.append(now - shoes[index].last_card_at)
                        arrived[index].set()

            async def deal(index: int) -> None:
                while len(latencies) < cards:
                    arrived[index].clear()
                    if await shoes[index].next_card() is None:
                        return
                    await asyncio.wait_for(arrived[index].wait(), 10)

            listener = asyncio.create_task(listen())
            await asyncio.gather(*(deal(i) for i in range(tables)))
            listener.cancel()
            await asyncio.gather(listener, return_exceptions=True)
    finally:
        relay.terminate()
        try:
            relay.wait(10)
        except subprocess.TimeoutExpired:
            relay.kill()
            relay.wait()
        for shoe in shoes:
            await shoe.aclose()
    return latencies


async def daemon_phase(broker: Mosquitto, tables: int, settlements: int, sync: str) -> Pit:
    pit = Pit([Game.TRIPLE_ATTACK] * tables)
    with workspace() as directory:
        async with serving(pit, directory, broker, sync=sync):
            await pit.play(broker.port, settlements=settlements, seconds=600)
    return pit


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--settlements", type=int, default=10_000)
    parser.add_argument("--tables", type=int, default=4)
    parser.add_argument(
        "--sync", default="full,normal", help="[journal] sync modes to run, in order"
    )
    args = parser.parse_args()
    print(f"machine: {machine()}")
    with workspace() as directory, bench_broker(directory) as broker:
        relay = await relay_phase(broker.port, args.tables, args.settlements)
        print(f"bare relay, {args.tables} shoes, card write to receipt: {describe_ms(relay)}")
        for sync in args.sync.split(","):
            pit = await daemon_phase(broker, args.tables, args.settlements, sync)
            ours = pit.latencies
            print(
                f"shoe2mqtt sync={sync}, {args.tables} Triple Attack tables, card write to "
                f"settlement receipt: {describe_ms(ours)} ({pit.settlements:,} settlements, "
                f"{pit.cards():,} cards)"
            )
            p50 = percentile(ours, 0.5) / percentile(relay, 0.5)
            p99 = percentile(ours, 0.99) / percentile(relay, 0.99)
            print(
                f"  ratio to the bare relay, sync={sync}: p50 {p50:.2f}x, p99 {p99:.2f}x "
                "(goal: p99 <= 1.5x)",
                flush=True,
            )


if __name__ == "__main__":
    asyncio.run(main())
