"""Every place the daemon reaches past aiomqtt's public API to the paho client under it.

aiomqtt 2.5 (over paho-mqtt 2.2) offers no way to read the CONNACK's session-present flag
(`record_connack`), to take the messages of one topic the moment paho reads them, in order
with the acknowledgements around them (`on_topic`), or to write a publish on the event
loop's own thread without the wake-up its writer costs (`write_without_waking`). Each needs
aiomqtt's private `Client._client` (the paho client, reached only through `paho_client`)
and the first also `Client._on_connect`. They live here and nowhere else: an upgrade of
either library is checked against this module alone, and tests/daemon/test_paho_hooks.py
holds the attributes it relies on against the installed versions and shows on a real
connection to mosquitto that each hook took effect, so a change under it fails there and not
in a daemon on the floor.

Nagle's algorithm needs none of this: aiomqtt's public `socket_options` turns it off
(`new_client(..., no_delay=True)`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    import aiomqtt
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


def on_topic(client: aiomqtt.Client, topic: str, take: Callable[[bytes, bool], None]) -> None:
    """Hand every message on exactly `topic` to `take(payload, retained)` as paho reads it, in
    order with the acknowledgements around it; `client.messages` no longer sees them."""

    def callback(_caller: paho.Client, _userdata: Any, message: paho.MQTTMessage) -> None:  # noqa: ANN401 - paho's callback signature
        take(bytes(message.payload), bool(message.retain))

    paho_client(client).message_callback_add(topic, callback)


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
