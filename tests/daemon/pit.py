"""A real pit for integration tests: the emulated shoe on a pty, the daemon, a recorder on `#`.

The test plays the dealer: it publishes requests and makes the shoe deal, and after every
step waits for the daemon's answer (a response, a fresh round snapshot, or a notice), so the
recorder's list of messages is complete and in order when the test looks at it. The example
round logs (examples/*.jsonl) are played at such a pit with `read_example`, `shoe_script`
and `play`.
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

from daemon.configuration.service_config import LoggingConfig, ServiceConfig, ShoeConfig, TableSetup
from daemon.mqtt.settings import MqttSettings
from daemon.service import Daemon
from daemon.system.notify import Notifier
from daemon.testing import STEP_TIMEOUT, MessageLog, response_to
from daemon.wire.round_message import DEFAULT_CONTRACT
from drivers.emulator import EmulatedShoe, EmulatorSettings
from drivers.transports import SerialSettings
from rules.config import TableConfig

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Iterable

    from daemon.testing import Mosquitto

BASE = "shoe2mqtt"
EXAMPLES = Path(__file__).parents[2] / "examples"


@dataclass
class Pit(MessageLog):
    table: str
    shoe: EmulatedShoe
    client: aiomqtt.Client
    daemon: Daemon
    _transactions: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def of(self, suffix: str) -> list[dict[str, Any]]:
        """Bodies of the messages on `<base>/<table>/<suffix>`, in arrival order."""
        return [m.body for m in self.on(self.table, suffix)]

    def settlements(self) -> list[dict[str, Any]]:
        return self.of("settlement")

    async def request(self, command: str, **body: Any) -> dict[str, Any]:
        transaction = f"t{next(self._transactions)}"
        topic = f"{BASE}/{self.table}/request/{command}"
        mark = self.mark()
        request = {"transaction": transaction, "seen": self.seen(self.table), **body}
        await self.client.publish(topic, json.dumps(request), qos=1)
        response = await self.wait(response_to(transaction, command), after=mark)
        await self.answer_shown(self.table, response.body, after=mark)
        return response.body

    async def deal(self) -> dict[str, Any]:
        """Deal one card; returns the round state that shows it (or the notice that refused
        it): the state comes after the card's event, up to 250 ms later."""
        mark = self.mark()
        await self.shoe.next_card()
        return await self.card_taken(self.table, after=mark)

    async def wait_for(
        self, suffix: str, where: Callable[[dict[str, Any]], bool] = lambda _: True
    ) -> dict[str, Any]:
        """The first message (seen so far or to come) on `<base>/<table>/<suffix>` whose
        body satisfies `where`."""
        topic = f"{BASE}/{self.table}/{suffix}"
        found = await self.wait(lambda m: m.topic == topic and where(m.body), after=0)
        return found.body


def pit_config(
    table: dict[str, Any], shoe_path: str, broker: Mosquitto, *, contract: int = DEFAULT_CONTRACT
) -> ServiceConfig:
    game = TableConfig.from_mapping(table)
    return ServiceConfig(
        path=Path("<test>"),
        mqtt=MqttSettings(
            host=broker.host,
            port=broker.port,
            client_id=f"shoe2mqtt-{game.table_id}",
            contract=contract,
        ),
        tables=(TableSetup(game, ShoeConfig("reference", SerialSettings(port=shoe_path))),),
        logging=LoggingConfig(format="json", level="warning"),
    )


@contextlib.asynccontextmanager
async def serving(
    daemon: Daemon, recorder: MessageLog, client: aiomqtt.Client, shoes: Iterable[EmulatedShoe]
) -> AsyncIterator[None]:
    """The daemon running in this process, and `recorder` keeping what `client` receives:
    entered once every shoe is open and the daemon is online; the daemon is stopped (and
    waited for) on the way out."""
    async with asyncio.TaskGroup() as group:
        recording = group.create_task(recorder.record(client), name="pit-recorder")
        service = group.create_task(daemon.run(), name="daemon")
        for shoe in shoes:
            await asyncio.wait_for(shoe.wait_for_host(), STEP_TIMEOUT)
        await recorder.wait_online()
        try:
            yield
        finally:
            daemon.stop()
            await service
            recording.cancel()


@contextlib.asynccontextmanager
async def running_pit(
    table: dict[str, Any],
    script: str,
    broker: Mosquitto,
    *,
    state_directory: Path | None = None,
    notifier: Notifier | None = None,
    contract: int = DEFAULT_CONTRACT,
) -> AsyncIterator[Pit]:
    """The daemon serving one table whose shoe deals `script`, and a recorder on `#`.

    The journal lives in `state_directory` (kept, for restart tests) or a fresh temporary one.
    `contract`: the console contract the daemon publishes under (`mqtt.contract`).
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
            dataclasses.replace(
                pit_config(table, shoe.path, broker, contract=contract), state_directory=state
            ),
            notifier=notifier or Notifier(),
        )
        pit = Pit(table["id"], shoe, client, daemon)
        async with serving(daemon, pit, client, [shoe]):
            yield pit


# ---------------------------------------------------------------- the example round logs
def read_example(name: str) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
    """An example log: its table (the header), its events, and its lines as written."""
    lines = (EXAMPLES / name).read_text(encoding="utf-8").splitlines()
    table = json.loads(lines[0])
    del table["type"], table["format"]
    return table, [json.loads(line) for line in lines[1:]], lines


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


async def play(pit: Pit, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Play the log at the table; returns the error responses, in order."""
    errors = []
    for event in events:
        kind = event["type"]
        if kind == "shuffle":
            continue  # the shoe reports it with the burn card that follows
        if kind == "card":
            await pit.deal()
            continue
        body = {k: v for k, v in event.items() if k != "type"}
        response = await pit.request(kind, **body)
        if response["status"] != "ok":
            errors.append(response["error"])
    return errors
