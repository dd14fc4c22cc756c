"""The display's broker connection against a real mosquitto: the pages are woken once for what
arrived together, never left without the last change, and never more than `WAKE_EVERY`
changes behind."""

from __future__ import annotations

import asyncio
import itertools
import json
import math
from typing import TYPE_CHECKING

import aiomqtt

from daemon.display.broker import WAKE_EVERY, follow_broker
from daemon.display.model import PitModel
from daemon.mqtt.settings import MqttSettings
from tests.display.rounds import BASE

if TYPE_CHECKING:
    from daemon.testing import Mosquitto

TABLES = 200  # a burst of retained table states, as a display meets on connecting to a floor


def _state(table: int) -> tuple[str, bytes]:
    body = {"game": "blackjack", "reader": {"link": "up"}}
    return f"{BASE}/t{table:03}/state", json.dumps(body).encode()


async def _publish(broker: Mosquitto, tables: range, *, retain: bool) -> None:
    async with aiomqtt.Client(broker.host, broker.port) as client:
        for table in tables:
            topic, payload = _state(table)
            await client.publish(topic, payload, qos=1, retain=retain)


async def _woken_until(broker: Mosquitto, tables: int, *, live: range | None = None) -> list[int]:
    """How many tables the model had at each wake-up of the pages, until it had `tables`
    at one (a change left unannounced never gets there: the wait times out)."""
    model = PitModel(BASE)
    woken: list[int] = []
    connected = asyncio.Event()
    shown = asyncio.Event()

    def wake() -> None:
        woken.append(len(model.tables))
        connected.set()
        if woken[-1] >= tables:
            shown.set()

    settings = MqttSettings(host=broker.host, port=broker.port, client_id="display-under-test")
    async with asyncio.TaskGroup() as group:
        following = group.create_task(follow_broker(settings, model, wake), name="display-broker")
        async with asyncio.timeout(20):
            if live is not None:
                await connected.wait()  # and subscribed
                await _publish(broker, live, retain=False)
            await shown.wait()
        following.cancel()
    return woken


async def test_a_burst_of_retained_messages_wakes_the_pages_a_few_times_not_once_each(
    mosquitto: Mosquitto,
) -> None:
    await _publish(mosquitto, range(TABLES), retain=True)
    woken = await _woken_until(mosquitto, TABLES)
    assert woken[0] == 0  # the connection itself (PitModel.broker_connected)
    assert woken[-1] == TABLES
    # Never more than WAKE_EVERY changes between two wake-ups, however long the burst...
    assert all(b - a <= WAKE_EVERY for a, b in itertools.pairwise(woken)), woken
    # ...and not one per message: the burst came in a few reads (one wake-up each at most)
    # and the bound's wake-ups (200 / 64). Each message woke them before.
    assert len(woken) <= 1 + math.ceil(TABLES / WAKE_EVERY) + 8, woken


async def test_the_last_of_a_live_burst_is_always_shown(mosquitto: Mosquitto) -> None:
    """A round's end arrives as some thirty messages at once: whatever way they are read,
    the pages are woken after the last of them is in the model."""
    for _ in range(5):
        woken = await _woken_until(mosquitto, 30, live=range(30))
        assert woken[-1] == 30
        assert all(b - a <= WAKE_EVERY for a, b in itertools.pairwise(woken))
