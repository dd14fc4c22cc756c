"""The console's broker connection: the table's messages into the model, requests out.

It connects as the table's console user (docs/mosquitto/acl), which may publish only to the
table's `request/#` and read what the console shows: the table's round (its state and its
events), state, availability, journal state, settlements, notices and responses, and the
daemons' bridge states (is the table live). Never `request/#`: a hand-entered hole card
travels there.

`send` publishes a request (QoS 1) and waits for its answer up to `ANSWER_WAIT` seconds: the
page then says the table did not answer, and what to do (docs/console.md).
"""

from __future__ import annotations

import asyncio
import json
import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, NoReturn

import aiomqtt
import structlog

from daemon.mqtt.client import connected, new_client, raise_if_cancelled, subscribe
from daemon.wire.topics import Topics
from drivers.backoff import Backoff

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from daemon.dealer_console.contract import Contract, Sent
    from daemon.display.model import PitModel
    from daemon.mqtt.settings import MqttSettings

log = structlog.get_logger("console")

ANSWER_WAIT: Final = 3.0  # seconds: a table answers in milliseconds; past this, say so


class NotConnected(Exception):
    """The console has no connection to the broker now: nothing was sent."""


def console_filters(base: str, table: str) -> list[str]:
    """What the console subscribes to, each within its user's ACL."""
    topics = Topics(base)
    return [
        topics.bridge_state_filter,
        topics.availability(table),
        topics.journal_state(table),
        topics.table_state(table),
        topics.round_snapshot(table),
        topics.event(table, "+"),  # the round after its state (daemon/display/table_model.py)
        topics.settlement(table),
        topics.notice(table, "#"),
        topics.response(table, "#"),
    ]


@dataclass
class ConsoleLink:
    settings: MqttSettings
    table: str
    model: PitModel
    contract: Contract
    on_change: Callable[[], None]
    rng: random.Random = field(default_factory=random.Random)
    _client: aiomqtt.Client | None = None
    _waiting: dict[str, asyncio.Future[None]] = field(default_factory=dict)

    @property
    def connected(self) -> bool:
        return self._client is not None

    async def follow(self) -> NoReturn:
        """Keep the model up to date from the broker until cancelled, reconnecting for ever."""
        backoff = Backoff(self.settings.reconnect, self.rng)
        filters = console_filters(self.model.base, self.table)
        while True:
            try:
                async with connected(new_client(self.settings)) as client:
                    await subscribe(client, [(topic_filter, 1) for topic_filter in filters])
                    self._client = client
                    self.model.broker_connected()
                    self.on_change()
                    backoff.reset()
                    log.info("console.broker_connected", host=self.settings.host)
                    async for message in client.messages:
                        if isinstance(message.payload, bytes):
                            self._take(message.topic.value, message.payload)
            except aiomqtt.MqttError as exc:
                reason = str(exc) or type(exc).__name__
            else:
                reason = "closed"
            finally:
                self._client = None
            raise_if_cancelled()
            self.model.broker_lost()
            self.on_change()
            delay = backoff.next_delay()
            log.warning("console.broker_lost", reason=reason, retry_in=round(delay, 1))
            await asyncio.sleep(delay)

    def _take(self, topic: str, payload: bytes) -> None:
        try:
            body = json.loads(payload)
        except (ValueError, UnicodeDecodeError):
            body = None
        if isinstance(body, dict):
            self.contract.heard(body)
        if "/response/" in topic:
            self._answered(body)
            return
        if isinstance(body, dict) and isinstance(body.get("response"), dict):
            # console contract 4: the response rides on the round message its request made
            self._answered(body["response"])
        if self.model.apply(topic, payload):
            self.on_change()

    def _answered(self, body: object) -> None:
        sent = self.contract.answer(body) if isinstance(body, dict) else None
        if sent is not None:
            waiter = self._waiting.pop(sent.transaction, None)
            if waiter is not None and not waiter.done():
                waiter.set_result(None)
            self.on_change()

    async def send(self, command: str, fields: dict[str, Any], by: str) -> Sent:
        """Publish a new request; the request once answered, or after `ANSWER_WAIT`."""
        if self._client is None:
            raise NotConnected
        sent = self.contract.request(command, fields, by)
        return await self._publish(sent)

    async def again(self, transaction: str) -> Sent:
        """Publish a request again, by the contract's rules (`Contract.again`)."""
        if self._client is None:
            raise NotConnected
        return await self._publish(self.contract.again(transaction))

    async def _publish(self, sent: Sent) -> Sent:
        client = self._client
        if client is None:
            raise NotConnected
        waiter = self._waiting[sent.transaction] = asyncio.get_running_loop().create_future()
        topic = Topics(self.model.base).request(self.table, sent.command)
        log.info(
            "console.request",
            command=sent.command,
            transaction=sent.transaction,
            by=sent.by,
            times=sent.times,
        )
        try:
            await client.publish(topic, sent.payload, qos=1)
            async with asyncio.timeout(ANSWER_WAIT):
                await waiter
        except TimeoutError:
            log.warning("console.unanswered", command=sent.command, transaction=sent.transaction)
        except aiomqtt.MqttError:
            log.warning("console.not_sent", command=sent.command, transaction=sent.transaction)
        finally:
            self._waiting.pop(sent.transaction, None)
        self.on_change()
        return sent
