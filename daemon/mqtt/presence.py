"""What the link keeps true on the broker while the daemon runs, and says when it stops.

The daemon's own bridge state (`<base>/bridge/<node>/state`) is `online` on every
connection; the broker publishes the Last Will (`offline`, retained) if the process or its
socket dies. Beside it, the presences: retained messages said `online` on every connection
(each table's availability, the daemon's bridge info) and `offline` on a clean stop. A clean
stop says each presence's `offline` and then the bridge's itself, because a graceful
DISCONNECT discards the will. A presence whose topic last carried someone else's word
(another daemon's claim on a table) is left as it is: the daemon never says `offline` over
another's claim. Each is published a window at a time, not one broker round trip each.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import aiomqtt
import structlog

from daemon.mqtt.client import describe_error, raise_if_cancelled
from daemon.mqtt.outbox import OutboundMessage
from daemon.wire.availability import OFFLINE, ONLINE

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from daemon.mqtt.outbox import Outbox

# The bridge state's payload is the word itself in UTF-8 (docs/mqtt.md); the words are
# daemon.wire.availability's, which the display and `watch` read the same topic by.
BRIDGE_ONLINE: Final = ONLINE.encode()
BRIDGE_OFFLINE: Final = OFFLINE.encode()
# The link's lines, whichever of its modules writes them: a filter on `logger` keeps working.
_log = structlog.get_logger("daemon.mqtt.link")


@dataclass(frozen=True, slots=True)
class Presence:
    """A retained message the link keeps true: `online` on every connect, `offline` on a
    clean stop (a table's availability; the bridge state itself is the link's own). With
    `offline` None it stays as it is on a clean stop (the daemon's bridge info)."""

    topic: str
    online: bytes
    offline: bytes | None

    def announcement(self) -> OutboundMessage:
        return OutboundMessage(self.topic, self.online, qos=1, retain=True)


class Presences:
    """The presences by topic, and the latest word heard on each one's topic."""

    def __init__(self, presences: Iterable[Presence]) -> None:
        self.by_topic = {presence.topic: presence for presence in presences}
        # Written by the link's receiver as each message on a presence's topic arrives.
        self.seen: dict[str, bytes] = {}

    def goodbyes(self) -> list[Presence]:
        """The presences to say `offline` for on a clean stop: not over another's word."""
        return [
            p
            for p in self.by_topic.values()
            if p.offline is not None and self.seen.get(p.topic, p.online) == p.online
        ]


class OwnWill:
    """What a connection heard on the daemon's own bridge state: its will, queued by the
    broker in the session while the link was down (daemon.mqtt.takeover)."""

    def __init__(self) -> None:
        self.will = False

    def take(self, _topic: str, payload: bytes, retained: bool) -> None:  # noqa: FBT001 - on_filter's call
        if payload == BRIDGE_OFFLINE and not retained:
            self.will = True


async def say_hello(
    client: aiomqtt.Client,
    state_topic: str,
    presences: Presences,
    outbox: Outbox,
    window: int,
) -> None:
    """The bridge's `online`, each presence's, then the latest retained message of each
    topic the outbox has delivered (`Outbox.retained`: a broker restarted without persistence
    forgot them), but for a presence's topic, whose word is the presence's."""
    await client.publish(state_topic, BRIDGE_ONLINE, qos=1, retain=True)
    raise_if_cancelled()
    # A window of presences at a time, not one round trip each: 256 tables took 0.36 s.
    # Read at the moment of publishing: the link's `announce` may have replaced one meanwhile.
    by_topic = presences.by_topic
    for start in range(0, len(by_topic), window):
        topics = list(by_topic)[start : start + window]
        await publish_together(client, [by_topic[t].announcement() for t in topics])
        raise_if_cancelled()
    states = [m for m in outbox.retained() if m.topic not in by_topic]
    for start in range(0, len(states), window):
        await publish_together(client, states[start : start + window])
        raise_if_cancelled()


async def say_goodbye(
    client: aiomqtt.Client,
    presences: Sequence[Presence],
    state_topic: str,
    window: int,
    round_trip: float,
) -> None:
    # The tables first: while the bridge still says `online`, each is seen to stop itself.
    goodbyes = [
        OutboundMessage(p.topic, p.offline, qos=1, retain=True)
        for p in presences
        if p.offline is not None
    ]
    bridge = OutboundMessage(state_topic, BRIDGE_OFFLINE, qos=1, retain=True)
    try:
        for start in range(0, len(goodbyes), window):  # a window at a time, as hellos
            await publish_together(client, goodbyes[start : start + window], round_trip)
        await publish_together(client, [bridge], round_trip)
    except aiomqtt.MqttError as exc:
        # The broker is gone too; the will it holds says `offline` when it notices.
        _log.warning("mqtt.goodbye_failed", reason=describe_error(exc))


async def publish_together(
    client: aiomqtt.Client, messages: Sequence[OutboundMessage], round_trip: float | None = None
) -> None:
    """Publish messages in flight together; the first failure is raised once every one of
    them has ended (none is left running)."""
    publishing = [
        asyncio.create_task(
            client.publish(m.topic, m.payload, qos=m.qos, retain=m.retain, timeout=round_trip)
        )
        for m in messages
    ]
    try:
        for task in publishing:
            await task
    finally:
        for task in publishing:
            task.cancel()
        await asyncio.gather(*publishing, return_exceptions=True)
