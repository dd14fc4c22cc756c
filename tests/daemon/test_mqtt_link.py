"""The MQTT link against a real mosquitto: announce, survive restarts, lose nothing."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import pickle
import socket
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import structlog.testing

from daemon.mqtt import (
    InboundMessage,
    InvalidMessage,
    LinkState,
    LinkStateChange,
    MemoryOutbox,
    MqttLink,
    MqttSettings,
    MqttSettingsError,
    OutboundMessage,
    OutboxFull,
    Presence,
    Secret,
    TlsSettings,
)
from daemon.testing import until
from drivers.backoff import BackoffPolicy

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable
    from contextlib import AbstractAsyncContextManager

    import aiomqtt

    from daemon.testing import Certificates, Mosquitto, Subscribe, Subscriber

BASE = "test/bj-1"
NODE = "test-node"
STATE = f"{BASE}/bridge/{NODE}/state"
# Quick retries keep each test short; the production defaults are checked with the settings.
FAST_RECONNECT = BackoffPolicy(initial=0.05, maximum=0.2, multiplier=2.0, jitter=0.2)


def settings_for(broker: Mosquitto, **overrides: object) -> MqttSettings:
    fields: dict[str, object] = {
        "host": broker.host,
        "port": broker.port,
        "node": NODE,
        "base_topic": BASE,
        "reconnect": FAST_RECONNECT,
        **overrides,
    }
    return MqttSettings(**fields)  # type: ignore[arg-type]


class StateWatcher:
    """Collects the link's state changes so a test can wait for one."""

    def __init__(self) -> None:
        self.changes: asyncio.Queue[LinkStateChange] = asyncio.Queue()

    def __call__(self, change: LinkStateChange) -> None:
        self.changes.put_nowait(change)

    async def until(self, state: LinkState, within: float = 5.0) -> LinkStateChange:
        async with asyncio.timeout(within):
            while (change := await self.changes.get()).state is not state:
                pass
            return change


async def bridge_state(subscribe: Subscribe) -> tuple[object, bool]:
    """What a display subscribing now is told first about the bridge: (payload, retained)."""
    async with subscribe(STATE) as display:
        first = await display.next()
    return first.payload, first.retain


@contextlib.asynccontextmanager
async def running_link(
    link_settings: MqttSettings, outbox: MemoryOutbox, **kwargs: object
) -> AsyncIterator[StateWatcher]:
    watcher = StateWatcher()
    link = MqttLink(link_settings, outbox, on_state_change=watcher, **kwargs)  # type: ignore[arg-type]
    async with link:
        await watcher.until(LinkState.CONNECTED)
        yield watcher


async def test_online_is_retained_on_connect_and_offline_on_a_clean_stop(
    mosquitto: Mosquitto, subscribe: Subscribe
) -> None:
    """A display subscribing at any time learns whether the table's bridge is up."""
    async with running_link(settings_for(mosquitto), MemoryOutbox()):
        assert await bridge_state(subscribe) == (b"online", True)  # a late display's
    assert await bridge_state(subscribe) == (b"offline", True)  # a display's after the stop


async def test_online_is_announced_again_after_the_broker_restarts(
    mosquitto: Mosquitto, subscribe: Subscribe
) -> None:
    """The restarted broker forgot every retained message; the link says `online` again."""
    async with running_link(settings_for(mosquitto), MemoryOutbox()) as link:
        mosquitto.stop()
        lost = await link.until(LinkState.DISCONNECTED)
        assert lost.reason
        assert lost.retry_in is not None
        mosquitto.start()
        await link.until(LinkState.CONNECTED)
        assert await bridge_state(subscribe) == (b"online", True)


