"""Every place the daemon reaches past aiomqtt's public API to the paho client under it.

aiomqtt 2.5 (over paho-mqtt 2.2) offers no way to read the CONNACK's session-present flag
(`record_connack`), to take the messages of a topic filter the moment paho reads them, in
order with the acknowledgements around them (`on_filter`), to write a publish on the event
loop's own thread without the wake-up its writer costs (`write_without_waking`), to write
what a turn of the loop published in one `send` and read a burst of packets in one `recv`
(`batch_socket_io`, in daemon.mqtt.paho_socket beside this module), or to publish without a
task, an `Event` and a timer per message, its PUBACK counted as paho reads it
(`Acknowledgements`). Each needs aiomqtt's private `Client._client` (the paho client,
reached only through `paho_client`); `record_connack` also `Client._on_connect`,
`batch_socket_io` paho's `_sock`, `_sock_send`, `_sock_recv` and `_loop_rc_handle`. They
live here and in paho_socket, nowhere else: an upgrade of either library is checked
against these two modules alone, and tests/daemon/test_paho_hooks.py
holds the attributes it relies on against the installed versions and shows on a real
connection to mosquitto that each hook took effect, so a change under it fails there and not
in a daemon on the floor.

Nagle's algorithm needs none of this: aiomqtt's public `socket_options` turns it off
(`new_client(..., no_delay=True)`).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import aiomqtt
from paho.mqtt.enums import MQTTErrorCode

if TYPE_CHECKING:
    from collections.abc import Callable

    import paho.mqtt.client as paho
    from paho.mqtt.client import SocketLike
    from paho.mqtt.properties import Properties
    from paho.mqtt.reasoncodes import ReasonCode


def paho_client(client: aiomqtt.Client) -> paho.Client:
    """The paho client `client` drives: the one private attribute of aiomqtt's we read."""
    paho_client: paho.Client = client._client  # noqa: SLF001 - aiomqtt exposes no accessor
    return paho_client


@dataclass(slots=True)
class Connack:
    """What aiomqtt drops of the broker's CONNACK: whether it still had this client's session
    (MQTT 3.1.1 section 3.2.2.2, Session Present)."""

    session_present: bool = False


def record_connack(client: aiomqtt.Client) -> Connack:
    """Keep the session-present flag of `client`'s CONNACK; call before connecting."""
    record = Connack()
    # aiomqtt keeps the CONNACK's flags to itself: its own callback, which resolves the
    # connection, is called after the flag is kept.
    handed_on = client._on_connect  # noqa: SLF001 - see above

    def on_connect(
        caller: paho.Client,
        userdata: Any,  # noqa: ANN401 - paho's callback signature
        flags: paho.ConnectFlags,
        reason_code: ReasonCode,
        properties: Properties | None = None,
    ) -> None:
        record.session_present = bool(flags.session_present)
        handed_on(caller, userdata, flags, reason_code, properties)

    paho_client(client).on_connect = on_connect
    return record


def on_filter(
    client: aiomqtt.Client, topic_filter: str, take: Callable[[str, bytes, bool], None]
) -> None:
    """Hand every message on a topic `topic_filter` matches to `take(topic, payload,
    retained)` as paho reads it, in order with the acknowledgements around it;
    `client.messages` no longer sees them. What `take` raises goes up through paho's read,
    so it must raise nothing."""

    def callback(_caller: paho.Client, _userdata: Any, message: paho.MQTTMessage) -> None:  # noqa: ANN401 - paho's callback signature
        take(message.topic, bytes(message.payload), bool(message.retain))

    paho_client(client).message_callback_add(topic_filter, callback)


def write_without_waking(client: aiomqtt.Client) -> None:
    """Write each publish on the event loop's next turn, not after a wake-up and a poll; call
    once connected, on the loop's thread.

    aiomqtt registers paho's "I have bytes to write" with `call_soon_threadsafe(add_writer)`,
    as paho may say it from the thread that connects: on the loop's own thread that costs a
    byte through the loop's self-pipe, two `epoll_ctl` and two more turns of the loop per
    message (profiled: more CPU per message than the message itself). Said on the loop's
    thread, the write is now a plain `call_soon` that writes what paho has queued (every
    publish of that turn at once); when the socket's buffer is full, or the write fails,
    aiomqtt's own writer takes over as before (and reports a lost connection). A write that
    paho's queue no longer needs (an `Acknowledgements.flush` wrote it all first) is
    cancelled, not run to find nothing."""
    _LoopWriter(paho_client(client), asyncio.get_running_loop()).install()


