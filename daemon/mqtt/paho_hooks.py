"""Every place the daemon reaches past aiomqtt's public API to the paho client under it.

aiomqtt 2.5 (over paho-mqtt 2.2) offers no way to read the CONNACK's session-present flag
(`record_connack`), to take the messages of a topic filter the moment paho reads them, in
order with the acknowledgements around them (`on_filter`), to write a publish on the event
loop's own thread without the wake-up its writer costs (`write_without_waking`), to write
what a turn of the loop published in one `send` and read a burst of packets in one `recv`
(`batch_socket_io`), or to publish without a task, an `Event` and a timer per message, its
PUBACK counted as paho reads it (`Acknowledgements`). Each needs aiomqtt's private
`Client._client` (the paho client, reached only through `paho_client`); `record_connack`
also `Client._on_connect`, `batch_socket_io` paho's `_sock`, `_sock_send`, `_sock_recv` and
`_loop_rc_handle`. They live here and nowhere else: an upgrade of
either library is checked against this module alone, and tests/daemon/test_paho_hooks.py
holds the attributes it relies on against the installed versions and shows on a real
connection to mosquitto that each hook took effect, so a change under it fails there and not
in a daemon on the floor.

Nagle's algorithm needs none of this: aiomqtt's public `socket_options` turns it off
(`new_client(..., no_delay=True)`).
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import aiomqtt
from paho.mqtt.enums import MQTTErrorCode
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode

if TYPE_CHECKING:
    from collections.abc import Callable

    import paho.mqtt.client as paho
    from paho.mqtt.client import SocketLike


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
    aiomqtt's own writer takes over as before (and reports a lost connection)."""
    paho = paho_client(client)
    loop = asyncio.get_running_loop()
    threadsafe = paho.on_socket_register_write  # aiomqtt's

    def hand_to_aiomqtt() -> None:
        sock = paho.socket()
        if threadsafe is not None and sock is not None and paho.want_write():
            threadsafe(paho, None, sock)

    def write() -> None:
        try:
            paho.loop_write()
        except Exception:  # noqa: BLE001 - aiomqtt's writer meets it again and reports it
            hand_to_aiomqtt()
            return
        hand_to_aiomqtt()  # only if bytes are left: the socket's buffer is full

    def register(_paho: object, userdata: object, sock: SocketLike) -> None:
        try:
            on_loop = asyncio.get_running_loop() is loop
        except RuntimeError:  # paho's connecting thread
            on_loop = False
        if on_loop:
            loop.call_soon(write)
        elif threadsafe is not None:
            threadsafe(paho, userdata, sock)

    paho.on_socket_register_write = register


# What one `recv` asks for: every PUBACK of a window of 32 (4 bytes each) and any request
# that came with them, in one system call instead of three a packet.
READ_SIZE: Final = 65536
_SUCCESS: Final = MQTTErrorCode.MQTT_ERR_SUCCESS
# A PUBACK that says no more than "accepted" (MQTT 3.1.1 section 3.4; 5.0 section 3.4.2.1: a
# remaining length of 2 means reason code 0 and no properties): type 4, no flags, length 2.
_PUBACK: Final = b"\x40\x02"
_PUBACK_LENGTH: Final = 4
_ACCEPTED: Final = ReasonCode(PacketTypes.PUBACK)  # what paho's decoder makes of one
_NO_PROPERTIES: Final = Properties(PacketTypes.PUBACK)  # type: ignore[no-untyped-call]  # paho untyped here


@dataclass(slots=True)
class _Received:
    """Bytes one `recv` took that paho has not yet read."""

    data: bytes = b""
    at: int = 0

    def __len__(self) -> int:
        return len(self.data) - self.at


