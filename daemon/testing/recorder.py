"""What a recording MQTT client heard, in arrival order, and ways to wait for one message.

`MessageLog` is the record: every message a client received as a `Received`, and `wait()`
for the first one from a mark on that matches. A mark (`mark()`, the log's length) taken
before a step is what makes waiting for its answer safe: an answer that comes back before
the wait begins is found in the log, not missed.

`Collector` is a `MessageLog` with its own client: a persistent session (fixed identifier,
clean session off) on everything under the base topic, reconnecting by itself after a broker
restart, so the broker keeps what it is sent meanwhile. It also publishes.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Self

import aiomqtt

from daemon.simulator import sight
from daemon.simulator.sight import (
    STEP_TIMEOUT,
    Received,
    Stalled,
    latest_state,
    response_to,
    state_as_of,
)
from daemon.wire.availability import ONLINE
from daemon.wire.topics import Topics

if TYPE_CHECKING:
    from collections.abc import Callable

# What the harness's users import from here; the message and the waits are the console
# simulator's (daemon.simulator.sight), which this log serves as a sight.
__all__ = [
    "STEP_TIMEOUT",
    "Collector",
    "MessageLog",
    "Received",
    "Stalled",
    "latest_state",
    "response_to",
    "state_as_of",
    "until",
]

_RECONNECT_PAUSE: Final = 0.05  # a broker gives no signal of its return: try again this soon
_POLL: Final = 0.01  # seconds between looks at what gives no signal


@dataclass
class MessageLog:
    """Every message received, in arrival order; `topics` names the daemon's topics."""

    messages: list[Received] = field(default_factory=list, kw_only=True)
    topics: Topics = field(default_factory=Topics, kw_only=True)
    _arrived: asyncio.Event = field(default_factory=asyncio.Event, kw_only=True, repr=False)
    # The highest `seq` received per table, as far as `seen` has read.
    _seen: dict[str, int] = field(default_factory=dict, kw_only=True, repr=False)
    _seen_read: int = field(default=0, kw_only=True, repr=False)

    def mark(self) -> int:
        """Where the messages to come will start: pass it as a wait's `after`."""
        return len(self.messages)

    def add(self, message: aiomqtt.Message) -> None:
        payload = message.payload
        assert isinstance(payload, bytes), payload  # aiomqtt hands on what the wire carried
        # A contract 4 round message, then what it carried as contract 3 published it.
        self.messages += sight.received(str(message.topic), payload, retain=message.retain)
        self._arrived.set()

    async def record(self, client: aiomqtt.Client) -> None:
        """Keep every message `client` receives, until cancelled (or the client is gone)."""
        async for message in client.messages:
            self.add(message)

    async def wait(
        self, match: Callable[[Received], bool], *, after: int = 0, within: float = STEP_TIMEOUT
    ) -> Received:
        """The first message from index `after` on (seen so far or to come) that matches;
        `Stalled` after `within` seconds."""
        seen = after
        try:
            async with asyncio.timeout(within):
                while True:
                    for message in self.messages[seen:]:
                        if match(message):
                            return message
                    seen = len(self.messages)
                    self._arrived.clear()
                    await self._arrived.wait()
        except TimeoutError:
            raise Stalled(f"nothing matched within {within} s") from None

    async def wait_online(self, after: int = 0) -> Received:
        """Until a daemon announces itself live on its `<base>/bridge/<node>/state` (not a
        retained `online` of the past)."""
        bridge = f"{self.topics.base}/bridge/"

        def online(m: Received) -> bool:
            return (
                m.topic.startswith(bridge)
                and m.topic.endswith("/state")
                and m.payload == ONLINE.encode()
                and not m.retain
            )

        return await self.wait(online, after=after)

    def seen(self, table: str) -> int:
        """The highest `seq` of `table`'s messages received so far: what a dealer console
        says it had seen with each request (docs/mqtt.md)."""
        prefix = f"{self.topics.base}/"
        for message in self.messages[self._seen_read :]:
            if not (message.topic.startswith(prefix) and message.is_json):
                continue
            body = message.body
            # A round state is outside the numbering: it says what it reflects (`as_of`).
            owner, seq = body.get("table"), body.get("seq", body.get("as_of"))
            if isinstance(owner, str) and isinstance(seq, int):
                self._seen[owner] = max(seq, self._seen.get(owner, 0))
        self._seen_read = len(self.messages)
        return self._seen.get(table, 0)

    def on(self, table: str, suffix: str) -> list[Received]:
        """The messages on `<base>/<table>/<suffix>`, in arrival order."""
        topic = f"{self.topics.base}/{table}/{suffix}"
        return [m for m in self.messages if m.topic == topic]

    def latest_state(self, table: str) -> dict[str, Any] | None:
        """The table's latest round state received: the one that reflects the most (`as_of`;
        a numbered snapshot of contract 2: its `seq`), the later of two that say alike."""
        return latest_state([m.body for m in self.on(table, "round")])

    def state_after(self, table: str, seq: int) -> Callable[[Received], bool]:
        """A wait's match: a round state of `table` that reflects message `seq`."""
        return sight.state_after(self.topics, table, seq)

    async def answer_shown(self, table: str, response: dict[str, Any], *, after: int) -> None:
        """After the response to a request the table took, until a round state shows it
        (`daemon.simulator.sight.answer_shown`)."""
        await sight.answer_shown(self, table, response, after=after)

    async def card_taken(self, table: str, *, after: int) -> dict[str, Any]:
        """What `table` made of a card the shoe dealt after message `after`
        (`daemon.simulator.sight.card_taken`)."""
        earlier = [
            m.body for m in self.messages[:after] if m.topic == self.topics.round_snapshot(table)
        ]
        before = sight.held(latest_state(earlier) or {})
        return await sight.card_taken(self, table, after=after, held_before=before)


async def until(check: Callable[[], bool], *, within: float = STEP_TIMEOUT) -> None:
    """Poll `check` (for what gives no signal, like another process's database) until true."""
    async with asyncio.timeout(within):
        while not check():  # noqa: ASYNC110 - nothing to await: the state is elsewhere
            await asyncio.sleep(_POLL)


@dataclass
class Collector(MessageLog):
    """Everything under the base topic, in arrival order, through broker restarts."""

    host: str
    port: int
    identifier: str = "recovery-collector"
    connections: int = 0
    _client: aiomqtt.Client | None = field(default=None, init=False, repr=False)
    _connected: asyncio.Event = field(default_factory=asyncio.Event, init=False, repr=False)
    _task: asyncio.Task[None] | None = field(default=None, init=False, repr=False)

    async def __aenter__(self) -> Self:
        self._task = asyncio.create_task(self._run(), name=f"collector:{self.identifier}")
        await self.wait_connected()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self) -> None:
        while True:
            client = aiomqtt.Client(
                self.host, self.port, identifier=self.identifier, clean_session=False
            )
            try:
                async with client:
                    await client.subscribe(f"{self.topics.base}/#", qos=1)
                    self._client = client
                    self.connections += 1
                    self._connected.set()
                    await self.record(client)
            except aiomqtt.MqttError:
                pass
            finally:
                self._client = None
                self._connected.clear()
                self._arrived.set()  # let waiters see that we are away
            await asyncio.sleep(_RECONNECT_PAUSE)

    async def wait_connected(self) -> None:
        async with asyncio.timeout(STEP_TIMEOUT):
            await self._connected.wait()

    async def publish(self, topic: str, payload: str) -> None:
        """At QoS 1, once connected (waiting out a broker restart)."""
        await self.wait_connected()
        assert self._client is not None
        await self._client.publish(topic, payload, qos=1)
