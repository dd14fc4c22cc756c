"""A noisy shoe line costs its table a notice, never memory, the journal or the other tables.

`shoe2mqtt run` as a process, a real mosquitto, two ENQ tables on socat pty pairs. Random bytes
go into one table's port as fast as the daemon reads them (line noise at a device server's
speed: some 7,800 would-be ACK and NAK frames a megabyte) while the other table plays rounds
by hand-built frames and its console (daemon.testing.enq_table). The daemon's resident memory
stays within 10 % of what it was before the noise; the other table's cards reach the pit on
time; the noise costs the journal a handful of events, the pit one summary and the log one
line; and the noisy table's own card, written as the noise stops, is taken at once (held for
the dealer console: on a shoe that keeps nothing, a card's frame before it may have been lost
in the noise, docs/protocol.md §2.4). The two-minute run, with figures, is
`uv run python -m bench.e2e.noise` (docs/performance.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import sqlite3
import time
from typing import TYPE_CHECKING, Final

import psutil
import pytest

from daemon.testing import Collector, DaemonProcess, SocatPair, write_service_config
from daemon.testing.enq_table import TABLE, EnqTable
from daemon.testing.noise import NoiseWritten, write_noise
from drivers.events import CommunicationStarted

# A time or memory figure: measured alone, not beside the parallel run (scripts/test).
pytestmark = pytest.mark.serial

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable
    from pathlib import Path

    from daemon.testing import Mosquitto, Received

NOISE_SECONDS: Final = 8.0  # some 70 MB of noise and 70 of the quiet table's cards
QUIET, NOISY = "bj-quiet", "bj-noisy"
CARD_ON_TIME: Final = 1.0  # seconds from a card's frame to its event at the pit, at most
RECOVERY: Final = 1.0  # seconds from the end of the noise to the noisy table's card


@contextlib.asynccontextmanager
async def _pit(
    directory: Path, broker: Mosquitto
) -> AsyncIterator[tuple[DaemonProcess, EnqTable, EnqTable]]:
    async with contextlib.AsyncExitStack() as stack:
        cables = []
        for name in (QUIET, NOISY):
            (directory / name).mkdir()
            cables.append(await stack.enter_async_context(SocatPair(directory / name)))
        tables = [
            ({"id": n, **TABLE}, c.host_path) for n, c in zip((QUIET, NOISY), cables, strict=True)
        ]
        config = write_service_config(
            directory / "shoe2mqtt.toml", broker, node="pit-a",
            state_directory=directory / "state", protocol="enq", tables=tables,
        )  # fmt: skip
        collector = await stack.enter_async_context(
            Collector(broker.host, broker.port, identifier="line-noise")
        )
        daemon = DaemonProcess(config, directory / "daemon.log")
        mark = collector.mark()
        await daemon.start()
        try:
            await collector.wait_online(mark)
            for name in (QUIET, NOISY):
                await collector.wait(_connected(name), within=15)
            yield (
                daemon,
                EnqTable(QUIET, cables[0], collector),
                EnqTable(NOISY, cables[1], collector),
            )
        finally:
            assert await daemon.stop() == 0, daemon.tail()


def _connected(table: str) -> Callable[[Received], bool]:
    topic = f"shoe2mqtt/{table}/state"
    return lambda m: m.topic == topic and m.body["reader"]["link"] == "connected"


def _events(directory: Path, table: str) -> int:
    """How many events the journal holds for `table` (read-only, beside the daemon)."""
    uri = f"file:{directory / 'state' / 'journal.sqlite3'}?mode=ro"
    with contextlib.closing(sqlite3.connect(uri, uri=True)) as journal:
        (count,) = journal.execute(
            "SELECT COUNT(*) FROM events WHERE table_id = ?", (table,)
        ).fetchone()
    return int(count)


async def _peak_rss(process: psutil.Process, peak: list[int]) -> None:
    while True:
        peak[0] = max(peak[0], process.memory_info().rss)
        await asyncio.sleep(0.2)


def _notices(collector: Collector, table: str, after: int) -> list[Received]:
    prefix = f"shoe2mqtt/{table}/notice/line_noise"
    return [m for m in collector.messages[after:] if m.topic == prefix]


@pytest.mark.timeout(180)
async def _noise_then_a_card(noisy: EnqTable) -> tuple[NoiseWritten, float]:
    """The noise, then at once the noisy table's card, while the line is still noisy to the
    daemon (a second, `QUIET`): written after the quiet table's round in progress, the card
    came after the line was quiet again on a slow machine, and was held for no noise. The
    noise, and when the card was written."""
    written = await write_noise(noisy.cable.write_all, seconds=NOISE_SECONDS)
    noisy.cable.write(noisy.card("5D"))
    return written, time.monotonic()


async def test_noise_grows_nothing_holds_up_no_table_and_costs_one_notice(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    async with _pit(tmp_path, mosquitto) as (daemon, quiet, noisy):
        collector = quiet.collector
        for _ in range(2):  # what a round allocates, allocated before the measure
            await quiet.play_round()
        # The noisy table between rounds, its burn taken: nothing is at stake.
        await noisy.ok("shuffle")
        noisy.cable.write(noisy.frame(CommunicationStarted()))
        await noisy.timed_card("9H", burned=True)
        process = psutil.Process(daemon.pid)
        before, events_before = process.memory_info().rss, _events(tmp_path, NOISY)
        peak = [before]
        sampling = asyncio.create_task(_peak_rss(process, peak))
        mark = collector.mark()
        noise = asyncio.create_task(_noise_then_a_card(noisy))
        seconds: list[float] = []
        while not noise.done():
            seconds += await quiet.play_round()
        written, sent_at = noise.result()
        held = await noisy.until(lambda s: s["cards_held"] == 1, after=mark)
        recovery = time.monotonic() - max(written.ended_at, sent_at)
        summary = await collector.wait(
            lambda m: (
                m.topic == f"shoe2mqtt/{NOISY}/notice/line_noise"
                and "bytes read" in m.body["message"]
            ),
            after=mark,
            within=5,
        )
        sampling.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sampling
        after = process.memory_info().rss
        events_added = _events(tmp_path, NOISY) - events_before
    lines = [json.loads(line) for line in (tmp_path / "daemon.log").read_text().splitlines()]
    report = {
        "noise MB": written.bytes / 1e6,
        "RSS MB before, peak, after": (before / 1e6, peak[0] / 1e6, after / 1e6),
        "cards": len(seconds), "slowest card s": max(seconds), "recovery s": recovery,
        "journal events": events_added,
    }  # fmt: skip
    assert written.bytes > 1_000_000, report  # it was noise, not a trickle
    assert peak[0] <= before * 1.1, report
    assert after <= before * 1.1, report
    assert len(seconds) >= 10, report  # the quiet table played on
    assert max(seconds) <= CARD_ON_TIME, report
    assert recovery <= RECOVERY, report
    assert held["doubt"] == "line_noise", held
    # The card's doubt, the summary: two notices; the card and the notices: three events.
    assert len(_notices(collector, NOISY, mark)) == 2, report
    assert events_added == 3, report
    read = int(re.search(r"([\d,]+) bytes read", summary.body["message"])[1].replace(",", ""))  # type: ignore[index]
    assert written.bytes <= read <= written.bytes + 64, (read, report)  # and the card's bytes
    noise_lines = [line for line in lines if line.get("event") == "reader.line_noise"]
    assert len(noise_lines) == 1, noise_lines
    assert noise_lines[0]["table"] == NOISY
