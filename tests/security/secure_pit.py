"""The real daemon behind the example broker: TLS, its own user and password file, two tables.

Like tests/daemon/pit.py (whose `serving` runs the daemon and the recording here too), but
every client is one of the example ACL's users: the display (`display-pit-a`) records
everything it is allowed to read, the dealer consoles publish requests, and the test waits
on the display's recording for the daemon's answers.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from daemon.configuration.service_config import LoggingConfig, ServiceConfig, ShoeConfig, TableSetup
from daemon.mqtt.settings import MqttSettings
from daemon.service import Daemon
from daemon.testing import MessageLog, response_to
from drivers.emulator import EmulatedShoe, EmulatorSettings
from drivers.transports import SerialSettings
from rules.config import TableConfig
from tests.daemon.pit import serving
from tests.security.conftest import (
    BASE,
    CONSOLE_1,
    CONSOLE_2,
    DAEMON,
    DISPLAY,
    DISPLAY_FILTERS,
    NODE,
)
from tests.security.tables import hole_card_table

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    import aiomqtt

    from daemon.testing import Received
    from tests.security.conftest import SecureBroker


@dataclass
class SecurePit(MessageLog):
    broker: SecureBroker
    daemon: Daemon
    shoes: dict[str, EmulatedShoe]
    display: aiomqtt.Client
    consoles: dict[str, aiomqtt.Client]
    _transactions: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def of(self, table: str, suffix: str) -> list[dict[str, Any]]:
        topic = f"{BASE}/{table}/{suffix}"
        return [m.body for m in self.messages if m.topic == topic]

    def new_transaction(self) -> str:
        return f"t{next(self._transactions)}"

    async def publish_request(
        self, client: aiomqtt.Client, table: str, command: str, **body: Any
    ) -> str:
        """Publish a request (QoS 1: the broker has decided on it when this returns)."""
        transaction = self.new_transaction()
        topic = f"{BASE}/{table}/request/{command}"
        await client.publish(topic, json.dumps({"transaction": transaction, **body}), qos=1)
        return transaction

    async def request(self, table: str, command: str, **body: Any) -> dict[str, Any]:
        """A request from the table's own console; its response, as the display read it."""
        transaction = await self.publish_request(self.consoles[table], table, command, **body)
        return await self.response(table, command, transaction)

    async def response(self, table: str, command: str, transaction: str) -> dict[str, Any]:
        topic = f"{BASE}/{table}/response/{command}"
        found = await self.wait(lambda m: m.topic == topic and response_to(transaction)(m))
        return found.body

    def responses_to(self, transaction: str) -> list[Received]:
        return [m for m in self.messages if response_to(transaction)(m)]

    async def deal(self, table: str) -> dict[str, Any]:
        """One card from the table's shoe; the snapshot (or notice) the daemon answered with."""
        seen = self.mark()
        await self.shoes[table].next_card()
        wanted = {
            f"{BASE}/{table}/round",
            f"{BASE}/{table}/notice/card_rejected",
            f"{BASE}/{table}/notice/card_unreadable",
        }
        return (await self.wait(lambda m: m.topic in wanted, after=seen)).body


def secure_config(
    broker: SecureBroker, shoe_paths: dict[str, str], directory: Path
) -> ServiceConfig:
    """The daemon's settings as `[mqtt]` in its TOML file would give them: TLS, user name,
    and the password in a file readable by the daemon alone."""
    password_file = directory / "mqtt-password"
    password_file.touch(mode=0o600)
    password_file.write_text(broker.passwords[DAEMON] + "\n", encoding="utf-8")
    mqtt = MqttSettings.from_mapping(
        {
            "host": broker.host,
            "port": broker.port,
            "node": NODE,
            "username": DAEMON,
            "password_file": str(password_file),
            "tls": {"ca_file": str(broker.ca)},
        }
    )
    tables = tuple(
        TableSetup(
            TableConfig.from_mapping(hole_card_table(table)),
            ShoeConfig("reference", SerialSettings(port=path)),
        )
        for table, path in shoe_paths.items()
    )
    return ServiceConfig(
        path=Path("<test>"),
        mqtt=mqtt,
        tables=tables,
        state_directory=directory / "state",  # the journal: never the machine's /var/lib
        logging=LoggingConfig(format="json", level="warning"),
    )


@contextlib.asynccontextmanager
async def running_secure_pit(
    broker: SecureBroker, scripts: dict[str, str], directory: Path
) -> AsyncIterator[SecurePit]:
    """The daemon serving bj-1 and bj-2 (their shoes deal `scripts`), a display recording
    everything it may read, and each table's console connected."""
    async with contextlib.AsyncExitStack() as stack:
        shoes = {
            table: await stack.enter_async_context(
                EmulatedShoe(EmulatorSettings(protocol="reference", script=script))
            )
            for table, script in scripts.items()
        }
        display = await stack.enter_async_context(broker.client(DISPLAY))
        await display.subscribe([(topic_filter, 1) for topic_filter in DISPLAY_FILTERS])
        consoles = {
            "bj-1": await stack.enter_async_context(broker.client(CONSOLE_1)),
            "bj-2": await stack.enter_async_context(broker.client(CONSOLE_2)),
        }
        config = secure_config(broker, {t: s.path for t, s in shoes.items()}, directory)
        daemon = Daemon(config)
        pit = SecurePit(broker, daemon, shoes, display, consoles)
        async with serving(daemon, pit, display, shoes.values()):
            # The ACL lets the daemon announce its tables and itself, and a display read it.
            announced = {f"{BASE}/{table}/availability" for table in shoes}
            announced.add(f"{BASE}/bridge/{NODE}/info")
            while announced:
                announced.discard((await pit.wait(lambda m: m.topic in announced)).topic)
            # Each table's last message of its start: its shoe's identity, in its state. A
            # test that counts what a table sealed counts from here (on a loaded machine it
            # came after `online`, and a display's refused request seemed to seal a message).
            for table in shoes:
                await pit.wait(functools.partial(_identified, table=table))
            yield pit


def _identified(message: Received, table: str) -> bool:
    if message.topic != f"{BASE}/{table}/state" or not message.is_json:
        return False
    return message.body["reader"]["identity"] is not None
