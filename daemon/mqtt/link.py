"""The daemon's one connection to its broker: connect, announce, listen, drain, reconnect.

aiomqtt gives one connection and neither reconnects nor buffers, so both live here. Each
connection is a fresh `aiomqtt.Client` (and so a fresh paho client): paho would otherwise
resend its own copy of an in-flight message after a reconnect, behind the outbox's back.

Per connection, in this order: subscribe (daemon.mqtt.subscriptions), say `online` on the
bridge state, then each presence's `online` and the latest retained message of each topic
the outbox has delivered (daemon.mqtt.presence), then run three named tasks in a TaskGroup,
one handing received messages to `on_message`, one publishing the outbox oldest first
(daemon.mqtt.drain), and one keeping muted filters unsubscribed until their mute ends
(`mute`, daemon.mqtt.mutes: a flood of requests). aiomqtt signals a lost connection by
ending the message iteration with `MqttError` (or by failing a publish); the publisher is
then cancelled, and its unacknowledged message stays at the head of the outbox for the next
connection. A clean stop says `offline` for the presences and the bridge (the will is the
broker's word when the process or its socket dies). A presence can change while the link
runs (`announce`: the bridge info after a reload, a table's availability when another
daemon claims it).

The process's first connection starts a clean session; every later one keeps a persistent
session, so that the broker's session tells a dropped link from another client on our client
id, and so that a request sent while the link was down a moment is handed over when it is
back (daemon.mqtt.takeover; after more than `RESUME_WITHIN` down the link starts clean and
the broker drops what it queued). Reconnects back off (capped, jittered); a connection that
carried what it should resets the backoff, and what the broker's session shows is reported
once it is plain. What the link needs of aiomqtt past its public API is
daemon.mqtt.paho_hooks' and daemon.mqtt.paho_socket's.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Coroutine, Iterable
from typing import TYPE_CHECKING, Final, NoReturn, Self

import aiomqtt
import structlog

from daemon.mqtt.client import connected, describe_error, new_client, raise_if_cancelled
from daemon.mqtt.drain import Publisher
from daemon.mqtt.link_state import LinkState, LinkStateChange, LinkStateLog, OnStateChange
from daemon.mqtt.mutes import Mutes, keep_muted
from daemon.mqtt.paho_hooks import on_filter, record_connack, write_without_waking
from daemon.mqtt.paho_socket import batch_socket_io
from daemon.mqtt.presence import (
    BRIDGE_OFFLINE,
    OwnWill,
    Presence,
    Presences,
    say_goodbye,
    say_hello,
)
from daemon.mqtt.subscriptions import (
    REQUEST_QOS,
    InboundMessage,
    OnMessage,
    OnRequest,
    hand_over_messages,
    subscribe_all,
    topic_filters,
)
from daemon.mqtt.takeover import ClientIdInUse, Connections, LinkUnstable, Report
from drivers.backoff import Backoff

if TYPE_CHECKING:
    from types import TracebackType

    from daemon.mqtt.outbox import Outbox
    from daemon.mqtt.settings import MqttSettings

# How long one broker round trip (CONNACK, SUBACK, PUBACK) may take before the connection
# counts as broken and is replaced; a stalled broker then behaves like a lost one.
_OPERATION_TIMEOUT: Final = 10.0
# How long a clean stop waits to tell the displays `offline` before giving up on it.
_GOODBYE_TIMEOUT: Final = 2.0
# QoS 1 messages published and not yet acknowledged by the broker, per connection. One at a
# time capped a table at one broker round trip per message, and a settling card makes a
# dozen messages; 32 keep the pipe full on a LAN while a reconnect resends at most that many.
_MAX_IN_FLIGHT: Final = 32
_log = structlog.get_logger()

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
        on_request: OnRequest | None = None,
        subscriptions: Iterable[str] = (),
        watches: Iterable[str] = (),
        on_state_change: OnStateChange | None = None,
        presences: Iterable[Presence] = (),
        rng: random.Random | None = None,
        on_client_id_in_use: OnClientIdInUse | None = None,
        on_link_unstable: OnLinkUnstable | None = None,
    ) -> None:
        """`subscriptions`: request filters; `watches`: state topic filters; both at QoS 1
        and handed to `on_message`, except that with `on_request` what the `subscriptions`
        match goes to it instead, as paho reads it: a request then costs no task and no
        turn of the event loop before the table has it. `on_client_id_in_use` hears when
        the broker keeps replacing our connection, `on_link_unstable` when it keeps
        dropping (daemon.mqtt.takeover), after the link has logged it."""
        self._settings = settings
        self._presences = Presences(presences)
        self._outbox = outbox
        self._on_message = on_message
        self._on_request = on_request
        self._subscriptions = tuple(subscriptions)
        self._watches = tuple(watches)
        for topic_filter in (*self._subscriptions, *self._watches):
            if not isinstance(topic_filter, str) or not topic_filter:
                raise ValueError(f"subscriptions: {topic_filter!r} is not a topic filter")
        if self._watches and on_message is None:
            raise ValueError("watches without on_message would drop every state heard")
        if self._subscriptions and on_message is None and on_request is None:
            raise ValueError("subscriptions without a handler would drop every request")
        # Jitter needs no cryptographic randomness, only hosts that do not agree with each other.
        self._rng = random.Random() if rng is None else rng  # noqa: S311 - jitter, not a secret
        self._states = LinkStateLog(settings, on_state_change)
        self._runner: asyncio.Task[NoReturn] | None = None
        self._connection: aiomqtt.Client | None = None  # while connected
        self._mutes = Mutes()
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
        return self._states.state

    async def announce(self, presence: Presence) -> None:
        """Keep `presence` true from now on, in place of the one on its topic: published at
        once if connected, and on every connection after."""
        self._presences.by_topic[presence.topic] = presence
        client = self._connection
        if client is None:
            return  # the next connection announces it
        try:
            await client.publish(presence.topic, presence.online, qos=1, retain=True)
        except aiomqtt.MqttError as exc:  # lost meanwhile: the next connection announces it
            _log.debug("mqtt.announce_deferred", topic=presence.topic, reason=describe_error(exc))
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
                self._states.change(LinkStateChange(LinkState.CONNECTING))
                reason = await self._connect_and_serve(backoff)
                # A stop that arrived as the connection failed may have been swallowed on
                # the way out (an aiomqtt timeout raised over our CancelledError).
                raise_if_cancelled()
                delay = backoff.next_delay()
                self._states.change(LinkStateChange(LinkState.DISCONNECTED, reason, delay))
                await asyncio.sleep(delay)
        finally:
            if self._states.state is not LinkState.DISCONNECTED:
                self._states.change(LinkStateChange(LinkState.DISCONNECTED, "stopped"))

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
        own_will = OwnWill()
        on_filter(client, self._settings.state_topic, own_will.take)
        if self._on_request is not None:
            for topic_filter in self._subscriptions:
                on_filter(client, topic_filter, self._take_request)
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
                    self._states.change(LinkStateChange(LinkState.CONNECTED))
                    error = await self._serve(client)
                except asyncio.CancelledError:
                    self._connection = None
                    goodbyes = self._presences.goodbyes()
                    await say_goodbye(
                        client,
                        goodbyes,
                        self._settings.state_topic,
                        _MAX_IN_FLIGHT,
                        _GOODBYE_TIMEOUT,
                    )
                    raise
                finally:
                    self._connection = None
        except aiomqtt.MqttError as exc:
            error = error or exc
        assert error is not None  # _serve returns only the error that ended the connection
        if self._connections.ended(loop.time(), error):
            backoff.reset()
        return describe_error(error)

    def _take_request(self, topic: str, payload: bytes, retained: bool) -> None:  # noqa: FBT001 - paho_hooks.on_filter's signature
        assert self._on_request is not None  # registered only with one
        try:
            self._on_request(InboundMessage(topic, payload, retained))
        except Exception:  # noqa: BLE001 - one bad request must not take the table's link down
            _log.exception("mqtt.on_message_failed", topic=topic)

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
                _reporting_loss(
                    hand_over_messages(client, self._presences, self._on_message), lost
                ),
                name="mqtt-receive",
            )
            publishing = tasks.create_task(
                _reporting_loss(self._drain_outbox(client), lost), name="mqtt-publish"
            )
            muting = tasks.create_task(
                _reporting_loss(keep_muted(client, self._mutes, REQUEST_QOS), lost),
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
            will=aiomqtt.Will(self._settings.state_topic, BRIDGE_OFFLINE, qos=1, retain=True),
            timeout=_OPERATION_TIMEOUT,
            max_inflight_messages=_MAX_IN_FLIGHT,
            clean_session=not persistent,
            no_delay=True,
        )
        # aiomqtt warns from 10 unanswered calls; a full window is normal here.
        client.pending_calls_threshold = _MAX_IN_FLIGHT + len(self._topic_filters()) + 2
        return client

    def _topic_filters(self) -> list[tuple[str, int]]:
        own = [self._settings.state_topic, *self._presences.by_topic]
        return topic_filters(self._subscriptions, self._watches, own)

    async def _announce(self, client: aiomqtt.Client) -> None:
        write_without_waking(client)
        batch_socket_io(client)
        # Subscribe first: once a display sees `online`, requests it sends are heard.
        await subscribe_all(client, self._topic_filters())
        state_topic = self._settings.state_topic
        await say_hello(client, state_topic, self._presences, self._outbox, _MAX_IN_FLIGHT)

    async def _drain_outbox(self, client: aiomqtt.Client) -> None:
        """The outbox, oldest first, up to `_MAX_IN_FLIGHT` awaiting PUBACK (daemon.mqtt.drain)."""
        await Publisher(
            client,
            self._outbox,
            window=_MAX_IN_FLIGHT,
            round_trip=_OPERATION_TIMEOUT,
            carried=self._connections.carried,
        ).run()


async def _reporting_loss(
    work: Coroutine[None, None, None], lost: asyncio.Future[aiomqtt.MqttError]
) -> None:
    try:
        await work
    except aiomqtt.MqttError as exc:
        if not lost.done():
            lost.set_result(exc)
