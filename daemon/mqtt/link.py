"""The daemon's one connection to its broker: connect, announce, listen, drain, reconnect.

aiomqtt gives one connection and neither reconnects nor buffers, so both live here. Each
connection is a fresh `aiomqtt.Client` (and so a fresh paho client): paho would otherwise
resend its own copy of an in-flight message after a reconnect, behind the outbox's back.

Per connection, in this order: subscribe at QoS 1 (the request filters; the watched state
topics, the presences' topics and its own bridge state), publish `online` retained
on `<base>/bridge/<node>/state`, then each presence's `online` (the daemon's tables'
availability and its bridge info), then the latest retained message of each topic the outbox
has delivered (`Outbox.retained`: a broker restarted without persistence forgot them), then
run three named tasks in a TaskGroup, one handing received messages to `on_message`, one
publishing the outbox oldest first, and one keeping muted filters unsubscribed until their
mute ends (`mute`, daemon.mqtt.mutes: a flood of requests). aiomqtt signals a lost
connection by ending the message iteration with `MqttError` (or by failing a publish); the
publisher is then cancelled, and its unacknowledged message stays at the head of the outbox
for the next connection. The broker publishes the Last Will (`offline`, retained, on the
bridge state) if the process or its socket dies; a clean stop publishes each presence's
`offline` and then the bridge's itself, because a graceful DISCONNECT discards the will. A
presence whose topic last carried someone else's word (another daemon's claim on a table) is
left as it is: the daemon never says `offline` over another's claim. A presence can change
while the link runs (`announce`: the bridge info after a reload, a table's availability when
another daemon claims it).

The process's first connection starts a clean session; every later one keeps a persistent
session, so that the broker's session tells a dropped link from another client on our client
id, and so that a request sent while the link was down a moment is handed over when it is
back (daemon.mqtt.takeover; after more than `RESUME_WITHIN` down the link starts clean and
the broker drops what it queued). Reconnects back off (capped, jittered); a connection that
carried what it should resets the backoff, and what the broker's session shows is reported
once it is plain.
"""

from __future__ import annotations

import asyncio
import enum
import random
from collections.abc import (
    Awaitable,
    Callable,
    Coroutine,
    Iterable,
    Sequence,
)
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, NoReturn, Self

import aiomqtt
import structlog
from paho.mqtt.client import topic_matches_sub
from paho.mqtt.reasoncodes import ReasonCode

from daemon.mqtt.client import connected, new_client, raise_if_cancelled, subscribe
from daemon.mqtt.drain import drain_outbox
from daemon.mqtt.mutes import Mutes, keep_muted
from daemon.mqtt.outbox import OutboundMessage
from daemon.mqtt.paho_hooks import (
    batch_socket_io,
    on_topic,
    record_connack,
    write_without_waking,
)
from daemon.mqtt.takeover import ClientIdInUse, Connections, LinkUnstable, Report
from daemon.wire.availability import OFFLINE, ONLINE
from drivers.backoff import Backoff

if TYPE_CHECKING:
    from types import TracebackType

    from daemon.mqtt.outbox import Outbox
    from daemon.mqtt.settings import MqttSettings

# The bridge state's payload is the word itself in UTF-8 (docs/mqtt.md); the words are
# daemon.wire.availability's, which the display and `watch` read the same topic by.
_BRIDGE_ONLINE: Final = ONLINE.encode()
_BRIDGE_OFFLINE: Final = OFFLINE.encode()
# How long one broker round trip (CONNACK, SUBACK, PUBACK) may take before the connection
# counts as broken and is replaced; a stalled broker then behaves like a lost one.
_OPERATION_TIMEOUT: Final = 10.0
# How long a clean stop waits to tell the displays `offline` before giving up on it.
_GOODBYE_TIMEOUT: Final = 2.0
# QoS 1: in the daemon's session the broker queues what is sent while the link is down (a
# request, a state that changed, the daemon's own will) and hands it over on the next
# connection, unless the link was down longer than takeover.RESUME_WITHIN.
_REQUEST_QOS: Final = 1
_STATE_QOS: Final = 1
# QoS 1 messages published and not yet acknowledged by the broker, per connection. One at a
# time capped a table at one broker round trip per message, and a settling card makes a
# dozen messages; 32 keep the pipe full on a LAN while a reconnect resends at most that many.
_MAX_IN_FLIGHT: Final = 32
_log = structlog.get_logger()