def batch_socket_io(client: aiomqtt.Client) -> None:
    """Write what a turn of the loop published in one `send`, and read what the broker sent
    in one `recv`; call once connected, on the loop's thread, after `write_without_waking`.

    paho writes each packet with its own `send` (a card's half-dozen messages: as many
    system calls) and reads each packet with three `recv` (its type, its length, the rest).
    Here paho's `_sock_send` appends to a buffer that `loop_write` sends at its end, in
    order, in one call (what the socket does not take waits for it to be writable, ahead of
    anything written later); its `_sock_recv` is served from one `recv` of up to
    `READ_SIZE` bytes, and `loop_read` goes on while bytes taken remain (nothing waits in the
    buffer for a wake-up the socket will not give). Errors are paho's own: a failed `send`
    is a lost connection, reported as paho reports one.
    """
    _BatchedSocket(paho_client(client), asyncio.get_running_loop()).install()


class _BatchedSocket:
    """`batch_socket_io`'s state and paho's methods it stands in for."""

    def __init__(self, inner: paho.Client, loop: asyncio.AbstractEventLoop) -> None:
        self._paho = inner
        self._loop = loop
        self._unsent = bytearray()
        self._received = _Received()
        self._read_packets, self._write_packets = inner.loop_read, inner.loop_write
        self._waiting_on: int | None = None  # the descriptor we wait to be writable
        self._closing = inner.on_socket_close  # aiomqtt's

    def install(self) -> None:
        inner = self._paho
        inner._sock_send = self.sock_send  # type: ignore[method-assign]  # noqa: SLF001
        inner._sock_recv = self.sock_recv  # type: ignore[method-assign]  # noqa: SLF001
        inner.loop_read = self.loop_read  # type: ignore[method-assign]
        inner.loop_write = self.loop_write  # type: ignore[method-assign]
        inner.on_socket_close = self.on_socket_close

    def _socket(self) -> Any:  # noqa: ANN401 - paho's socket, plain, TLS or websocket
        sock = self._paho._sock  # noqa: SLF001 - see the module's docstring
        if sock is None:
            raise ConnectionError("the socket is closed")
        return sock

    def sock_send(self, buf: bytes | bytearray) -> int:
        self._socket()
        self._unsent.extend(buf)
        return len(buf)

    def sock_recv(self, bufsize: int) -> bytes:
        received = self._received
        if not received:
            try:
                data = self._socket().recv(READ_SIZE)
            except ssl.SSLWantReadError as err:
                raise BlockingIOError from err
            except ssl.SSLWantWriteError as err:
                self._paho._call_socket_register_write()  # noqa: SLF001 - as paho's own
                raise BlockingIOError from err
            if not data:
                return b""  # the broker closed the connection
            received.data, received.at = data, 0
        start = received.at
        received.at = min(start + bufsize, len(received.data))
        return received.data[start : received.at]

    def loop_read(self, max_packets: int = 1) -> MQTTErrorCode:
        """Read what the socket has in one `recv`, count the PUBACKs at its head, hand the
        rest to paho, and so on until nothing is left."""
        while self._paho._sock is not None:  # noqa: SLF001 - see the module's docstring
            if not self._received:
                filled = self._fill()
                if filled is None:  # paho, reading, meets the failure and reports it
                    return self._read_packets(max_packets)
                if not filled:
                    return _SUCCESS
            rc = self._pubacks()
            if rc != _SUCCESS:
                return self._paho._loop_rc_handle(rc)  # noqa: SLF001 - as paho's own
            if self._received:
                rc = self._read_packets(max_packets)
                if rc != _SUCCESS:
                    return rc
        return MQTTErrorCode.MQTT_ERR_NO_CONN

    def _fill(self) -> bool | None:
        """One `recv` into the buffer: True if bytes came, False if none are there yet, None
        if the connection failed or closed."""
        try:
            data = self._socket().recv(READ_SIZE)
        except (BlockingIOError, ssl.SSLWantReadError):
            return False
        except ssl.SSLWantWriteError:
            self._paho._call_socket_register_write()  # noqa: SLF001 - as paho's own
            return False
        except OSError:
            return None
        if not data:
            return None
        self._received.data, self._received.at = data, 0
        return True

    def _pubacks(self) -> MQTTErrorCode:
        """Take the PUBACKs at the head of the buffer (a packet id and nothing else: what a
        broker sends for a message it accepted) past paho's decoder, which builds a reason
        code and a properties object for each; paho's own `_do_on_publish` then does for
        each what its reader would (the on_publish callback, the message's bookkeeping, the
        next of its queued messages). Anything else is paho's to read."""
        inner = self._paho
        if inner._in_packet["command"] != 0:  # noqa: SLF001 - paho is inside a packet
            return _SUCCESS
        received = self._received
        data, at, end = received.data, received.at, len(received.data)
        waiting = inner._out_messages  # noqa: SLF001 - see the module's docstring
        rc = _SUCCESS
        start = at
        while rc == _SUCCESS and end - at >= _PUBACK_LENGTH and data[at : at + 2] == _PUBACK:
            mid = (data[at + 2] << 8) | data[at + 3]
            at += _PUBACK_LENGTH
            received.at = at
            if mid in waiting:  # else a duplicate: paho ignores it too
                rc = inner._do_on_publish(mid, _ACCEPTED, _NO_PROPERTIES)  # noqa: SLF001
        if at != start:
            with inner._msgtime_mutex:  # noqa: SLF001 - the keepalive's clock, as paho's reader
                inner._last_bytes_received = time.monotonic()  # noqa: SLF001
        return rc

    def loop_write(self) -> MQTTErrorCode:
        rc = self._write_packets()  # paho's packets, into `_unsent`
        return self._flush() if rc == _SUCCESS else rc

    def _flush(self) -> MQTTErrorCode:
        sock = self._paho._sock  # noqa: SLF001 - see the module's docstring
        if not self._unsent or sock is None:
            return _SUCCESS
        if self._waiting_on is not None:
            # Still not writable. aiomqtt removes every writer of the socket when paho's
            # `loop_write` ends: ours is set again.
            self._loop.add_writer(self._waiting_on, self._writable)
            return _SUCCESS
        try:
            sent = sock.send(self._unsent)
        except (BlockingIOError, ssl.SSLWantWriteError, ssl.SSLWantReadError):
            sent = 0
        except OSError:
            return self._paho._loop_rc_handle(MQTTErrorCode.MQTT_ERR_CONN_LOST)  # noqa: SLF001
        del self._unsent[:sent]
        if self._unsent:
            self._waiting_on = sock.fileno()
            self._loop.add_writer(self._waiting_on, self._writable)
        return _SUCCESS

    def _writable(self) -> None:
        self._stop_waiting()
        self.loop_write()

    def _stop_waiting(self) -> None:
        if self._waiting_on is not None:
            self._loop.remove_writer(self._waiting_on)
            self._waiting_on = None

    def on_socket_close(self, caller: paho.Client, userdata: Any, sock: Any) -> None:  # noqa: ANN401 - paho's callback signature
        self._stop_waiting()
        # paho closes the socket the moment it has "written" a DISCONNECT, which is still in
        # the batch: sent now, if the socket takes it, or the broker sees the connection
        # drop and publishes the daemon's will after its clean `offline`.
        if self._unsent:
            with contextlib.suppress(OSError):  # a lost connection: nothing more to say
                sock.send(self._unsent)
        self._unsent.clear()
        if self._closing is not None:
            self._closing(caller, userdata, sock)


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
        `write_without_waking` scheduled then finds nothing left. A write that fails is left
        to that scheduled one, which meets the failure again and reports it."""
        with contextlib.suppress(Exception):  # reported by the scheduled write (above)
            self._paho.loop_write()

    def take(self, mid: int) -> bool:
        """Whether `mid` was acknowledged (then forgotten: packet ids are used again)."""
        if mid in self._acknowledged:
            self._acknowledged.discard(mid)
            return True
        return False
