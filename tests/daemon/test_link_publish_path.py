"""The link's publish path against a real mosquitto: a broker that stops answering, and a
socket that takes only part of what a turn wrote. Each message still arrives, once, whole
and in order; a round trip that never ends still replaces the connection."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
from typing import TYPE_CHECKING

import aiomqtt
import paho.mqtt.client as paho
import pytest
from paho.mqtt.enums import CallbackAPIVersion, MQTTErrorCode

from daemon.mqtt import LinkState, MemoryOutbox, MqttLink, OutboundMessage, paho_hooks, paho_socket
from daemon.mqtt import link as link_module
from tests.daemon.test_mqtt_link import BASE, StateWatcher, settings_for

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

    from daemon.testing import Mosquitto, Subscribe
    from daemon.testing.broker import Subscriber

TOPIC = f"{BASE}/publish-path"


@contextlib.contextmanager
def _stopped(mosquitto: Mosquitto) -> Iterator[None]:
    """The broker stopped (SIGSTOP) for the block: it answers nothing, then resumes."""
    os.kill(mosquitto.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(mosquitto.pid, signal.SIGCONT)


@contextlib.asynccontextmanager
async def _connected(
    mosquitto: Mosquitto, subscribe: Subscribe
) -> AsyncIterator[tuple[MemoryOutbox, StateWatcher, Subscriber]]:
    """A link connected to `mosquitto` over a fresh memory outbox, its state changes
    watched, and a display subscribed to `TOPIC`."""
    outbox, watcher = MemoryOutbox(), StateWatcher()
    async with (
        subscribe(TOPIC) as display,
        MqttLink(settings_for(mosquitto), outbox, on_state_change=watcher),
    ):
        await watcher.until(LinkState.CONNECTED)
        yield outbox, watcher, display


async def test_a_puback_that_never_comes_replaces_the_connection_and_the_message_arrives(
    mosquitto: Mosquitto, subscribe: Subscribe, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The broker stopped (SIGSTOP) after the link connected: the oldest message's PUBACK
    does not come within the round trip's timeout, the link says so and reconnects; the
    broker resumed, the message is delivered."""
    monkeypatch.setattr(link_module, "_OPERATION_TIMEOUT", 1.0)
    async with _connected(mosquitto, subscribe) as (outbox, watcher, display):
        with _stopped(mosquitto):
            outbox.put(OutboundMessage(TOPIC, b"held"))
            lost = await watcher.until(LinkState.DISCONNECTED, within=5)
        assert lost.reason is not None
        assert "timed out" in lost.reason
        await watcher.until(LinkState.CONNECTED, within=10)
        assert await display.payloads(1, within=10) == [b"held"]
        async with asyncio.timeout(5):
            while len(outbox):  # noqa: ASYNC110 - the outbox has no event for empty
                await asyncio.sleep(0.01)


