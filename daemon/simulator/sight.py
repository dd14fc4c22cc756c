"""What a dealer console sees of its table on the broker, and how it knows a step was taken.

A console simulator (`daemon.simulator.console`) acts, then waits for the daemon's answer:
the response to its request, or the round state that shows its card (docs/mqtt.md, "The
dealer console's contract"). It reads those answers from a `Sight`: the messages it received
in arrival order, with a mark taken before each step so that an answer that comes back before
the wait begins is found, not missed. `TableLog` is the sight the demo and the benchmarks give
it: one table's messages since the last mark and little else, so a demo left running for days
keeps no more than one step's messages. The test harness's `Collector` is another: it keeps
everything, through broker restarts, for the verdict.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Protocol

from daemon.wire.round_message import is_round_message, unbundled

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from daemon.wire.topics import Topics

STEP_TIMEOUT: Final = 10.0  # seconds the daemon has to answer one step


class Stalled(TimeoutError):
    """Nothing the waiter was waiting for arrived in time."""


@dataclass(frozen=True)
class Received:
    topic: str
    payload: bytes
    retain: bool = False
    # One of what a contract 4 round message carried, as contract 3 published it (`received`):
    # kept beside that message, so every wait reads both contracts alike.
    carried: bool = False

    @property
    def body(self) -> dict[str, Any]:
        value = json.loads(self.payload)
        assert isinstance(value, dict), self.payload
        return value

    @property
    def is_json(self) -> bool:
        return self.payload.startswith(b"{")


def received(topic: str, payload: bytes, *, retain: bool = False) -> list[Received]:
    """A message as received and, after a contract 4 round message, what it carried, each
    as contract 3 published it (daemon.wire.round_message)."""
    message = Received(topic, payload, retain)
    if not (topic.endswith("/round") and message.is_json):
        return [message]
    body = message.body
    if not is_round_message(topic, body):
        return [message]
    parts = unbundled(topic, body)
    return [message] + [
        Received(part_topic, json.dumps(part).encode(), retain, carried=True)
        for part_topic, part in parts
    ]


class Answers(Protocol):
    """Messages received in arrival order, to wait in for the answer to a step."""

    topics: Topics

    async def wait(
        self, match: Callable[[Received], bool], *, after: int = 0, within: float = STEP_TIMEOUT
    ) -> Received:
        """The first message from mark `after` on that matches; `Stalled` after `within` s."""
        ...


class Sight(Answers, Protocol):
    """The messages a console received, and its way of sending requests."""

    def mark(self) -> int:
        """Where the messages to come will start: a wait's `after`."""
        ...

    def seen(self, table: str) -> int:
        """The highest `seq` of the table's messages received: each request says it."""
        ...

    def latest_state(self, table: str) -> dict[str, Any] | None:
        """The table's latest round state received (the greatest `as_of`)."""
        ...

    def publish(self, topic: str, payload: str) -> Awaitable[None]:
        """Send at QoS 1."""
        ...


def state_as_of(body: dict[str, Any]) -> int:
    """The last `seq` a round state reflects: its `as_of` (a contract 2 snapshot, or any
    numbered message: its `seq`; a state without either: 0)."""
    return int(body.get("as_of", body.get("seq", 0)) or 0)