class LinkState(enum.Enum):
    CONNECTING = "connecting"
    CONNECTED = "connected"
    DISCONNECTED = "disconnected"


@dataclass(frozen=True, slots=True)
class LinkStateChange:
    """What the link just did; `reason` and `retry_in` (seconds) say why and what next.

    `retry_in` is None when the link stopped for good (a clean shutdown).
    """

    state: LinkState
    reason: str | None = None
    retry_in: float | None = None


@dataclass(frozen=True, slots=True)
class InboundMessage:
    """A message from one of the subscriptions, free of aiomqtt's and paho's types."""

    topic: str
    payload: bytes
    retain: bool


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


OnMessage = Callable[[InboundMessage], Awaitable[None]]
OnStateChange = Callable[[LinkStateChange], None]
OnClientIdInUse = Callable[[ClientIdInUse], None]
OnLinkUnstable = Callable[[LinkUnstable], None]


class MqttLink:
    """Keeps the daemon connected to its broker for as long as it runs.

    Either start `run()` in the daemon's TaskGroup (preferred: an unexpected error then
    stops the daemon instead of going unnoticed), or use `async with MqttLink(...)`, which
    runs it in a named task until the block ends. Cancelling is the clean stop.
    """

    def __init__(  # noqa: PLR0913 - keywords only, each a part of the link
        self,
        settings: MqttSettings,
        outbox: Outbox,
        *,
        on_message: OnMessage | None = None,
        subscriptions: Iterable[str] = (),
        watches: Iterable[str] = (),
        on_state_change: OnStateChange | None = None,
        presences: Iterable[Presence] = (),
        rng: random.Random | None = None,
        on_client_id_in_use: OnClientIdInUse | None = None,
        on_link_unstable: OnLinkUnstable | None = None,
    ) -> None:
        """`subscriptions`: request filters (QoS 0); `watches`: state topic filters (QoS 1),
        both handed to `on_message`. `on_client_id_in_use` hears when the broker keeps
        replacing our connection, `on_link_unstable` when it keeps dropping
        (daemon.mqtt.takeover), after the link has logged it."""
        self._settings = settings
        self._presences = {presence.topic: presence for presence in presences}
        self._outbox = outbox
        self._retrying = False  # since the last successful connection
        self._on_message = on_message
        self._subscriptions = tuple(subscriptions)
        self._watches = tuple(watches)
        for topic_filter in (*self._subscriptions, *self._watches):
            if not isinstance(topic_filter, str) or not topic_filter:
                raise ValueError(f"subscriptions: {topic_filter!r} is not a topic filter")
        if (self._subscriptions or self._watches) and on_message is None:
            raise ValueError("subscriptions without on_message would drop every request")
        self._on_state_change = on_state_change
        # Jitter needs no cryptographic randomness, only hosts that do not agree with each other.
        self._rng = random.Random() if rng is None else rng  # noqa: S311 - jitter, not a secret
        self._state = LinkState.DISCONNECTED
        self._runner: asyncio.Task[NoReturn] | None = None
        self._connection: aiomqtt.Client | None = None  # while connected
        self._mutes = Mutes()
        self._seen: dict[str, bytes] = {}  # the latest word heard on each presence's topic
        # Healthy once up as long as the first delay: the link is then up at least half the
        # time even when every connection is cut; drops end a streak after twice the longest.
        reconnect = settings.reconnect
        self._connections = Connections(
            settings.client_id,
            healthy_after=reconnect.initial,
            stable_after=2 * reconnect.maximum,
        )
        self._on_client_id_in_use = on_client_id_in_use
        self._on_link_unstable = on_link_unstable

    @property
    def state(self) -> LinkState:
        return self._state

    async def announce(self, presence: Presence) -> None:
        """Keep `presence` true from now on, in place of the one on its topic: published at
        once if connected, and on every connection after."""
        self._presences[presence.topic] = presence
        client = self._connection
        if client is None:
            return  # the next connection announces it
        try:
            await client.publish(presence.topic, presence.online, qos=1, retain=True)
        except aiomqtt.MqttError as exc:  # lost meanwhile: the next connection announces it
            _log.debug("mqtt.announce_deferred", topic=presence.topic, reason=_describe(exc))
        # A stop that came with the PUBACK was swallowed by aiomqtt's wait_for: the caller
        # (the daemon's `bridge-info` task, after a reload) would wait for the next reload
        # for ever, and the daemon with it.
        raise_if_cancelled()

    def mute(self, topic_filter: str, seconds: float) -> None:
        """Stop hearing one of the subscriptions for `seconds`: the broker drops its messages
        meanwhile (a flood of requests at one table, daemon.request_gate)."""
        if topic_filter not in self._subscriptions:
            raise ValueError(f"{topic_filter!r} is not one of the link's subscriptions")
        self._mutes.mute(topic_filter, seconds)

    async def run(self) -> NoReturn:
        """Connect and reconnect, forever; returns only by cancellation (or a bug)."""
        backoff = Backoff(self._settings.reconnect, self._rng)
        try:
            while True:
                self._change(LinkStateChange(LinkState.CONNECTING))
                reason = await self._connect_and_serve(backoff)
                # A stop that arrived as the connection failed may have been swallowed on
                # the way out (an aiomqtt timeout raised over our CancelledError).
                raise_if_cancelled()
                delay = backoff.next_delay()
                self._change(LinkStateChange(LinkState.DISCONNECTED, reason, delay))
                await asyncio.sleep(delay)
        finally:
            if self._state is not LinkState.DISCONNECTED:
                self._change(LinkStateChange(LinkState.DISCONNECTED, "stopped"))

    async def __aenter__(self) -> Self:
        if self._runner is not None:
            raise RuntimeError("this MqttLink is already running")
        self._runner = asyncio.create_task(self.run(), name="mqtt-link")
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        runner, self._runner = self._runner, None
        assert runner is not None  # __aenter__ ran
        runner.cancel()
        # wait(), not await: the runner's CancelledError is expected, ours must still propagate.
        await asyncio.wait([runner])
        if not runner.cancelled() and (error := runner.exception()) is not None:
            raise error

    async def _connect_and_serve(self, backoff: Backoff) -> str:
        """One connection, from attempt to loss; returns why it ended."""
        loop = asyncio.get_running_loop()
        error: aiomqtt.MqttError | None = None
        persistent = self._connections.resumes(loop.time())
        client = self._new_client(persistent=persistent)
        connack = record_connack(client)
        own_will = _Heard()
        on_topic(client, self._settings.state_topic, own_will.take)
        try:
            async with connected(client):
                self._connections.connected(loop.time(), persistent=persistent)
                # Set before announcing: a presence changed meanwhile is then published
                # either by `_announce` or by `announce`, never by neither.
                self._connection = client
                try:
                    await self._announce(client)
                    now = loop.time()
                    self._connections.announced(now)
                    self._report(
                        self._connections.settled(
                            now, session_present=connack.session_present, own_will=own_will.will
                        )
                    )
                    self._change(LinkStateChange(LinkState.CONNECTED))
                    error = await self._serve(client)
                except asyncio.CancelledError:
                    self._connection = None
                    await _say_goodbye(client, self._goodbyes(), self._settings.state_topic)
                    raise
                finally:
                    self._connection = None
        except aiomqtt.MqttError as exc:
            error = error or exc
        assert error is not None  # _serve returns only the error that ended the connection
        if self._connections.ended(loop.time(), error):
            backoff.reset()
        return _describe(error)

    def _report(self, report: Report | None) -> None:
        if isinstance(report, ClientIdInUse):
            _log.error(
                "mqtt.client_id_in_use", client_id=report.client_id, replaced=report.replaced,
                seconds=round(report.seconds, 1), message=report.message(),
            )  # fmt: skip
            if self._on_client_id_in_use is not None:
                self._on_client_id_in_use(report)
        elif isinstance(report, LinkUnstable):
            _log.warning(
                "mqtt.link_unstable", client_id=report.client_id, dropped=report.dropped,
                seconds=round(report.seconds, 1), message=report.message(),
            )  # fmt: skip
            if self._on_link_unstable is not None:
                self._on_link_unstable(report)

    def _goodbyes(self) -> list[Presence]:
        """The presences to say `offline` for on a clean stop: not over another's word."""
        return [
            p
            for p in self._presences.values()
            if p.offline is not None and self._seen.get(p.topic, p.online) == p.online
        ]

    async def _serve(self, client: aiomqtt.Client) -> aiomqtt.MqttError:
        """Receive and publish until either side finds the connection lost; return why.

        The two tasks report a lost connection through `lost` and return, rather than
        raising into the TaskGroup: on Python 3.11 a TaskGroup whose child fails leaves
        its own cancel request counted on this task forever, and `raise_if_cancelled`
        would then mistake every later round trip for a stop.
        """
        lost: asyncio.Future[aiomqtt.MqttError] = asyncio.get_running_loop().create_future()
        async with asyncio.TaskGroup() as tasks:
            receiving = tasks.create_task(
                _reporting_loss(self._hand_over_messages(client), lost), name="mqtt-receive"
            )
            publishing = tasks.create_task(
                _reporting_loss(self._drain_outbox(client), lost), name="mqtt-publish"
            )
            muting = tasks.create_task(
                _reporting_loss(keep_muted(client, self._mutes, _REQUEST_QOS), lost),
                name="mqtt-mutes",
            )
            error = await lost
            receiving.cancel()
            publishing.cancel()
            muting.cancel()
        return error

    def _new_client(self, *, persistent: bool) -> aiomqtt.Client:
        client = new_client(
            self._settings,
            will=aiomqtt.Will(self._settings.state_topic, _BRIDGE_OFFLINE, qos=1, retain=True),
            timeout=_OPERATION_TIMEOUT,
            max_inflight_messages=_MAX_IN_FLIGHT,
            clean_session=not persistent,
            no_delay=True,
        )
        # aiomqtt warns from 10 unanswered calls; a full window is normal here.
        client.pending_calls_threshold = _MAX_IN_FLIGHT + len(self._topic_filters()) + 2
        return client

    def _topic_filters(self) -> list[tuple[str, int]]:
        """Every filter of a connection: the requests, the watches, and the presences' topics
        and the bridge state unless a watch covers them (one copy of each message)."""
        watched = [(f, _STATE_QOS) for f in self._watches]
        own = [self._settings.state_topic, *(p.topic for p in self._presences.values())]
        watched += [
            (topic, _STATE_QOS)
            for topic in own
            if not any(topic_matches_sub(f, topic) for f in self._watches)
        ]
        return [*((f, _REQUEST_QOS) for f in self._subscriptions), *watched]

    async def _announce(self, client: aiomqtt.Client) -> None:
        write_without_waking(client)
        batch_socket_io(client)
        # Subscribe first: once a display sees `online`, requests it sends are heard.
        filters = self._topic_filters()
        codes = await subscribe(client, filters)
        refused = [f for (f, _), code in zip(filters, codes, strict=True) if _is_failure(code)]
        if refused:
            # Reconnecting would not change the broker's ACL; say so loudly and go on.
            _log.error("mqtt.subscription_refused", topic_filters=refused)
        await client.publish(self._settings.state_topic, _BRIDGE_ONLINE, qos=1, retain=True)
        raise_if_cancelled()
        # A window of presences at a time, not one round trip each: 256 tables took 0.36 s.
        # Read at the moment of publishing: `announce` may have replaced one meanwhile.
        for start in range(0, len(self._presences), _MAX_IN_FLIGHT):
            window = list(self._presences)[start : start + _MAX_IN_FLIGHT]
            await _publish_together(client, [self._presences[t].announcement() for t in window])
            raise_if_cancelled()
        # Then what the broker may have forgotten (a restart without persistence): never a
        # presence's topic, whose word is the presence's.
        states = [m for m in self._outbox.retained() if m.topic not in self._presences]
        for start in range(0, len(states), _MAX_IN_FLIGHT):
            await _publish_together(client, states[start : start + _MAX_IN_FLIGHT])
            raise_if_cancelled()

    async def _hand_over_messages(self, client: aiomqtt.Client) -> None:
        # Ends with MqttError when the connection is lost: that is how aiomqtt reports it.
        async for message in client.messages:
            inbound = InboundMessage(
                topic=message.topic.value,
                payload=_payload_bytes(message.payload),
                retain=message.retain,
            )
            if inbound.topic in self._presences and inbound.payload:
                self._seen[inbound.topic] = inbound.payload
            if self._on_message is None:
                continue  # a presence's topic, heard for `_goodbyes` alone
            try:
                await self._on_message(inbound)
            except Exception:  # noqa: BLE001 - one bad request must not take the table's link down
                _log.exception("mqtt.on_message_failed", topic=inbound.topic)

    async def _drain_outbox(self, client: aiomqtt.Client) -> None:
        """The outbox, oldest first, up to `_MAX_IN_FLIGHT` awaiting PUBACK (daemon.mqtt.drain)."""
        await drain_outbox(
            client,
            self._outbox,
            window=_MAX_IN_FLIGHT,
            round_trip=_OPERATION_TIMEOUT,
            carried=self._connections.carried,
        )

    def _change(self, change: LinkStateChange) -> None:
        self._state = change.state
        settings = self._settings
        if change.state is LinkState.CONNECTING:
            # Said once at start; a retry already said why and when, in one line.
            (_log.debug if self._retrying else _log.info)(
                "mqtt.connecting",
                host=settings.host,
                port=settings.port,
                client_id=settings.client_id,
                tls=settings.tls is not None,
                username=settings.username,
            )
        elif change.state is LinkState.CONNECTED:
            self._retrying = False
            _log.info("mqtt.connected", host=settings.host, port=settings.port)
        elif change.retry_in is None:  # we stopped: nothing is wrong
            _log.info("mqtt.disconnected", reason=change.reason)
        else:
            self._retrying = True
            _log.warning(
                "mqtt.disconnected", reason=change.reason, retry_in=round(change.retry_in, 2)
            )
        if self._on_state_change is not None:
            self._on_state_change(change)