async def test_a_broker_that_stops_answering_is_found_out_while_messages_keep_coming(
    mosquitto: Mosquitto, subscribe: Subscribe, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every message put wakes the publisher; none of them may keep it from seeing that the
    oldest publish has waited its whole round trip (1 s here): the link is replaced while a
    card's messages still come every 50 ms. Nothing is lost: all arrive, in order."""
    monkeypatch.setattr(link_module, "_OPERATION_TIMEOUT", 1.0)
    sent = [f"m{n}".encode() for n in range(60)]

    async def deal(outbox: MemoryOutbox) -> None:
        for payload in sent:  # for 3 s
            outbox.put(OutboundMessage(TOPIC, payload))
            await asyncio.sleep(0.05)

    async with _connected(mosquitto, subscribe) as (outbox, watcher, display):
        with _stopped(mosquitto):
            dealing = asyncio.create_task(deal(outbox), name="dealer")
            lost = await watcher.until(LinkState.DISCONNECTED, within=2.5)
            await dealing
        assert "timed out" in (lost.reason or "")
        received: list[bytes] = []
        while len(set(received)) < len(sent):  # QoS 1: a copy may come twice
            received += await display.payloads(1, within=20)
    assert list(dict.fromkeys(received)) == sent


async def test_what_the_socket_did_not_take_goes_first_when_it_can(
    mosquitto: Mosquitto, subscribe: Subscribe
) -> None:
    """Megabyte messages while the broker reads nothing: the socket's buffers fill within
    the window, the rest of the turn's bytes wait for it to be writable, and messages put
    meanwhile go after them. Resumed, the broker has each, whole and in order."""
    payloads = [bytes([i]) * 1_000_000 for i in range(24)]
    async with _connected(mosquitto, subscribe) as (outbox, watcher, display):
        os.kill(mosquitto.pid, signal.SIGSTOP)
        try:
            for payload in payloads[:16]:
                outbox.put(OutboundMessage(TOPIC, payload))
            await asyncio.sleep(0.3)
            for payload in payloads[16:]:
                outbox.put(OutboundMessage(TOPIC, payload))
            await asyncio.sleep(0.3)
        finally:
            os.kill(mosquitto.pid, signal.SIGCONT)
        received = await display.payloads(len(payloads), within=20)
        assert [p[:1] for p in received] == [p[:1] for p in payloads]
        assert received == payloads
        assert watcher.changes.empty()  # never disconnected


@contextlib.contextmanager
def _listening_off_the_loop(mosquitto: Mosquitto, topic: str) -> Iterator[threading.Event]:
    """A subscriber on a thread of its own (paho's blocking client): the event is set when a
    message on `topic` arrives, whether or not the test's event loop is turning."""
    arrived, subscribed = threading.Event(), threading.Event()
    client = paho.Client(CallbackAPIVersion.VERSION2)
    client.on_connect = lambda c, *_: c.subscribe(topic, qos=1)
    client.on_subscribe = lambda *_: subscribed.set()
    client.on_message = lambda *_: arrived.set()
    client.connect(mosquitto.host, mosquitto.port)
    client.loop_start()
    try:
        assert subscribed.wait(5), "the subscriber on its own thread never subscribed"
        yield arrived
    finally:
        client.disconnect()
        client.loop_stop()


async def test_a_message_asked_for_now_is_written_on_this_turn_of_the_loop(
    mosquitto: Mosquitto,
) -> None:
    """`publish_now` (a table's commit, whose settlement the pit waits for) has the
    connected link write the message before the caller gives the loop back: a subscriber on
    another thread has it while the loop is still held. One merely put waits for a turn."""
    outbox = MemoryOutbox()
    watcher = StateWatcher()
    async with MqttLink(settings_for(mosquitto), outbox, on_state_change=watcher):
        await watcher.until(LinkState.CONNECTED)
        with _listening_off_the_loop(mosquitto, TOPIC) as arrived:
            outbox.put(OutboundMessage(TOPIC, b"put"))
            assert not arrived.wait(0.5)  # the loop held: nothing sent yet
            await asyncio.sleep(0)  # the turn it waited for
            await asyncio.to_thread(arrived.wait, 5)
            assert arrived.is_set()
        with _listening_off_the_loop(mosquitto, TOPIC) as arrived:
            outbox.put(OutboundMessage(TOPIC, b"now"))
            outbox.publish_now()
            assert arrived.wait(5)  # the loop still held


@pytest.mark.parametrize("qos", [0, 1])
async def test_a_backlog_beyond_the_window_leaves_in_order_a_read_s_room_at_a_time(
    mosquitto: Mosquitto, subscribe: Subscribe, monkeypatch: pytest.MonkeyPatch, qos: int
) -> None:
    """Ten windows' worth put at once: what the PUBACKs of one read make room for (at QoS 0,
    what one write acknowledged) leaves in one write after it, not a write a message, and
    never from inside paho's own callback (at QoS 0 that would take paho's lock twice and
    hang the loop). The socket's writes that carried bytes are counted."""
    writes = 0
    flush = paho_socket._BatchedSocket._flush  # counted, not changed

    def counted(batched: paho_socket._BatchedSocket) -> MQTTErrorCode:
        nonlocal writes
        writes += bool(batched._unsent) and batched._waiting_on is None
        return flush(batched)

    monkeypatch.setattr(paho_socket._BatchedSocket, "_flush", counted)
    payloads = [f"m{n}".encode() for n in range(320)]
    async with _connected(mosquitto, subscribe) as (outbox, _watcher, display):
        await asyncio.sleep(0.2)  # the connection's own packets written
        writes = 0
        for payload in payloads:
            outbox.put(OutboundMessage(TOPIC, payload, qos=qos))  # type: ignore[arg-type]
        received = await display.payloads(len(payloads), within=20)
        async with asyncio.timeout(5):
            while len(outbox):  # noqa: ASYNC110 - the outbox has no event for empty
                await asyncio.sleep(0.01)
    assert received == payloads
    assert writes <= len(payloads) // 4, writes


async def test_a_publish_that_fails_never_reaches_the_caller_and_the_link_carries_on(
    mosquitto: Mosquitto, subscribe: Subscribe, monkeypatch: pytest.MonkeyPatch
) -> None:
    """paho refuses a publish asked for now (a table's commit): `publish_now` returns, the
    connection is replaced; it refuses again as the new connection starts sending what
    waited, and that one is replaced too; the third delivers, in order."""
    refusals = 2
    publish = paho_hooks.Acknowledgements.publish

    def refusing(acks: paho_hooks.Acknowledgements, *args: object, **kwargs: object) -> int:
        nonlocal refusals
        if refusals:
            refusals -= 1
            raise aiomqtt.MqttCodeError(MQTTErrorCode.MQTT_ERR_NO_CONN, "Could not publish message")
        return publish(acks, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(paho_hooks.Acknowledgements, "publish", refusing)
    async with _connected(mosquitto, subscribe) as (outbox, watcher, display):
        outbox.put(OutboundMessage(TOPIC, b"first"))
        outbox.publish_now()  # refused: it does not raise here
        outbox.put(OutboundMessage(TOPIC, b"second"))
        for _ in range(2):
            lost = await watcher.until(LinkState.DISCONNECTED, within=5)
            assert "not currently connected" in (lost.reason or ""), lost  # paho's words
        await watcher.until(LinkState.CONNECTED, within=10)
        assert await display.payloads(2, within=10) == [b"first", b"second"]
    assert refusals == 0
