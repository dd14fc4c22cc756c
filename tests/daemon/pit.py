"""A real pit for integration tests: the emulated shoe on a pty, the daemon, a recorder on `#`.

The test plays the dealer: it publishes requests and makes the shoe deal, and after every
step waits for the daemon's answer (a response, a fresh round snapshot, or a notice), so the
recorder's list of messages is complete and in order when the test looks at it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiomqtt

from daemon.config import LoggingConfig, ServiceConfig, ShoeConfig, TableSetup
from daemon.mqtt.settings import MqttSettings
from daemon.notify import Notifier
from daemon.service import Daemon
from drivers.emulator import EmulatedShoe, EmulatorSettings
from drivers.transports import SerialSettings
from rules.config import TableConfig

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

    from tests.daemon.conftest import Mosquitto

BASE = "shoe2mqtt"
STEP = 10.0  # seconds the daemon has to answer one step


@dataclass
class Received:
    topic: str
    payload: bytes
    retain: bool

    @property
    def body(self) -> dict[str, Any]:
        value = json.loads(self.payload)
        assert isinstance(value, dict)
        return value


class MessageLog:
    """What a recorder client heard, in arrival order, and a way to wait for one message.

    Shared by the test pits: their dataclasses declare `messages` and `_arrived`.
    """

    messages: list[Received]
    _arrived: asyncio.Event

    async def wait(self, match: Callable[[Received], bool], *, after: int = 0) -> Received:
        """The first message from index `after` on (seen so far or to come) that matches."""
        async with asyncio.timeout(STEP):
            while True:
                for message in self.messages[after:]:
                    if match(message):
                        return message
                self._arrived.clear()
                await self._arrived.wait()

    async def record(self, client: aiomqtt.Client) -> None:
        """Keep every message `client` receives, until cancelled."""
        async for message in client.messages:
            payload = message.payload
            assert isinstance(payload, bytes)
            self.messages.append(Received(str(message.topic), payload, message.retain))
            self._arrived.set()


@dataclass
class Pit(MessageLog):
    table: str
    shoe: EmulatedShoe
    client: aiomqtt.Client
    daemon: Daemon
    messages: list[Received] = field(default_factory=list)
    _arrived: asyncio.Event = field(default_factory=asyncio.Event)
    _transactions: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def of(self, suffix: str) -> list[dict[str, Any]]:
        """Bodies of the messages on `<base>/<table>/<suffix>`, in arrival order."""
        topic = f"{BASE}/{self.table}/{suffix}"
        return [m.body for m in self.messages if m.topic == topic]

    def settlements(self) -> list[dict[str, Any]]:
        return self.of("settlement")

    async def request(self, command: str, **body: Any) -> dict[str, Any]:
        transaction = f"t{next(self._transactions)}"
        topic = f"{BASE}/{self.table}/request/{command}"
        seen = len(self.messages)
        await self.client.publish(topic, json.dumps({"transaction": transaction, **body}), qos=1)
        response = await self.wait(
            lambda m: (
                m.topic.endswith(f"/response/{command}")
                and m.body.get("transaction") == transaction
            ),
            after=seen,
        )
        return response.body

    async def deal(self) -> dict[str, Any]:
        """Deal one card; returns the snapshot (or the notice) the daemon answered with."""
        seen = len(self.messages)
        await self.shoe.next_card()
        # A card the rules accept ends in a fresh snapshot; one they refuse, in a notice (and
        # no snapshot). Other notices (a floorperson call) come before the snapshot.
        answer = await self.wait(
            lambda m: (
                m.topic
                in (f"{BASE}/{self.table}/round", f"{BASE}/{self.table}/notice/card_rejected")
            ),
            after=seen,
        )
        return answer.body

    async def wait_for(
        self, suffix: str, where: Callable[[dict[str, Any]], bool] = lambda _: True
    ) -> dict[str, Any]:
        """The first message (seen so far or to come) on `<base>/<table>/<suffix>` whose
        body satisfies `where`."""
        topic = f"{BASE}/{self.table}/{suffix}"
        found = await self.wait(lambda m: m.topic == topic and where(m.body), after=0)
        return found.body


def pit_config(table: dict[str, Any], shoe_path: str, broker: Mosquitto) -> ServiceConfig:
    game = TableConfig.from_mapping(table)
    return ServiceConfig(
        path=Path("<test>"),
        mqtt=MqttSettings(
            host=broker.host, port=broker.port, client_id=f"shoe2mqtt-{game.table_id}"
        ),
        tables=(TableSetup(game, ShoeConfig("reference", SerialSettings(port=shoe_path))),),
        logging=LoggingConfig(format="json", level="warning"),
    )


@contextlib.asynccontextmanager
async def running_pit(
    table: dict[str, Any],
    script: str,
    broker: Mosquitto,
    *,
    state_directory: Path | None = None,
    notifier: Notifier | None = None,
) -> AsyncIterator[Pit]:
    """The daemon serving one table whose shoe deals `script`, and a recorder on `#`.

    The journal lives in `state_directory` (kept, for restart tests) or a fresh temporary one.
    """
    async with contextlib.AsyncExitStack() as stack:
        shoe = await stack.enter_async_context(
            EmulatedShoe(EmulatorSettings(protocol="reference", script=script))
        )
        client = await stack.enter_async_context(
            aiomqtt.Client(broker.host, broker.port, identifier="pit-recorder")
        )
        await client.subscribe(f"{BASE}/#", qos=1)
        state = state_directory or Path(
            stack.enter_context(tempfile.TemporaryDirectory(prefix="pit-state-"))
        )
        daemon = Daemon(
            dataclasses.replace(pit_config(table, shoe.path, broker), state_directory=state),
            notifier=notifier or Notifier(),
        )
        pit = Pit(table["id"], shoe, client, daemon)
        async with asyncio.TaskGroup() as group:
            recorder = group.create_task(pit.record(client), name="pit-recorder")
            service = group.create_task(daemon.run(), name="daemon")
            await asyncio.wait_for(shoe.wait_for_host(), STEP)
            await pit.wait(
                lambda m: m.topic == daemon.config.mqtt.state_topic and m.payload == b"online",
                after=0,
            )
            try:
                yield pit
            finally:
                daemon.stop()
                await service
                recorder.cancel()


def shoe_script(events: list[dict[str, Any]], burn_cards: int = 1) -> str:
    """The shoe's cards for a log: a shuffle and its burn card, then the rest in order."""
    words: list[str] = []
    burns = 0
    for event in events:
        if event["type"] == "shuffle":
            words.append("SHUFFLE")
            burns = burn_cards
        elif event["type"] == "card":
            words.append(("BURN " if burns else "") + event["card"])
            burns = max(0, burns - 1)
    return " ".join(words)
