"""A noisy shoe line beside a table at play: the daemon's memory and journal, the other table's
cards, and how soon the noisy table takes a card once the noise stops.

    uv run python -m bench.e2e.noise [--seconds 120] [--protocol enq|reference|both]

Two tables, one daemon (`shoe2mqtt run`, journal on disk, `synchronous=FULL`), mosquitto.
Random bytes go into the noisy table's line for `--seconds`, as fast as the daemon reads them
(daemon.testing.noise), while the quiet table plays on; then the noisy table's shoe sends one
card, and the time from the end of the noise to that card reaching the pit is its recovery.

- `enq`: both shoes played by hand on socat pty pairs (daemon.testing.enq_table); the quiet
  table plays whole rounds (wagers, "No more bets", decisions), each card timed from its frame
  to its `card_dealt` at the pit. The noisy table's card comes while the noise may have eaten
  a frame before it, so it is held for the dealer console (docs/protocol.md §2.4): its
  recovery is the time until the pit sees it held.
- `reference`: both shoes emulated (drivers.emulator) on ptys; the quiet one deals burn cards
  one after another, each timed to its `card_burned`; the noise goes onto the noisy shoe's
  line between its frames, and its card after the noise is timed to its `card_burned`.

Printed for each: the noise (bytes, rate), the daemon's resident memory before the noise, its
peak during it and after, its CPU during the noise, the journal's events added (by the noisy
table, and in all), the quiet table's card latency, and the noisy table's recovery.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sqlite3
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from bench.e2e.harness import (
    BAUDRATE,
    ReadyDaemon,
    bench_broker,
    describe_ms,
    machine,
    table_mapping,
    workspace,
)
from daemon.testing import Collector, SocatPair, write_service_config
from daemon.testing.enq_table import TABLE, EnqTable
from daemon.testing.flood import card_latencies
from daemon.testing.noise import NoiseWritten, write_noise
from drivers.emulator import EmulatedShoe, EmulatorSettings
from drivers.events import CommunicationStarted
from rules.games import Game

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
    from pathlib import Path

    from daemon.testing import Mosquitto, Received

QUIET, NOISY = "bj-quiet", "bj-noisy"
WAIT: Final = 30.0  # seconds for anything the daemon is to do
BURNS: Final = "BURN QH"  # the reference shoes' script: burned queens, as many as needed


@dataclass
class Measure:
    """One protocol's run."""

    protocol: str
    noise: NoiseWritten | None = None
    rss: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])  # MiB: before, peak, after
    cpu: float = 0.0  # the daemon's CPU seconds during the noise
    events: list[int] = field(default_factory=lambda: [0, 0])  # added: the noisy table's, all
    latencies: list[float] = field(default_factory=list)
    recovery: float = 0.0

    def describe(self) -> str:
        noise = self.noise
        assert noise is not None
        before, peak, after = self.rss
        lines = [
            (
                f"{self.protocol}: {noise.bytes / 1e6:,.1f} MB of noise in {noise.seconds:.1f} s "
                f"({noise.rate / 1e6:.2f} MB/s); daemon CPU {self.cpu / noise.seconds:.2f} of a "
                "core meanwhile"
            ),
            (
                f"RSS before {before:.1f} MiB, peak {peak:.1f} MiB, after {after:.1f} MiB "
                f"({(peak / before - 1) * 100:+.1f} % at the peak)"
            ),
            (
                f"journal events added: {self.events[0]:,} by the noisy table, {self.events[1]:,} "
                "in all"
            ),
            f"quiet table, card written -> pit: {describe_ms(self.latencies)}",
            f"noisy table, end of the noise -> its card at the pit: {self.recovery * 1e3:.0f} ms",
        ]
        return "\n  ".join(lines)


def journal_events(directory: Path, table: str | None = None) -> int:
    """Events the journal holds (for `table`), read beside the running daemon."""
    uri = f"file:{directory / 'state' / 'journal.sqlite3'}?mode=ro"
    with contextlib.closing(sqlite3.connect(uri, uri=True)) as journal:
        if table is None:
            (count,) = journal.execute("SELECT COUNT(*) FROM events").fetchone()
        else:
            query = "SELECT COUNT(*) FROM events WHERE table_id = ?"
            (count,) = journal.execute(query, (table,)).fetchone()
    return int(count)


@contextlib.asynccontextmanager
async def noise_on(
    measure: Measure,
    daemon: ReadyDaemon,
    send: Callable[[bytes], Awaitable[object]],
    seconds: float,
) -> AsyncIterator[asyncio.Task[NoiseWritten]]:
    """The noise, written for `seconds` while the block plays the quiet table; the daemon's
    memory and CPU measured meanwhile. The block ends once the noise is over."""
    measure.events = [-journal_events(daemon.directory, NOISY), -journal_events(daemon.directory)]
    measure.rss[0] = measure.rss[1] = daemon.rss_mib()
    cpu = daemon.cpu_seconds()

    async def sample() -> None:
        while True:
            measure.rss[1] = max(measure.rss[1], daemon.rss_mib())
            await asyncio.sleep(0.2)

    sampling = asyncio.create_task(sample(), name="rss")
    noise = asyncio.create_task(write_noise(send, seconds=seconds), name="noise")
    try:
        yield noise
        measure.noise = await noise
        measure.cpu = daemon.cpu_seconds() - cpu
    finally:
        for task in (sampling, noise):
            task.cancel()
        await asyncio.gather(sampling, noise, return_exceptions=True)