# Runs the link in its own process so that the test can kill it the way a crash or the
# OOM killer would: SIGKILL runs no cleanup, so any `offline` the broker then publishes is
# the Last Will, not the link's own goodbye.
_LINK_PROCESS = """
import asyncio, sys
from daemon.mqtt import MemoryOutbox, MqttLink, MqttSettings

async def main() -> None:
    settings = MqttSettings(
        host=sys.argv[1], port=int(sys.argv[2]), node="test-node", base_topic=sys.argv[3]
    )
    async with MqttLink(settings, MemoryOutbox()):
        await asyncio.Event().wait()

asyncio.run(main())
"""


async def test_the_will_says_offline_when_the_process_dies(
    mosquitto: Mosquitto, subscribe: Subscribe
) -> None:
    """A killed daemon cannot say goodbye; the broker does it with the Last Will."""
    async with subscribe(STATE) as display:
        # Popen returns at once; the child is killed and reaped right below.
        doomed = subprocess.Popen(  # noqa: S603, ASYNC220 - our interpreter, a fixed script
            [sys.executable, "-c", _LINK_PROCESS, mosquitto.host, str(mosquitto.port), BASE],
            cwd=Path(__file__).parents[2],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
        )
        try:
            online = await display.next(within=20)
            assert online.payload == b"online"
            doomed.kill()
        finally:
            doomed.kill()
            doomed.wait()
        offline = await display.next()
    assert offline.payload == b"offline"
    assert await bridge_state(subscribe) == (b"offline", True)  # a late display's


async def test_messages_queued_while_the_broker_is_down_arrive_in_order_after_it_returns(
    persistent_mosquitto: Mosquitto, subscribe_persistent: Subscribe
) -> None:
    """Nothing is lost or reordered across a broker outage; QoS 1 allows only repeats."""
    broker = persistent_mosquitto
    outbox = MemoryOutbox()
    sent = [f"settlement {n}".encode() for n in range(10)]

    def away_display() -> AbstractAsyncContextManager[Subscriber]:
        return subscribe_persistent(f"{BASE}/settlement", identifier="display", persistent=True)

    def put(payloads: list[bytes]) -> None:
        for payload in payloads:
            outbox.put(OutboundMessage(f"{BASE}/settlement", payload, qos=1))

    async with running_link(settings_for(broker), outbox) as link:
        async with subscribe_persistent(f"{BASE}/settlement") as live_display:
            put(sent[:5])
            assert await live_display.payloads(5) == sent[:5]
        # The display may have them before the broker's PUBACKs reach the link, which alone
        # empties the outbox: a broker stopped in between would leave them to be resent.
        await until(lambda: len(outbox) == 0)
        # A display whose session the broker keeps across its restart: what the link
        # publishes once the broker is back waits for it, instead of racing its subscription.
        async with away_display():
            pass
        broker.stop()
        await link.until(LinkState.DISCONNECTED)
        put(sent[5:])
        assert len(outbox) == 5  # held while nobody can take them
        broker.start()
        await link.until(LinkState.CONNECTED)
        async with away_display() as returning_display:
            received = await returning_display.payloads(5)
            assert await returning_display.nothing_within(0.2)
    assert _without_repeats(received) == sent[5:]
    assert len(outbox) == 0


def _without_repeats(payloads: list[bytes]) -> list[bytes]:
    """QoS 1 may deliver a message again right after a reconnect, never out of order."""
    return [p for i, p in enumerate(payloads) if i == 0 or payloads[i - 1] != p]


def _handed_to(
    by: str, take: Callable[[InboundMessage], None]
) -> dict[str, Callable[[InboundMessage], object]]:
    """The link's keyword for a request handler: `on_message` (a coroutine, after the
    message's own turn of the loop) or `on_request` (called as paho reads the message)."""
    if by == "on_request":
        return {"on_request": take}

    async def on_message(message: InboundMessage) -> None:
        take(message)

    return {"on_message": on_message}


