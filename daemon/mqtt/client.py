"""The one place an `aiomqtt.Client` is built from the daemon's broker settings.

The daemon's link, the live view, the pit display and the demo's players all reach the same
broker the same way: its host and port, the user name and password, and TLS with
verification on unless the settings say `insecure`. What differs between them (who they say
they are, a Last Will, how long a round trip may take) is what the caller passes.

`connected(client)` is `async with client` made safe to cancel while connecting, and
`raise_if_cancelled()` honours a stop that aiomqtt swallowed: every long-lived client (the
daemon's link, the display's subscriber) needs both. `record_connack` and `on_topic` hand the
daemon's link what aiomqtt does not: whether the broker kept the client's session, and the
messages of one topic the moment paho reads them.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import aiomqtt

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Sequence

    import paho.mqtt.client as paho
    from paho.mqtt.properties import Properties
    from paho.mqtt.reasoncodes import ReasonCode

    from daemon.mqtt.settings import MqttSettings, TlsSettings


def new_client(
    settings: MqttSettings,
    *,
    identifier: str | None = None,
    will: aiomqtt.Will | None = None,
    timeout: float | None = None,
    max_inflight_messages: int | None = None,
    clean_session: bool | None = None,
) -> aiomqtt.Client:
    """A fresh client for the broker `settings` name; `identifier` defaults to its client id,
    `clean_session` to paho's (clean: the broker keeps nothing of it after it leaves)."""
    tls = settings.tls
    return aiomqtt.Client(
        settings.host,
        settings.port,
        identifier=settings.client_id if identifier is None else identifier,
        clean_session=clean_session,
        keepalive=settings.keepalive,
        username=settings.username,
        password=None if settings.password is None else settings.password.reveal(),
        will=will,
        timeout=timeout,
        max_inflight_messages=max_inflight_messages,
        tls_params=None if tls is None else _tls_parameters(tls),
        # paho's name: True skips the host name check; verification stays on otherwise.
        tls_insecure=None if tls is None else tls.insecure,
    )


def _tls_parameters(tls: TlsSettings) -> aiomqtt.TLSParameters:
    return aiomqtt.TLSParameters(
        ca_certs=None if tls.ca_file is None else str(tls.ca_file),
        certfile=None if tls.cert_file is None else str(tls.cert_file),
        keyfile=None if tls.key_file is None else str(tls.key_file),
        cert_reqs=ssl.CERT_NONE if tls.insecure else ssl.CERT_REQUIRED,
    )


@contextlib.asynccontextmanager
async def connected(client: aiomqtt.Client) -> AsyncIterator[aiomqtt.Client]:
    """`async with client`, safe to cancel while connecting.

    paho connects in a worker thread that cancellation cannot interrupt; cancelling
    aiomqtt's `__aenter__` would leave that thread to open a socket nobody closes. So the
    attempt is shielded, and on cancellation awaited (bounded by the connect timeouts)
    and, if it succeeded, closed before the cancellation goes on.
    """
    attempt = asyncio.ensure_future(client.__aenter__())
    try:
        await asyncio.shield(attempt)
    except asyncio.CancelledError:
        try:
            await attempt
        except aiomqtt.MqttError as exc:
            close_sockets_left_in(exc)
        else:
            with contextlib.suppress(aiomqtt.MqttError):
                await client.__aexit__(None, None, None)
        raise
    except aiomqtt.MqttError as exc:
        close_sockets_left_in(exc)
        raise
    async with contextlib.AsyncExitStack() as stack:
        stack.push_async_exit(client)
        yield client


def close_sockets_left_in(error: BaseException) -> None:
    """Close the socket of a failed connection attempt that paho left open.

    When a TLS handshake fails (an untrusted broker certificate), paho 2.2 raises from
    `_ssl_wrap_socket` without closing the socket, which then lives on in the traceback
    until some later garbage collection; a daemon retrying a misconfigured broker would
    pile up half-closed sockets. The tracebacks of the error chain hold it: close it now.
    """
    pending: list[BaseException] = [error]
    seen: set[int] = set()
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        frames = current.__traceback__
        while frames is not None:
            for value in frames.tb_frame.f_locals.values():
                if isinstance(value, socket.socket):
                    value.close()
            frames = frames.tb_next
        pending += [e for e in (current.__cause__, current.__context__) if e is not None]


async def subscribe(
    client: aiomqtt.Client, topic_filters: list[tuple[str, int]]
) -> Sequence[int | ReasonCode]:
    """`client.subscribe`, then `raise_if_cancelled`: a stop that came with the SUBACK is
    swallowed by aiomqtt's wait_for, and a loop over messages after it would wait for ever."""
    codes = await client.subscribe(topic_filters)
    raise_if_cancelled()
    return codes


def raise_if_cancelled() -> None:
    """Honour a cancellation that aiomqtt's `asyncio.wait_for` swallowed.

    On Python 3.11, `wait_for` returns the result when it arrives in the same loop
    iteration as a cancellation, and the cancellation is lost (CPython gh-86296, fixed in
    3.12). The task still counts the request, so checking after each broker round trip
    keeps a stopping link from carrying on (and its owner from waiting forever).
    """
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


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

    client._client.on_connect = on_connect  # noqa: SLF001 - see above
    return record


def on_topic(client: aiomqtt.Client, topic: str, take: Callable[[bytes, bool], None]) -> None:
    """Hand every message on exactly `topic` to `take(payload, retained)` as paho reads it, in
    order with the acknowledgements around it; `client.messages` no longer sees them."""

    def callback(_caller: paho.Client, _userdata: Any, message: paho.MQTTMessage) -> None:  # noqa: ANN401 - paho's callback signature
        take(bytes(message.payload), bool(message.retain))

    client._client.message_callback_add(topic, callback)  # noqa: SLF001 - see record_connack
