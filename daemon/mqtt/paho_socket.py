"""paho's socket, read and written in bursts: one `send` for what a turn of the loop
published, one `recv` for what the broker sent (`batch_socket_io`).

One of the hooks past aiomqtt's public API (daemon.mqtt.paho_hooks says why each exists); this
one stands in for paho's `_sock_send`, `_sock_recv`, `loop_read` and `loop_write`, reads
paho's `_sock`, `_in_packet`, `_out_messages`, `_msgtime_mutex` and `_last_bytes_received`, and
calls its `_do_on_publish`, `_loop_rc_handle` and `_call_socket_register_write`.
tests/daemon/test_paho_hooks.py holds them against the installed paho.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from paho.mqtt.enums import MQTTErrorCode
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode

from daemon.mqtt.paho_hooks import paho_client

if TYPE_CHECKING:
    import aiomqtt
    import paho.mqtt.client as paho


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
    buffer for a wake-up the socket will not give), then reads again, unless its last `recv`
    was a plain socket's short read, which took all there was (`_took_all`). Errors are
    paho's own: a failed `send` is a lost connection, reported as paho reports one.
    """
    _BatchedSocket(paho_client(client), asyncio.get_running_loop()).install()


class _BatchedSocket:
    """`batch_socket_io`'s state and paho's methods it stands in for."""

    def __init__(self, inner: paho.Client, loop: asyncio.AbstractEventLoop) -> None:
        self._paho = inner
        self._loop = loop
        self._unsent = bytearray()
        self._received = _Received()
        self._drained = False  # the last `recv` took all the socket had (`_took_all`)
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
            sock = self._socket()
            data = self._recv(sock)
            if not data:
                return b""  # the broker closed the connection
            self._keep(sock, data)
        start = received.at
        received.at = min(start + bufsize, len(received.data))
        return received.data[start : received.at]

    def loop_read(self, max_packets: int = 1) -> MQTTErrorCode:
        """Read what the socket has in one `recv`, count the PUBACKs at its head, hand the
        rest to paho, and so on until nothing is left: until a plain socket's `recv` took
        all there was, or one finds nothing."""
        self._drained = False
        while self._paho._sock is not None:  # noqa: SLF001 - see the module's docstring
            if not self._received:
                if self._drained:
                    return _SUCCESS
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
            sock = self._socket()
            data = self._recv(sock)
        except BlockingIOError:
            return False
        except OSError:
            return None
        if not data:
            return None
        self._keep(sock, data)
        return True

    def _recv(self, sock: Any) -> bytes:  # noqa: ANN401 - paho's socket, as `_socket`
        """One `recv` of up to `READ_SIZE`; a TLS socket that must wait raises
        `BlockingIOError`, as a plain one does (and asks paho to write, if TLS must)."""
        try:
            data: bytes = sock.recv(READ_SIZE)
        except ssl.SSLWantReadError as err:
            raise BlockingIOError from err
        except ssl.SSLWantWriteError as err:
            self._paho._call_socket_register_write()  # noqa: SLF001 - as paho's own
            raise BlockingIOError from err
        return data

    def _keep(self, sock: Any, data: bytes) -> None:  # noqa: ANN401 - paho's socket, as `_socket`
        """What one `recv` took, for paho and the PUBACK counter to read from its start."""
        self._received.data, self._received.at = data, 0
        self._drained = _took_all(sock, data)

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
        try:
            rc = self._write_packets()  # paho's packets, into `_unsent`
        except BaseException:
            # A callback of paho's raised after its queue emptied into `_unsent` (the write
            # that `write_without_waking` scheduled is cancelled by then): what it queued
            # still leaves.
            self._flush()
            raise
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


def _took_all(sock: object, data: bytes) -> bool:
    """Whether the `recv` that returned `data` took all the socket held. A plain kernel
    socket's short read did: what comes after wakes the loop again (its readiness is
    level-triggered), so asking once more, only to be told "nothing" (an `EAGAIN` and its
    exception), is a system call wasted on every burst. A TLS socket's `recv` returns one
    record, and the broker sends each packet as its own: its short read says nothing of the
    records behind it, which the same wake-up must read (or each PUBACK costs a turn of the
    loop, and the window refills a message at a time). Nor does paho's websocket wrapper's,
    which keeps frames in its own buffer. Those are read until they have nothing."""
    plain = isinstance(sock, socket.socket) and not isinstance(sock, ssl.SSLSocket)
    return plain and len(data) < READ_SIZE