@pytest.mark.parametrize("by", ["on_message", "on_request"])
async def test_requests_reach_the_callback_again_after_the_broker_restarts(
    mosquitto: Mosquitto, subscribe: Subscribe, by: str
) -> None:
    """The restarted broker knows no subscriptions: the link makes them again."""
    requests: asyncio.Queue[InboundMessage] = asyncio.Queue()
    link_settings = settings_for(mosquitto)
    async with running_link(
        link_settings, MemoryOutbox(), subscriptions=[f"{BASE}/request/#"],
        **_handed_to(by, requests.put_nowait),
    ) as link:  # fmt: skip
        async with subscribe(STATE) as pit:
            await pit.client.publish(f"{BASE}/request/reshuffle", b"1", qos=1)
            first = await asyncio.wait_for(requests.get(), 5)
        mosquitto.stop()
        await link.until(LinkState.DISCONNECTED)
        mosquitto.start()
        await link.until(LinkState.CONNECTED)
        async with subscribe(STATE) as pit:
            await pit.client.publish(f"{BASE}/request/reshuffle", b"2", qos=1)
            second = await asyncio.wait_for(requests.get(), 5)
    assert first == InboundMessage(f"{BASE}/request/reshuffle", b"1", retain=False)
    assert second == InboundMessage(f"{BASE}/request/reshuffle", b"2", retain=False)


async def test_the_password_is_in_no_log_line_and_no_repr(
    mosquitto: Mosquitto, caplog: pytest.LogCaptureFixture
) -> None:
    """Through connect, outage and reconnect, neither structlog nor paho prints it."""
    password = "correct-horse-battery-staple"  # noqa: S105 - a throwaway, to look for
    link_settings = settings_for(mosquitto, username="pit-3", password=Secret(password))
    caplog.set_level(logging.DEBUG)  # paho's own logger too, at its chattiest
    with structlog.testing.capture_logs() as entries:
        async with running_link(link_settings, MemoryOutbox()) as link:
            mosquitto.stop()
            await link.until(LinkState.DISCONNECTED)
            mosquitto.start()
            await link.until(LinkState.CONNECTED)
    assert {"mqtt.connecting", "mqtt.connected", "mqtt.disconnected"} <= {
        entry["event"] for entry in entries
    }
    assert all(password not in repr(entry) for entry in entries)
    assert password not in caplog.text
    for shown in (repr(link_settings), str(link_settings), f"{link_settings.password}"):
        assert password not in shown
        assert "********" in shown


@pytest.mark.parametrize("by", ["on_message", "on_request"])
async def test_a_failing_request_handler_is_logged_and_the_link_keeps_listening(
    mosquitto: Mosquitto, subscribe: Subscribe, by: str
) -> None:
    """One request the daemon cannot handle must not take the table off the air."""
    handled: asyncio.Queue[bytes] = asyncio.Queue()

    def take(message: InboundMessage) -> None:
        if message.payload == b"bad":
            raise ValueError("not a request")
        handled.put_nowait(message.payload)

    with structlog.testing.capture_logs() as entries:
        async with (
            running_link(
                settings_for(mosquitto),
                MemoryOutbox(),
                subscriptions=[f"{BASE}/request/+"],
                **_handed_to(by, take),
            ),  # fmt: skip
            subscribe(STATE) as pit,
        ):
            await pit.client.publish(f"{BASE}/request/x", b"bad", qos=1)
            await pit.client.publish(f"{BASE}/request/x", b"good", qos=1)
            assert await asyncio.wait_for(handled.get(), 5) == b"good"
    failures = [e for e in entries if e["event"] == "mqtt.on_message_failed"]
    assert [e["topic"] for e in failures] == [f"{BASE}/request/x"]