async def finish(measure: Measure, daemon: ReadyDaemon, collector: Collector, mark: int) -> None:
    """Once the noisy table took its card: its summary of the noise, memory now, and the
    journal's events added."""
    summary = f"{collector.topics.base}/{NOISY}/notice/line_noise"

    def summarised(message: Received) -> bool:
        return message.topic == summary and "bytes read" in message.body["message"]

    await collector.wait(summarised, after=mark, within=WAIT)
    measure.rss[2] = daemon.rss_mib()
    measure.events[0] += journal_events(daemon.directory, NOISY)
    measure.events[1] += journal_events(daemon.directory)


@contextlib.asynccontextmanager
async def running(
    directory: Path, broker: Mosquitto, protocol: str, tables: Sequence[tuple[dict[str, Any], str]]
) -> AsyncIterator[tuple[ReadyDaemon, Collector]]:
    """The daemon reading `tables`' shoes (READY=1, each reader connected), and the pit."""
    config = write_service_config(
        directory / "shoe2mqtt.toml", broker, node="bench", state_directory=directory / "state",
        tables=tables, baudrate=BAUDRATE, protocol=protocol, sync="full",
    )  # fmt: skip
    async with Collector(broker.host, broker.port, identifier="bench-noise") as collector:
        daemon = ReadyDaemon(config, directory)
        await daemon.start()
        try:
            for name, _ in tables:
                await collector.wait(_connected(collector, name["id"]), within=WAIT)
            yield daemon, collector
        finally:
            await daemon.stop()


def _connected(collector: Collector, table: str) -> Callable[[Received], bool]:
    topic = f"{collector.topics.base}/{table}/state"
    return lambda m: m.topic == topic and m.body["reader"]["link"] == "connected"


async def measure_enq(directory: Path, broker: Mosquitto, seconds: float) -> Measure:
    measure = Measure("enq")
    async with contextlib.AsyncExitStack() as stack:
        cables = []
        for name in (QUIET, NOISY):
            (directory / name).mkdir()
            cables.append(await stack.enter_async_context(SocatPair(directory / name)))
        names = (QUIET, NOISY)
        tables = [
            ({**TABLE, "id": n}, str(c.host_path)) for n, c in zip(names, cables, strict=True)
        ]
        daemon, collector = await stack.enter_async_context(
            running(directory, broker, "enq", tables)
        )
        quiet, noisy = (EnqTable(n, c, collector) for n, c in zip(names, cables, strict=True))
        for _ in range(2):  # what a round allocates, allocated before the measure
            await quiet.play_round()
        await noisy.ok("shuffle")  # the noisy table between rounds, its burn taken
        noisy.cable.write(noisy.frame(CommunicationStarted()))
        await noisy.timed_card("9H", burned=True)
        mark = collector.mark()
        async with noise_on(measure, daemon, noisy.cable.write_all, seconds) as noise:
            while not noise.done():
                measure.latencies += await quiet.play_round()
        assert measure.noise is not None
        noisy.cable.write(noisy.card("5D"))
        await noisy.until(lambda snapshot: snapshot["cards_held"] == 1, after=mark)
        measure.recovery = time.monotonic() - measure.noise.ended_at
        await finish(measure, daemon, collector, mark)
    return measure


async def measure_reference(directory: Path, broker: Mosquitto, seconds: float) -> Measure:
    measure = Measure("reference")
    script = " ".join([BURNS] * 100_000)
    async with contextlib.AsyncExitStack() as stack:
        shoes = [
            await stack.enter_async_context(
                EmulatedShoe(EmulatorSettings(protocol="reference", script=script))
            )
            for _ in (QUIET, NOISY)
        ]
        names = (QUIET, NOISY)
        tables = [
            (table_mapping(Game.BLACKJACK, n), s.path) for n, s in zip(names, shoes, strict=True)
        ]
        daemon, collector = await stack.enter_async_context(
            running(directory, broker, "reference", tables)
        )
        quiet, noisy = shoes
        burned = [f"{collector.topics.base}/{n}/event/card_burned" for n in (QUIET, NOISY)]
        await card_latencies(quiet, collector, burned[0], 20)  # warm up
        await card_latencies(noisy, collector, burned[1], 1)
        mark = collector.mark()
        async with noise_on(measure, daemon, noisy.write_noise, seconds) as noise:
            while not noise.done():
                measure.latencies += await card_latencies(quiet, collector, burned[0], 10)
        assert measure.noise is not None
        await noisy.next_card()
        await collector.wait(lambda m: m.topic == burned[1], after=mark, within=WAIT)
        measure.recovery = time.monotonic() - measure.noise.ended_at
        await finish(measure, daemon, collector, mark)
    return measure


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=120.0, help="seconds of noise")
    parser.add_argument("--protocol", choices=("enq", "reference", "both"), default="both")
    args = parser.parse_args()
    print(f"machine: {machine()}", flush=True)
    protocols = ("enq", "reference") if args.protocol == "both" else (args.protocol,)
    for protocol in protocols:
        measure = measure_enq if protocol == "enq" else measure_reference
        with workspace() as directory, bench_broker(directory) as broker:
            print((await measure(directory, broker, args.seconds)).describe(), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
