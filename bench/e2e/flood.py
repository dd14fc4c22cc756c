"""A card's way to the pit, quiet and under a flood of requests at its table.

    uv run python -m bench.e2e.flood [--cards 1000] [--rate 5000] [--profile DIR]

One blackjack table: an emulated shoe (reference protocol, pty) dealing burned cards one at a
time, the real daemon (`shoe2mqtt run`, journal on disk, `synchronous=FULL`), mosquitto, and
a display subscribed to the table. Each card is timed from the moment the shoe writes it to
the moment the display receives its `event/card_burned` (same process, CLOCK_MONOTONIC).
Phases of `--cards` cards alternate, quiet then flooded, twice: the flood is another process
(`daemon.testing.flood`) publishing `{}` to the table's `request/status` at `--rate` a second,
QoS 0, as the issue's was. It prints p50, p99 and max of each kind of phase, the ratio of the
p99s (goal ≤ 1.5), the daemon's CPU in each, and what the flood cost the broker (responses and
notices the display received).

`--profile DIR` runs py-spy (`--py-spy PATH`, a throwaway venv's) on the daemon during the
flooded phases and writes a CPU-only (no idle) flame graph there.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import time
from dataclasses import dataclass, field
from pathlib import Path

import aiomqtt

from bench.e2e.harness import (
    ReadyDaemon,
    bench_broker,
    describe_ms,
    machine,
    percentile,
    py_spy_profile,
    workspace,
    write_config,
)
from daemon.testing import TABLE_SETTINGS, MessageLog
from daemon.testing.flood import Flood, card_latencies
from daemon.wire.topics import Topics
from drivers.emulator import EmulatedShoe, EmulatorSettings

TABLE = TABLE_SETTINGS["id"]
TOPICS = Topics()
DISPLAYED = ("availability", "state", "round", "event/#", "notice/#", "response/#")
BURNED = TOPICS.event(TABLE, "card_burned")


@dataclass
class Phase:
    """Cards of one kind of phase (quiet or flooded), and what the daemon spent meanwhile."""

    latencies: list[float] = field(default_factory=list)
    cpu: float = 0.0
    seconds: float = 0.0
    received: int = 0  # messages the display received

    async def deal(
        self, shoe: EmulatedShoe, log: MessageLog, daemon: ReadyDaemon, cards: int
    ) -> None:
        began, cpu, mark = time.monotonic(), daemon.cpu_seconds(), log.mark()
        self.latencies += await card_latencies(shoe, log, BURNED, cards)
        self.seconds += time.monotonic() - began
        self.cpu += daemon.cpu_seconds() - cpu
        self.received += len(log.messages) - mark

    def describe(self) -> str:
        return (
            f"card written -> pit {describe_ms(self.latencies)} cards; "
            f"daemon CPU {self.cpu / self.seconds:.2f} of a core; "
            f"{self.received:,} messages to the display"
        )


async def measure(args: argparse.Namespace, directory: Path) -> tuple[Phase, Phase, int]:
    """Quiet and flooded phases in turn, twice; (quiet, flooded, requests sent)."""
    quiet, flooded, sent = Phase(), Phase(), 0
    script = " ".join(["BURN QH"] * (4 * args.cards + 20))
    with bench_broker(directory) as broker:
        async with (
            EmulatedShoe(EmulatorSettings(protocol="reference", script=script)) as shoe,
            aiomqtt.Client(broker.host, broker.port, identifier="display") as display,
        ):
            # What a display may read (docs/security.md): the table's outputs, not its requests.
            await display.subscribe([(f"{TOPICS.base}/{TABLE}/{part}", 1) for part in DISPLAYED])
            log = MessageLog()
            recording = asyncio.create_task(log.record(display))
            # A real table's request limits: the flood is what they are for.
            config = write_config(directory, broker, [(TABLE_SETTINGS, shoe.path)], automated=False)
            daemon = ReadyDaemon(config, directory)
            await daemon.start()
            try:
                await asyncio.wait_for(shoe.wait_for_host(), 10)
                await card_latencies(shoe, log, BURNED, 20)  # warm up
                for turn in range(2):
                    await quiet.deal(shoe, log, daemon, args.cards)
                    topic = args.topic or TOPICS.request(TABLE, "status")
                    flood = Flood(broker.port, topic, rate=args.rate, seconds=600)
                    await flood.start()
                    try:
                        await asyncio.sleep(1)
                        out = (args.profile or directory) / f"daemon-flood-{turn}.txt"
                        spy = args.py_spy if args.profile else None
                        with py_spy_profile(spy, out, daemon.process.pid):
                            await flooded.deal(shoe, log, daemon, args.cards)
                    finally:
                        sent += (await flood.stop()).sent
                    await asyncio.sleep(REPORT_PAUSE)
            finally:
                await daemon.stop()
                recording.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await recording
    return quiet, flooded, sent


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cards", type=int, default=1000, help="cards per phase")
    parser.add_argument("--rate", type=float, default=5000.0, help="requests a second")
    parser.add_argument("--profile", type=Path, help="write a py-spy CPU profile here")
    parser.add_argument("--py-spy", default="py-spy", help="the py-spy executable")
    parser.add_argument("--topic", help="flood this topic instead (a control: nobody reads it)")
    args = parser.parse_args()
    print(f"machine: {machine()}")
    with workspace() as directory:
        quiet, flooded, sent = await measure(args, directory)
    ratio = percentile(flooded.latencies, 0.99) / percentile(quiet.latencies, 0.99)
    print(f"quiet:   {quiet.describe()}")
    print(f"flooded: {flooded.describe()}; {sent:,} requests sent at {args.rate:,.0f}/s")
    print(f"p99 flooded / quiet: {ratio:.2f} (goal <= 1.5)")


REPORT_PAUSE = 1.0  # seconds between phases: the flood's last notice goes out


if __name__ == "__main__":
    asyncio.run(main())