async def test_run_in_a_task_group_stops_cleanly_and_says_offline(
    mosquitto: Mosquitto, subscribe: Subscribe
) -> None:
    """The daemon's way: `run()` as a named task, stopped by cancelling the group's task."""
    watcher = StateWatcher()
    outbox = MemoryOutbox()
    outbox.put(OutboundMessage(f"{BASE}/hello", b"queued before the link started"))
    async with subscribe(f"{BASE}/#") as display:
        async with asyncio.TaskGroup() as daemon:
            task = daemon.create_task(
                MqttLink(settings_for(mosquitto), outbox, on_state_change=watcher).run(),
                name="mqtt-link",
            )
            assert (await display.next_on(f"{BASE}/hello")).payload.startswith(b"queued")
            task.cancel()
        offline = await display.next_on(STATE)
    assert offline.payload == b"offline"
    assert watcher.changes.get_nowait().state is LinkState.CONNECTING
    assert len(outbox) == 0


async def test_presences_are_online_on_every_connect_and_offline_before_the_bridge_on_a_stop(
    mosquitto: Mosquitto, subscribe: Subscribe
) -> None:
    """The daemon's tables (decision D1): each `online` once connected, again after a broker
    restart; on a clean stop each `offline` while the bridge still says `online`."""
    presences = [Presence(f"{BASE}/t{n}/availability", b"up", b"down") for n in (1, 2)]
    topics = [p.topic for p in presences]
    announced = {(STATE, b"online"), *((t, b"up") for t in topics)}
    async with contextlib.AsyncExitStack() as stack:
        link = await stack.enter_async_context(
            running_link(settings_for(mosquitto), MemoryOutbox(), presences=presences)
        )
        async with subscribe(STATE, *topics) as display:
            assert {_retained(await display.next()) for _ in range(3)} == announced
        mosquitto.stop()
        await link.until(LinkState.DISCONNECTED)
        mosquitto.start()  # it forgot every retained message: the link announces them again
        await link.until(LinkState.CONNECTED)
        async with subscribe(STATE, *topics) as display:
            assert {_retained(await display.next()) for _ in range(3)} == announced
            await stack.aclose()  # the clean stop
            goodbye = [await display.next() for _ in range(3)]
            # A graceful DISCONNECT: the broker drops the will, and says no `offline` again.
            assert await display.nothing_within(1.0)
    assert [(m.topic.value, m.payload) for m in goodbye] == [
        *((t, b"down") for t in topics),
        (STATE, b"offline"),
    ]


async def test_retained_states_are_told_again_to_a_broker_that_forgot_them(
    mosquitto: Mosquitto, subscribe: Subscribe
) -> None:
    """A broker restarted without persistence forgets every retained message: the link says
    the outbox's retained states again after its presences, so a display that connects
    later still learns of a failing journal; a settlement, a moment, is not said again."""
    outbox = MemoryOutbox()
    journal, settlement = f"{BASE}/t1/journal", f"{BASE}/t1/settlement"
    async with running_link(settings_for(mosquitto), outbox) as link:
        outbox.put(OutboundMessage(journal, b"failing", retain=True))
        outbox.put(OutboundMessage(settlement, b"paid"))
        await until(lambda: len(outbox) == 0)
        mosquitto.stop()
        await link.until(LinkState.DISCONNECTED)
        mosquitto.start()
        await link.until(LinkState.CONNECTED)
        async with subscribe(journal, settlement) as late_display:
            assert _retained(await late_display.next()) == (journal, b"failing")
            assert await late_display.nothing_within(0.2)


def _retained(message: aiomqtt.Message) -> tuple[str, bytes]:
    assert message.retain
    assert isinstance(message.payload, bytes)
    return message.topic.value, message.payload


@pytest.mark.parametrize("broker", ["down", "up"])
async def test_stopping_at_any_moment_leaves_nothing_behind(
    mosquitto: Mosquitto, broker: str
) -> None:
    """Cancelled while connecting, waiting to retry, or connected: no task, thread or socket.

    The pauses sweep the cancellation across the connect, subscribe and announce round
    trips, where Python 3.11's wait_for can swallow it; the link must stop all the same.
    The leak check of the suite's conftest does the asserting after the test.
    """
    if broker == "down":
        mosquitto.stop()
    watcher = StateWatcher()
    for pause in [n * 0.001 for n in range(12)] + [0.05]:
        async with MqttLink(settings_for(mosquitto), MemoryOutbox(), on_state_change=watcher):
            await asyncio.sleep(pause)
    assert (await watcher.until(LinkState.DISCONNECTED)).reason


