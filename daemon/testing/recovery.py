"""A recovery run: one blackjack table's daemon as a process, beside a broker and a shoe that
outlive it, a collector that records everything, and a dealer that plays through it all.

Shared by the recovery tests (tests/recovery) and the chaos run (bench/chaos.py):
`recovery_run` writes the daemon's configuration into a directory, opens the collector and
yields a `RecoveryRun`; the caller brings the broker and the shoe (an `EmulatedShoe`, or
none when it writes the frames itself), starts with `begin()`, disturbs the table as it
likes, ends with `finish()`, and holds what was delivered against `replay()` with
`daemon.testing.verdict.verify`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import aiomqtt

from daemon.request_gate import AUTOMATED_CONSOLE
from daemon.simulator import BURN, ConsoleSimulator
from daemon.simulator.tables import DEMO_TABLES
from daemon.testing.process import DaemonProcess, write_service_config
from daemon.testing.recorder import STEP_TIMEOUT, Collector, until
from daemon.testing.verdict import replay_journal
from rules.config import TableConfig
from rules.games import Game

if TYPE_CHECKING:
    import random
    from collections.abc import AsyncIterator, Sequence
    from pathlib import Path

    from daemon.testing.broker import Mosquitto
    from daemon.testing.verdict import Replay
    from drivers.emulator import EmulatedShoe

TABLE_SETTINGS: Final[dict[str, Any]] = DEMO_TABLES[Game.BLACKJACK]
TABLE_ID: Final[str] = TABLE_SETTINGS["id"]
# The link retries quickly, so that a broker's return is noticed within a step.
_RECONNECT: Final = (0.05, 0.5)


def table_config() -> TableConfig:
    return TableConfig.from_mapping(TABLE_SETTINGS)


def random_moment(rng: random.Random) -> float:
    """Seconds into a step: before the daemon has read it, while it works, or after."""
    return rng.choice([0.0, rng.uniform(0, 0.01), rng.uniform(0, 0.05), 0.1])


@dataclass
class RecoveryRun:
    """The pieces of one run, and the moves every run makes with them."""

    config: TableConfig
    state: Path  # the daemon's journal directory
    broker: Mosquitto
    shoe: EmulatedShoe | None
    collector: Collector
    daemon: DaemonProcess
    dealer: ConsoleSimulator
    protocol: str = "reference"  # the shoe's

    async def start_daemon(self) -> None:
        """Start the daemon; return once it has the shoe's port open and is on the broker."""
        shoe = self.shoe
        opens = 0 if shoe is None else shoe.stats.host_opens
        mark = self.collector.mark()
        await self.daemon.start()
        if shoe is not None:  # this daemon's open, not the one before it
            await until(lambda: shoe.stats.host_opens > opens)
        await self.collector.wait_online(mark)

    async def begin(self) -> None:
        """Start the daemon, take its view, and deal the new shoe's burn card."""
        await self.start_daemon()
        await self.dealer.resync()  # after the snapshot the daemon publishes as it starts
        await self.dealer.step(BURN)  # the shoe shuffles first, then burns

    async def kill_and_restart(self, rng: random.Random, deal_chance: float = 0.3) -> int:
        """SIGKILL the daemon at a random moment of the step, sometimes (`deal_chance`) deal a
        card while it is dead, and start it again; returns the cards so dealt unheard (0 or
        1). A reference
        shoe keeps such a card and hands it over once the daemon is back; a shoe that keeps
        nothing writes it to a line the daemon flushes when it opens the port."""
        await asyncio.sleep(random_moment(rng))
        await self.daemon.kill()
        unheard = 0
        if rng.random() < deal_chance and self.shoe is not None:
            await self.shoe.next_card()
            unheard = 1
        await self.start_daemon()
        return unheard

    async def start_broker(self) -> int:
        """Start the broker again and wait for the daemon to be back on it; returns the mark
        of the messages that came after the restart."""
        mark = self.collector.mark()
        self.broker.start()
        await self.collector.wait_online(mark)
        return mark

    async def finish(self) -> int | None:
        """Ask for the status (answered after everything the daemon sent before), then stop
        the daemon; returns its exit code."""
        await self.dealer.resync()
        return await self.daemon.stop()

    def replay(self) -> Replay:
        return replay_journal(self.state, self.config, self.protocol)

    async def retained_snapshot(self) -> dict[str, Any]:
        """The round snapshot the broker gives a display that connects now."""
        broker, topic = self.broker, self.collector.topics.round_snapshot(self.config.table_id)
        async with aiomqtt.Client(broker.host, broker.port) as display:
            await display.subscribe(topic, qos=1)
            async with asyncio.timeout(STEP_TIMEOUT):
                message = await anext(display.messages)
        assert message.retain
        assert isinstance(message.payload, bytes)
        body = json.loads(message.payload)
        assert isinstance(body, dict)
        return body


@contextlib.asynccontextmanager
async def recovery_run(  # noqa: PLR0913 - keywords only: each a part of the run
    directory: Path,
    broker: Mosquitto,
    rng: random.Random,
    *,
    shoe: EmulatedShoe | None,
    shoe_port: str | Path | None = None,
    collector: str = "recovery-collector",
    protocol: str = "reference",
    state: Path | None = None,
    daemon_prefix: Sequence[str] = (),
) -> AsyncIterator[RecoveryRun]:
    """The run's configuration in `directory`, its collector (MQTT identifier `collector`)
    connected, the daemon not yet started (and stopped on the way out, if it runs).

    The daemon reads `shoe_port` (or the shoe's own path), speaking `protocol`; its journal is
    in `state` (by default `state` in `directory`); it runs under `daemon_prefix`
    (`DaemonProcess`)."""
    config = table_config()
    state = state or directory / "state"
    if shoe_port is None:
        assert shoe is not None, "a run needs a shoe or the port of one"
        shoe_port = shoe.path
    config_file = write_service_config(
        directory / "shoe2mqtt.toml", broker, node="recovery", state_directory=state,
        tables=[(TABLE_SETTINGS, shoe_port)], reconnect=_RECONNECT, protocol=protocol,
        requests=AUTOMATED_CONSOLE,
    )  # fmt: skip
    daemon = DaemonProcess(config_file, directory / "daemon.log", prefix=daemon_prefix)
    async with Collector(broker.host, broker.port, identifier=collector) as recorder:
        dealer = ConsoleSimulator(config, shoe, recorder, rng)
        try:
            yield RecoveryRun(config, state, broker, shoe, recorder, daemon, dealer, protocol)
        finally:
            await daemon.stop()