class _Heard:
    """What a connection heard on the daemon's own bridge state: its will, queued by the
    broker in the session while the link was down (daemon.mqtt.takeover)."""

    def __init__(self) -> None:
        self.will = False

    def take(self, payload: bytes, retained: bool) -> None:  # noqa: FBT001 - on_topic's call
        if payload == _BRIDGE_OFFLINE and not retained:
            self.will = True


async def _reporting_loss(
    work: Coroutine[None, None, None], lost: asyncio.Future[aiomqtt.MqttError]
) -> None:
    try:
        await work
    except aiomqtt.MqttError as exc:
        if not lost.done():
            lost.set_result(exc)


async def _publish_together(
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


async def _say_goodbye(
    client: aiomqtt.Client, presences: Sequence[Presence], state_topic: str
) -> None:
    # The tables first: while the bridge still says `online`, each is seen to stop itself.
    goodbyes = [
        OutboundMessage(p.topic, p.offline, qos=1, retain=True)
        for p in presences
        if p.offline is not None
    ]
    bridge = OutboundMessage(state_topic, _BRIDGE_OFFLINE, qos=1, retain=True)
    try:
        for start in range(0, len(goodbyes), _MAX_IN_FLIGHT):  # a window at a time, as hellos
            window = goodbyes[start : start + _MAX_IN_FLIGHT]
            await _publish_together(client, window, _GOODBYE_TIMEOUT)
        await _publish_together(client, [bridge], _GOODBYE_TIMEOUT)
    except aiomqtt.MqttError as exc:
        # The broker is gone too; the will it holds says `offline` when it notices.
        _log.warning("mqtt.goodbye_failed", reason=_describe(exc))


def _is_failure(code: int | ReasonCode) -> bool:
    # MQTT 3.1.1 section 3.9.3: a SUBACK return code of 0x80 or more refuses the filter.
    value: int = code.value if isinstance(code, ReasonCode) else code
    return value >= 0x80


def _payload_bytes(payload: object) -> bytes:
    # paho always delivers bytes; aiomqtt's annotation is wider than what it hands over.
    if isinstance(payload, bytes | bytearray):
        return bytes(payload)
    return b"" if payload is None else str(payload).encode()


def _describe(error: BaseException) -> str:
    """aiomqtt's error and, when it has one, the underlying reason it wraps."""
    text = str(error) or type(error).__name__
    cause = error.__cause__
    return f"{text}: {cause}" if cause is not None and str(cause) else text