# ---------------------------------------------------------------- the outbox


def _message(n: int) -> OutboundMessage:
    return OutboundMessage(f"{BASE}/settlement", str(n).encode())


async def test_the_outbox_keeps_a_message_until_it_is_acknowledged() -> None:
    """Taking a message does not remove it: only the broker's acknowledgement does."""
    outbox = MemoryOutbox()
    first, second = outbox.put(_message(1)), outbox.put(_message(2))
    assert (await outbox.next_pending()).message_id == first
    assert (await outbox.next_pending()).message_id == first  # resent after a reconnect
    outbox.ack(first)
    outbox.ack(first)  # a late duplicate acknowledgement changes nothing
    pending = outbox.peek()
    assert pending is not None
    assert (pending.message_id, pending.message) == (second, _message(2))
    outbox.ack(second)
    assert (len(outbox), outbox.peek()) == (0, None)


async def test_the_publisher_sleeps_until_a_message_is_put() -> None:
    """next_pending waits on an event, not a polling loop, and wakes for the next put."""
    outbox = MemoryOutbox()
    waiting = asyncio.create_task(outbox.next_pending(), name="publisher")
    await asyncio.sleep(0.01)
    assert not waiting.done()
    outbox.put(_message(7))
    assert (await asyncio.wait_for(waiting, 1)).message == _message(7)


def test_the_outbox_remembers_the_latest_retained_message_per_topic() -> None:
    """What a broker restarted without persistence must be told again: the newest retained
    message of each topic once acknowledged, unless a newer one waits to go out anyway."""
    outbox = MemoryOutbox()
    first = OutboundMessage(f"{BASE}/round", b"round 1", retain=True)
    ids = [outbox.put(first), outbox.put(OutboundMessage(f"{BASE}/settlement", b"paid"))]
    assert outbox.retained() == []  # nothing acknowledged yet
    for message_id in ids:
        outbox.ack(message_id)
    assert outbox.retained() == [first]
    second = OutboundMessage(f"{BASE}/round", b"round 2", retain=True)
    pending = outbox.put(second)
    assert outbox.retained() == []  # round 2 goes out with the outbox: round 1 must not follow it
    outbox.ack(pending)
    assert outbox.retained() == [second]


def test_a_full_outbox_refuses_loudly_and_drops_nothing() -> None:
    """Settlements may never vanish: the caller gets OutboxFull and keeps the message."""
    outbox = MemoryOutbox(capacity=3)
    ids = [outbox.put(_message(n)) for n in range(3)]
    with pytest.raises(OutboxFull) as refused:
        outbox.put(_message(3))
    assert (refused.value.capacity, refused.value.topic) == (3, f"{BASE}/settlement")
    assert len(outbox) == 3
    outbox.ack(ids[0])
    outbox.put(_message(3))  # room again once the broker took one
    assert len(outbox) == 3


def test_the_high_water_notice_comes_once_per_crossing() -> None:
    """Announced when the backlog reaches the mark, again only after it drained to half."""
    notices: list[tuple[int, int]] = []
    outbox = MemoryOutbox(capacity=10, on_high_water=lambda n, cap: notices.append((n, cap)))
    assert outbox.high_water == 8
    ids = [outbox.put(_message(n)) for n in range(9)]
    assert notices == [(8, 10)]
    for message_id in ids[:4]:
        outbox.ack(message_id)  # 5 left: still above half the mark
    outbox.put(_message(9))
    outbox.put(_message(10))
    assert notices == [(8, 10)]
    for message_id in ids[4:]:
        outbox.ack(message_id)  # 2 left
    for n in range(6):
        outbox.put(_message(n))
    assert notices == [(8, 10), (8, 10)]


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"topic": ""}, "topic"),
        ({"topic": "a/+/b"}, "topic"),
        ({"topic": "a/#"}, "topic"),
        ({"payload": "text"}, "payload"),
        ({"qos": 3}, "qos"),
        ({"retain": 1}, "retain"),
    ],
)
def test_a_message_the_broker_would_refuse_is_refused_before_it_is_queued(
    fields: dict[str, object], field: str
) -> None:
    """Otherwise it would block the head of the outbox, retried forever."""
    message: dict[str, object] = {"topic": "a/b", "payload": b"x", **fields}
    with pytest.raises(InvalidMessage) as refused:
        OutboundMessage(**message)  # type: ignore[arg-type]
    assert refused.value.field == field