def latest_state(bodies: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Of round states in arrival order, the latest: the greatest `as_of`, the later of two."""
    if not bodies:
        return None
    return max(enumerate(bodies), key=lambda pair: (state_as_of(pair[1]), pair[0]))[1]


def held(view: dict[str, Any]) -> int:
    """The cards a round state shows the table keeps back: held, or awaiting entry."""
    return int(view.get("cards_held") or 0) + int(view.get("awaiting_card_entry") or 0)


def response_to(transaction: str, command: str | None = None) -> Callable[[Received], bool]:
    """A match for the daemon's response to the request with `transaction`."""
    topic_part = "/response/" if command is None else f"/response/{command}"

    def match(message: Received) -> bool:
        return (
            topic_part in message.topic
            and message.is_json
            and message.body.get("transaction") == transaction
        )

    return match


def state_after(topics: Topics, table: str, seq: int) -> Callable[[Received], bool]:
    """A wait's match: a round state of `table` that reflects message `seq`."""
    topic = topics.round_snapshot(table)
    return lambda m: m.topic == topic and state_as_of(m.body) >= seq


async def answer_shown(sight: Answers, table: str, response: dict[str, Any], *, after: int) -> None:
    """After the response to a request the table took, until a round state shows it: the
    state comes after the response, up to 250 ms later (docs/mqtt.md, "The round state");
    none comes for a refusal, a duplicate's answer or `status`."""
    took = response.get("type") == "response" and response.get("status") == "ok"
    if took and not response.get("duplicate") and response.get("command") != "status":
        await sight.wait(state_after(sight.topics, table, response["seq"]), after=after)


async def card_taken(
    sight: Answers, table: str, *, after: int, held_before: int = 0
) -> dict[str, Any]:
    """What `table` made of a card the shoe dealt after mark `after`: the round state that
    reflects its event (`card_dealt`, `card_burned`), the notice that placed it nowhere
    (refused, or a card the shoe cannot hold), or a round state that holds more cards than
    `held_before` (the cards held when the card was dealt)."""
    topics = sight.topics
    topic, state = f"{topics.base}/{table}/", topics.round_snapshot(table)
    taken = {topic + "event/card_dealt", topic + "event/card_burned"}
    refused = (topic + "notice/card_rejected", topic + "notice/foreign_card")  # placed nowhere

    def answer(m: Received) -> bool:
        return m.topic in (*taken, *refused) or (m.topic == state and held(m.body) > held_before)

    found = await sight.wait(answer, after=after)
    if found.topic not in taken:
        return found.body
    return (await sight.wait(state_after(topics, table, found.body["seq"]), after=after)).body


@dataclass
class TableLog:
    """One table's messages since the last mark, its latest round state and what it has seen.

    Fed by whoever reads the broker (`take`); sends through `send`. A mark forgets the
    messages before it: a console waits only for the answer to its latest step.
    """

    topics: Topics
    table: str
    send: Callable[[str, str], Awaitable[None]]
    _messages: list[Received] = field(default_factory=list, repr=False)
    _forgotten: int = 0  # messages before the last mark, no longer kept
    _latest: dict[str, Any] | None = None
    _seen: int = 0
    _arrived: asyncio.Event = field(default_factory=asyncio.Event, repr=False)

    def owns(self, topic: str) -> bool:
        return topic.startswith(f"{self.topics.base}/{self.table}/")

    def take(self, topic: str, payload: bytes) -> None:
        """A message of this table's (`owns(topic)`), as received."""
        message, *carried = received(topic, payload)
        if message.is_json:
            body = message.body
            seq = body.get("seq", body.get("as_of"))  # a round state says what it reflects
            if isinstance(seq, int):
                self._seen = max(self._seen, seq)
            if topic == self.topics.round_snapshot(self.table):
                self._latest = latest_state([b for b in (self._latest, body) if b is not None])
        self._messages += [message, *carried]
        self._arrived.set()

    def mark(self) -> int:
        self._forgotten += len(self._messages)
        self._messages.clear()
        return self._forgotten

    async def wait(
        self, match: Callable[[Received], bool], *, after: int = 0, within: float = STEP_TIMEOUT
    ) -> Received:
        index = max(after - self._forgotten, 0)
        try:
            async with asyncio.timeout(within):
                while True:
                    for message in self._messages[index:]:
                        if match(message):
                            return message
                    index = len(self._messages)
                    self._arrived.clear()
                    await self._arrived.wait()
        except TimeoutError:
            raise Stalled(f"{self.table}: nothing matched within {within} s") from None

    def seen(self, table: str) -> int:  # noqa: ARG002 - a sight's signature: one table's log
        return self._seen

    def latest_state(self, table: str) -> dict[str, Any] | None:  # noqa: ARG002 - as `seen`
        return self._latest

    async def publish(self, topic: str, payload: str) -> None:
        await self.send(topic, payload)
