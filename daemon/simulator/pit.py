"""Several tables' console simulators on one MQTT client, as the demo plays them.

The client's messages are handed to `take`, which gives each table's simulator its own
(`TableLog`) and counts the settlements; `play` runs every table's simulator at once.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from daemon.simulator.console import ConsoleSimulator
from daemon.simulator.sight import TableLog

if TYPE_CHECKING:
    import random
    from collections.abc import Iterable

    import aiomqtt

    from daemon.wire.topics import Topics
    from drivers.emulator import EmulatedShoe
    from rules.config import TableConfig


@dataclass
class SimulatedPit:
    """One simulator a table, sending through `client` once `play` is given it."""

    topics: Topics
    simulators: list[ConsoleSimulator] = field(default_factory=list)
    settlements: dict[str, int] = field(default_factory=dict)
    _logs: dict[str, TableLog] = field(default_factory=dict)
    _client: aiomqtt.Client | None = None

    @classmethod
    def of(
        cls,
        topics: Topics,
        tables: Iterable[tuple[TableConfig, EmulatedShoe, random.Random]],
        step_delay: float = 0.0,
    ) -> SimulatedPit:
        pit = cls(topics)
        for config, shoe, rng in tables:
            log = pit._logs[config.table_id] = TableLog(topics, config.table_id, pit.publish)
            pit.simulators.append(ConsoleSimulator(config, shoe, log, rng, step_delay))
            pit.settlements[config.table_id] = 0
        return pit

    @property
    def rounds(self) -> dict[str, int]:
        return {s.table: s.rounds for s in self.simulators}

    @property
    def refused(self) -> dict[str, int]:
        """The requests the daemon refused, per table: none, when the players keep the rules."""
        return {s.table: s.refused for s in self.simulators}

    def take(self, topic: str, payload: bytes) -> None:
        """A message the client received: to the log of the table it belongs to."""
        table = topic.removeprefix(f"{self.topics.base}/").partition("/")[0]
        log = self._logs.get(table)
        if log is not None and log.owns(topic):
            log.take(topic, payload)
            if topic == self.topics.settlement(table):
                self.settlements[table] += 1

    async def publish(self, topic: str, payload: str) -> None:
        if self._client is None:
            raise RuntimeError("the pit's simulators send only while it plays")
        await self._client.publish(topic, payload, qos=1)

    async def play(self, client: aiomqtt.Client, rounds: int | None) -> None:
        """Every table's `rounds` rounds (None: until cancelled), at once, through `client`."""
        self._client = client
        try:
            async with asyncio.TaskGroup() as tables:
                for simulator in self.simulators:
                    tables.create_task(simulator.run(rounds), name=f"simulator:{simulator.table}")
        finally:
            self._client = None