@pytest.mark.parametrize(("capacity", "high_water"), [(0, None), (True, None), (10, 0), (10, 11)])
def test_outbox_bounds_are_checked(capacity: int, high_water: int | None) -> None:
    with pytest.raises(ValueError, match=r"capacity|high_water"):
        MemoryOutbox(capacity, high_water=high_water)


# ---------------------------------------------------------------- settings


def test_settings_defaults() -> None:
    """Only the host is required; the node and the client id are stable per host."""
    settings = MqttSettings.from_mapping({"host": "broker.pit"}, environ={})
    assert settings.port == 1883
    assert settings.keepalive == 30
    assert settings.base_topic == "shoe2mqtt"
    node = socket.gethostname().lower().replace(".", "-")
    assert settings.node == node
    assert settings.client_id == f"shoe2mqtt-{node}"
    assert settings.state_topic == f"shoe2mqtt/bridge/{node}/state"
    assert (settings.tls, settings.username, settings.password) == (None, None, None)
    assert settings == MqttSettings.from_mapping({"host": "broker.pit"})


@pytest.mark.parametrize(
    ("hostname", "environ", "node"),
    [
        ("pc-a", {}, "pc-a"),
        ("Table-PC3.casino.example", {}, "table-pc3-casino-example"),
        ("pc-a", {"SHOE2MQTT_INSTANCE": "bj-1"}, "pc-a-bj-1"),
        # systemd's %i of a udev-named reader: upper case and an escaped character
        ("pc-a", {"SHOE2MQTT_INSTANCE": "Reader\\x2dA1"}, "pc-a-reader-x2da1"),
        ("pc-a", {"SHOE2MQTT_INSTANCE": ""}, "pc-a"),
        ("--", {}, "shoe2mqtt"),
    ],
)
def test_the_default_node_is_the_host_name_and_the_template_units_instance(
    monkeypatch: pytest.MonkeyPatch, hostname: str, environ: dict[str, str], node: str
) -> None:
    """Decision D1: two instances of shoe2mqtt@.service on one PC never share a node name,
    nor so a client id (each would disconnect the other) or a will."""
    monkeypatch.setattr(socket, "gethostname", lambda: hostname)
    settings = MqttSettings.from_mapping({"host": "broker.pit"}, environ=environ)
    assert (settings.node, settings.client_id) == (node, f"shoe2mqtt-{node}")
    chosen = MqttSettings.from_mapping(
        {"host": "broker.pit", "node": "pit-a", "client_id": "legacy-id"}, environ=environ
    )
    assert (chosen.node, chosen.client_id) == ("pit-a", "legacy-id")
    assert chosen.state_topic == "shoe2mqtt/bridge/pit-a/state"


