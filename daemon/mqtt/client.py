"""The one place an `aiomqtt.Client` is built from the daemon's broker settings.

The daemon's link, the live view, the pit display and the demo's players all reach the same
broker the same way: its host and port, the user name and password, and TLS with
verification on unless the settings say `insecure`. What differs between them (who they say
they are, a Last Will, how long a round trip may take) is what the caller passes.

`connected(client)` is `async with client` made safe to cancel while connecting, and
`raise_if_cancelled()` honours a stop that aiomqtt swallowed: every long-lived client (the
daemon's link, the display's subscriber) needs both; `describe_error` says what an aiomqtt
error was, with the reason it wraps. What the link needs that aiomqtt does not offer in
public is in daemon.mqtt.paho_hooks, and only there.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
from typing import TYPE_CHECKING, Final

import aiomqtt

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Sequence

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
    no_delay: bool = False,
) -> aiomqtt.Client:
    """A fresh client for the broker `settings` name; `identifier` defaults to its client id,
    `clean_session` to paho's (clean: the broker keeps nothing of it after it leaves).

    `no_delay` turns Nagle's algorithm off on the connection's socket. paho leaves it on:
    with several publishes in flight, a second small packet then waits for the broker's
    acknowledgement of the first, which a delayed ACK holds back up to 40 ms (measured: a
    closed-loop table fell from 30 steps a second to 13 with it on)."""
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
        socket_options=[_NO_DELAY] if no_delay else None,
        # paho's name: True skips the host name check; verification stays on otherwise.
        tls_insecure=None if tls is None else tls.insecure,
    )


_NO_DELAY: Final = (socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


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


def describe_error(error: BaseException) -> str:
    """aiomqtt's error and, when it has one, the underlying reason it wraps."""
    text = str(error) or type(error).__name__
    cause = error.__cause__
    return f"{text}: {cause}" if cause is not None and str(cause) else text
