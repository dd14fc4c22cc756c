"""A muted subscription against a real mosquitto: the broker drops what it would bring, and
the link hears it again when the mute ends, also across a reconnect."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import pytest
import structlog.testing

from daemon.mqtt import InboundMessage, LinkState, LinkStateChange, MemoryOutbox, MqttLink
from daemon.mqtt.settings import MqttSettings
from drivers.backoff import BackoffPolicy

if TYPE_CHECKING:
    from collections.abc import MutableMapping

    from daemon.testing import Mosquitto, Subscribe

BASE = "test"
FLOODED = f"{BASE}/bj-1/request/+"
QUIET = f"{BASE}/bj-2/request/+"


async def _until_logged(
    entries: list[MutableMapping[str, Any]], event: str, count: int = 1
) -> None:
    async with asyncio.timeout(5):
        while sum(1 for e in entries if e["event"] == event) < count:  # noqa: ASYNC110 - logs give no signal
            await asyncio.sleep(0.01)


@pytest.mark.parametrize("by", ["on_message", "on_request"])
async def test_a_muted_subscription_is_dropped_by_the_broker_until_the_mute_ends(
    mosquitto: Mosquitto, subscribe: Subscribe, by: str
) -> None:
    """Whether the link hands a request on after its turn of the loop (`on_message`) or as
    paho reads it (`on_request`, the daemon's way)."""
    heard: asyncio.Queue[InboundMessage] = asyncio.Queue()
    connected = asyncio.Event()

    async def on_message(message: InboundMessage) -> None:
        await heard.put(message)

    def on_state_change(change: LinkStateChange) -> None:
        if change.state is LinkState.CONNECTED:
            connected.set()

    settings = MqttSettings(
        mosquitto.host, mosquitto.port, node="n", base_topic=BASE,
        reconnect=BackoffPolicy(initial=0.05, maximum=0.2),
    )  # fmt: skip
    filters = [FLOODED, QUIET]
    link = (
        MqttLink(
            settings, MemoryOutbox(), on_request=heard.put_nowait, subscriptions=filters,
            on_state_change=on_state_change,
        )
        if by == "on_request"
        else MqttLink(
            settings, MemoryOutbox(), on_message=on_message, subscriptions=filters,
            on_state_change=on_state_change,
        )
    )  # fmt: skip
    with pytest.raises(ValueError, match="not one of the link's subscriptions"):
        link.mute(f"{BASE}/#", 1)
    with structlog.testing.capture_logs() as entries:
        async with link:
            await asyncio.wait_for(connected.wait(), 5)
            link.mute(FLOODED, 0.6)
            await _until_logged(entries, "mqtt.muted")
            async with subscribe(f"{BASE}/none") as console:
                publish = console.client.publish
                await publish(f"{BASE}/bj-1/request/status", b"dropped by the broker", qos=1)
                await publish(f"{BASE}/bj-2/request/status", b"heard", qos=1)
                assert (await asyncio.wait_for(heard.get(), 5)).payload == b"heard"
                await _until_logged(entries, "mqtt.unmuted")
                await publish(f"{BASE}/bj-1/request/status", b"heard again", qos=1)
                assert (await asyncio.wait_for(heard.get(), 5)).payload == b"heard again"
            # A mute outlives a reconnect: the new connection drops the filter again.
            link.mute(FLOODED, 30)
            await _until_logged(entries, "mqtt.muted", 2)
            connected.clear()
            mosquitto.stop()
            mosquitto.start()
            await asyncio.wait_for(connected.wait(), 5)
            await _until_logged(entries, "mqtt.muted", 3)
    assert heard.empty()