@pytest.mark.parametrize(
    ("table", "field"),
    [
        ({}, "mqtt.host"),
        ({"host": ""}, "mqtt.host"),
        ({"host": 7}, "mqtt.host"),
        ({"host": "h", "port": 0}, "mqtt.port"),
        ({"host": "h", "port": "1883"}, "mqtt.port"),
        ({"host": "h", "port": True}, "mqtt.port"),
        ({"host": "h", "keepalive": 1}, "mqtt.keepalive"),
        ({"host": "h", "client_id": "two words"}, "mqtt.client_id"),
        ({"host": "h", "client_id": ""}, "mqtt.client_id"),
        ({"host": "h", "node": "PC-A"}, "mqtt.node"),
        ({"host": "h", "node": "pit/a"}, "mqtt.node"),
        ({"host": "h", "node": "+"}, "mqtt.node"),
        ({"host": "h", "node": ""}, "mqtt.node"),
        ({"host": "h", "node": 3}, "mqtt.node"),
        ({"host": "h", "base_topic": "Shoe2MQTT"}, "mqtt.base_topic"),
        ({"host": "h", "base_topic": "casino/pit 3"}, "mqtt.base_topic"),
        ({"host": "h", "base_topic": "casino/"}, "mqtt.base_topic"),
        ({"host": "h", "base_topic": "casino/#"}, "mqtt.base_topic"),
        ({"host": "h", "base_topic": ""}, "mqtt.base_topic"),
        ({"host": "h", "prot": 1883}, "mqtt.prot"),
        ({"host": "h", "reconnect": {"initial": 0}}, "mqtt.reconnect.initial"),
        ({"host": "h", "reconnect": {"initial": 5, "maximum": 1}}, "mqtt.reconnect.maximum"),
        ({"host": "h", "reconnect": {"jitter": "some"}}, "mqtt.reconnect.jitter"),
        ({"host": "h", "reconnect": {"every": 1}}, "mqtt.reconnect.every"),
        ({"host": "h", "tls": True}, "mqtt.tls"),
        ({"host": "h", "tls": {"insecure": "yes"}}, "mqtt.tls.insecure"),
        ({"host": "h", "tls": {"verify": False}}, "mqtt.tls.verify"),
        ({"host": "h", "tls": {"ca_file": "/nonexistent/ca.pem"}}, "mqtt.tls.ca_file"),
        ({"host": "h", "tls": {"cert_file": "/nonexistent/c.pem"}}, "mqtt.tls.cert_file"),
        ({"host": "h", "username": ""}, "mqtt.username"),
    ],
)
def test_a_setting_that_cannot_work_is_named_in_the_error(
    table: dict[str, object], field: str
) -> None:
    """The operator reads which line of the config to fix."""
    with pytest.raises(MqttSettingsError) as refused:
        MqttSettings.from_mapping(table, environ={})
    assert refused.value.field == field
    assert str(refused.value).startswith(f"{field}: ")


def test_tls_settings_verify_unless_insecure_is_set_explicitly(
    certificates: Certificates,
) -> None:
    files = {
        "ca_file": str(certificates.ca),
        "cert_file": str(certificates.client_cert),
        "key_file": str(certificates.client_key),
    }
    verified = MqttSettings.from_mapping({"host": "h", "tls": files})
    assert verified.tls == TlsSettings(
        ca_file=certificates.ca,
        cert_file=certificates.client_cert,
        key_file=certificates.client_key,
        insecure=False,
    )
    assert verified.port == 8883  # MQTT over TLS, unless a port is given
    lab = MqttSettings.from_mapping({"host": "h", "port": 1884, "tls": {"insecure": True}})
    assert lab.tls == TlsSettings(insecure=True)
    assert lab.port == 1884


def test_tls_files_that_cannot_work_are_named(certificates: Certificates) -> None:
    """Caught at start, not at every reconnection attempt for as long as the daemon runs."""
    not_pem, mismatched, encrypted, no_cert = (
        {"ca_file": str(certificates.client_key)},
        {"cert_file": str(certificates.client_cert), "key_file": str(certificates.server_key)},
        {
            "cert_file": str(certificates.client_cert),
            "key_file": str(certificates.encrypted_client_key),
        },
        {"key_file": str(certificates.client_key)},
    )
    for tls, field, says in [
        (not_pem, "mqtt.tls.ca_file", "no PEM certificate"),
        (mismatched, "mqtt.tls.key_file", "do not load as a pair"),
        (encrypted, "mqtt.tls.key_file", "encrypted"),
        (no_cert, "mqtt.tls.key_file", "needs its certificate"),
    ]:
        with pytest.raises(MqttSettingsError, match=says) as refused:
            MqttSettings.from_mapping({"host": "h", "tls": tls})
        assert refused.value.field == field


