"""Subscriptions the link drops for a while, so that the broker drops what they would bring.

A flood of requests at one table costs the daemon its MQTT client's work for every message,
even when each is refused unread (daemon.request_gate). Unsubscribing makes the broker
discard them instead; subscribing again after the mute lets the table hear its consoles
again. `Mutes` is the state (which filters, until when: the event loop's clock), set from
anywhere on the loop with `mute`; `keep_muted` is the link's per-connection task that makes
the broker follow it. A new connection subscribes to every filter and `keep_muted` then
unsubscribes what is still muted, so a reconnect never forgets a mute nor keeps a stale one.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

import structlog

from daemon.mqtt.client import raise_if_cancelled, subscribe

if TYPE_CHECKING:
    import aiomqtt

_log = structlog.get_logger()


class Mutes:
    """Topic filters muted until a time of the event loop's clock."""

    def __init__(self) -> None:
        self._until: dict[str, float] = {}
        self._changed = asyncio.Event()

    def mute(self, topic_filter: str, seconds: float) -> None:
        until = asyncio.get_running_loop().time() + seconds
        self._until[topic_filter] = max(until, self._until.get(topic_filter, until))
        self._changed.set()

    def muted(self, now: float) -> set[str]:
        """The filters muted at `now`; forgets those whose mute has ended."""
        for topic_filter in [f for f, until in self._until.items() if until <= now]:
            del self._until[topic_filter]
        return set(self._until)

    def next_end(self) -> float | None:
        return min(self._until.values(), default=None)

    async def changed(self, deadline: float | None) -> None:
        """Until a new mute, or the loop's clock reaches `deadline`."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout_at(deadline):
                await self._changed.wait()
        self._changed.clear()


async def keep_muted(client: aiomqtt.Client, mutes: Mutes, qos: int) -> None:
    """Unsubscribe what is muted, subscribe again when its mute ends; until cancelled.

    Raises the `MqttError` of a lost connection, as the link's other per-connection tasks do.
    """
    loop = asyncio.get_running_loop()
    unsubscribed: set[str] = set()
    while True:
        muted = mutes.muted(loop.time())
        for topic_filter in sorted(muted - unsubscribed):
            await client.unsubscribe(topic_filter)
            raise_if_cancelled()  # a stop that came with the UNSUBACK (daemon.mqtt.client)
            unsubscribed.add(topic_filter)
            _log.warning("mqtt.muted", topic_filter=topic_filter)
        for topic_filter in sorted(unsubscribed - muted):
            await subscribe(client, [(topic_filter, qos)])
            unsubscribed.discard(topic_filter)
            _log.info("mqtt.unmuted", topic_filter=topic_filter)
        await mutes.changed(mutes.next_end())