class _LoopWriter:
    """`write_without_waking`'s state and the two paho callbacks it stands in for."""

    def __init__(self, inner: paho.Client, loop: asyncio.AbstractEventLoop) -> None:
        self._paho = inner
        self._loop = loop
        self._loop_thread = threading.get_ident()
        self._threadsafe = inner.on_socket_register_write  # aiomqtt's
        self._unregister = inner.on_socket_unregister_write  # aiomqtt's
        self._scheduled: asyncio.Handle | None = None  # the write asked for, until it runs

    def install(self) -> None:
        self._paho.on_socket_register_write = self.register
        self._paho.on_socket_unregister_write = self.written

    def register(self, _paho: object, userdata: object, sock: SocketLike) -> None:
        try:
            on_loop = asyncio.get_running_loop() is self._loop
        except RuntimeError:  # paho's connecting thread
            on_loop = False
        if on_loop:
            if self._scheduled is None:
                self._scheduled = self._loop.call_soon(self._write)
        elif self._threadsafe is not None:
            self._threadsafe(self._paho, userdata, sock)

    def written(self, _paho: object, userdata: object, sock: SocketLike) -> None:
        """paho's queue is empty (its `loop_write` says so as it ends, its packets handed to
        the socket, or to `batch_socket_io`'s buffer, which sends them before that
        `loop_write` returns; or paho is closing the socket): the write asked for when the
        queue filled has nothing left to do."""
        if self._scheduled is not None and threading.get_ident() == self._loop_thread:
            self._scheduled.cancel()
            self._scheduled = None
        if self._unregister is not None:
            self._unregister(self._paho, userdata, sock)

    def _write(self) -> None:
        self._scheduled = None
        with contextlib.suppress(Exception):  # aiomqtt's writer meets it again and reports it
            self._paho.loop_write()
        self._hand_to_aiomqtt()  # only if bytes are left: the socket's buffer is full

    def _hand_to_aiomqtt(self) -> None:
        sock = self._paho.socket()
        if self._threadsafe is not None and sock is not None and self._paho.want_write():
            self._threadsafe(self._paho, None, sock)


_SUCCESS: Final = MQTTErrorCode.MQTT_ERR_SUCCESS


class Acknowledgements:
    """Publishes made straight through paho, their PUBACKs counted as paho reads them.

    aiomqtt's `publish` makes an `Event`, a `wait_for` task and a timer for every message,
    and the caller a task to hold several in flight: more CPU than the message's bytes. Here
    `publish` hands the message to paho and returns its packet id; the on_publish callback
    (aiomqtt's, chained: its own publishes still reach it) notes each acknowledged id and
    sets `arrived` (and calls `on_arrival`, if given) for each. `on_arrival` runs inside
    paho's callback, which holds paho's lock: it must not call paho.
    Call `Acknowledgements(client)` once connected, on the loop's thread.
    """

    def __init__(
        self, client: aiomqtt.Client, on_arrival: Callable[[], None] | None = None
    ) -> None:
        self._paho = paho_client(client)
        self._ours: set[int] = set()
        self._acknowledged: set[int] = set()
        self.arrived = asyncio.Event()
        self._on_arrival = on_arrival
        handed_on = self._paho.on_publish  # aiomqtt's

        def on_publish(
            caller: paho.Client,
            userdata: Any,  # noqa: ANN401 - paho's callback signature
            mid: int,
            reason_code: ReasonCode,
            properties: Properties,
        ) -> None:
            if mid in self._ours:
                self._ours.discard(mid)
                self._acknowledged.add(mid)
                self._arrive()
            elif handed_on is not None:
                handed_on(caller, userdata, mid, reason_code, properties)  # type: ignore[call-arg]  # aiomqtt's: paho's version-2 signature

        self._paho.on_publish = on_publish

    def publish(self, topic: str, payload: bytes, qos: int, *, retain: bool) -> int:
        """Queue the message with paho (written on the loop's next turn); its packet id.
        Raises aiomqtt's `MqttCodeError` when paho refuses it (not connected)."""
        info = self._paho.publish(topic, payload, qos, retain)
        if info.rc != _SUCCESS:
            raise aiomqtt.MqttCodeError(info.rc, "Could not publish message")
        if info.is_published():  # QoS 0 written already: nothing will come back
            self._acknowledged.add(info.mid)
            self._arrive()
        else:
            self._ours.add(info.mid)
        return info.mid

    def _arrive(self) -> None:
        self.arrived.set()
        if self._on_arrival is not None:
            self._on_arrival()

    def flush(self) -> None:
        """Write what was published now, not on the loop's next turn: the write
        `write_without_waking` scheduled is then cancelled. A socket that fails is reported
        by paho as the write meets it (`_loop_rc_handle`); a callback of paho's that raises
        is not the caller's to hear: what was left in paho's queue keeps the scheduled write,
        which meets it again, and what had left the queue is sent all the same
        (`batch_socket_io`)."""
        with contextlib.suppress(Exception):  # see above
            self._paho.loop_write()

    def take(self, mid: int) -> bool:
        """Whether `mid` was acknowledged (then forgotten: packet ids are used again)."""
        if mid in self._acknowledged:
            self._acknowledged.discard(mid)
            return True
        return False