async def test_the_link_verifies_the_broker_certificate_unless_told_not_to(
    tls_mosquitto: Mosquitto, certificates: Certificates
) -> None:
    """With the right CA it connects; with the system CAs it refuses; insecure skips the check."""
    for tls, outcome in [
        (TlsSettings(ca_file=certificates.ca), LinkState.CONNECTED),
        (TlsSettings(), LinkState.DISCONNECTED),
        (TlsSettings(insecure=True), LinkState.CONNECTED),
    ]:
        watcher = StateWatcher()
        link_settings = settings_for(tls_mosquitto, tls=tls)
        async with MqttLink(link_settings, MemoryOutbox(), on_state_change=watcher):
            await watcher.until(LinkState.CONNECTING)
            change = await watcher.changes.get()
        assert change.state is outcome, (tls, change)
        if outcome is LinkState.DISCONNECTED:
            assert change.reason is not None
            assert "CERTIFICATE_VERIFY_FAILED" in change.reason


def test_an_unreadable_tls_file_is_named(tmp_path: Path) -> None:
    directory = tmp_path / "a-directory"
    directory.mkdir()
    with pytest.raises(MqttSettingsError, match="no such file") as refused:
        MqttSettings.from_mapping({"host": "h", "tls": {"ca_file": str(directory)}})
    assert refused.value.field == "mqtt.tls.ca_file"


def test_the_password_comes_from_a_file_or_the_environment_never_the_config(
    tmp_path: Path,
) -> None:
    secret_file = tmp_path / "mqtt.pass"
    secret_file.write_text("s3cret-from-file\n")
    from_file = MqttSettings.from_mapping(
        {"host": "h", "username": "pit-3", "password_file": str(secret_file)}
    )
    assert from_file.password == Secret("s3cret-from-file")
    from_env = MqttSettings.from_mapping(
        {"host": "h", "username": "pit-3", "password_env": "MQTT_PASS"},
        environ={"MQTT_PASS": "s3cret-from-env"},
    )
    assert from_env.password is not None
    assert from_env.password.reveal() == "s3cret-from-env"

    refusals = {
        "mqtt.password": {"host": "h", "username": "u", "password": "s3cret-inline"},
        "mqtt.password_env": {"host": "h", "username": "u", "password_env": "UNSET_VARIABLE"},
        "mqtt.password_file": {"host": "h", "username": "u", "password_file": str(tmp_path)},
        "mqtt.username": {"host": "h", "password_env": "MQTT_PASS"},
    }
    for field, table in refusals.items():
        with pytest.raises(MqttSettingsError) as refused:
            MqttSettings.from_mapping(table, environ={"MQTT_PASS": "s3cret-from-env"})
        assert refused.value.field == field
        assert "s3cret" not in str(refused.value)
    both = {"host": "h", "username": "u", "password_env": "X", "password_file": "y"}
    with pytest.raises(MqttSettingsError, match="not both"):
        MqttSettings.from_mapping(both)
    (tmp_path / "empty").write_text("\n")
    with pytest.raises(MqttSettingsError, match="empty"):
        MqttSettings.from_mapping(
            {"host": "h", "username": "u", "password_file": str(tmp_path / "empty")}
        )


def test_a_secret_never_shows_itself() -> None:
    secret = Secret("hunter2")
    for shown in (repr(secret), str(secret), f"{secret}", f"{secret!r:>30}"):
        assert "hunter2" not in shown
    assert secret.reveal() == "hunter2"
    assert secret != Secret("hunter3")
    with pytest.raises(TypeError):
        pickle.dumps(secret)
