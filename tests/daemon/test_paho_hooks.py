"""daemon.mqtt.paho_hooks against the installed aiomqtt and paho: what it reaches past
aiomqtt's public API for is there, of the shape it expects, and each hook takes effect on a
real connection to mosquitto. An upgrade of either library that moves what a hook relies on
fails here, by name, rather than in a daemon on the floor."""

from __future__ import annotations

import ast
import asyncio
import inspect
import socket
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiomqtt
import paho.mqtt.client as paho

from daemon.mqtt.client import connected, new_client
from daemon.mqtt.paho_hooks import (
    Acknowledgements,
    on_filter,
    paho_client,
    record_connack,
    write_without_waking,
)
from daemon.mqtt.paho_socket import batch_socket_io
from daemon.mqtt.settings import MqttSettings, TlsSettings

if TYPE_CHECKING:
    from collections.abc import Callable

    import pytest

    from daemon.testing import Certificates, Mosquitto

_ON_CONNECT = ["client", "userdata", "flags", "reason_code", "properties"]


def _settings(broker: Mosquitto, client_id: str = "hooks") -> MqttSettings:
    return MqttSettings(host=broker.host, port=broker.port, node="hooks", client_id=client_id)


async def test_aiomqtt_still_drives_a_paho_client_with_what_the_hooks_use() -> None:
    """No broker needed (a client is built on a running loop, never connected): the
    attributes, their types and the callback signatures."""
    client = aiomqtt.Client("127.0.0.1")
    inner = paho_client(client)
    assert type(inner) is paho.Client
    # record_connack: aiomqtt's CONNACK callback, with paho's version-2 signature, is the one
    # paho calls; the flags carry session_present.
    assert inspect.ismethod(client._on_connect)
    assert list(inspect.signature(client._on_connect).parameters) == _ON_CONNECT
    assert inner.on_connect == client._on_connect
    assert "session_present" in inspect.signature(paho.ConnectFlags).parameters
    # write_without_waking: paho says "bytes to write" through a settable callback that
    # aiomqtt fills, and the client writes, reports and answers as the hook calls it.
    assert isinstance(inspect.getattr_static(paho.Client, "on_socket_register_write"), property)
    assert inner.on_socket_register_write == client._on_socket_register_write
    assert list(inspect.signature(inner.on_socket_register_write).parameters) == [
        "client",
        "userdata",
        "sock",
    ]
    # ... and says "nothing left to write" through another, which the hook takes over too.
    assert isinstance(inspect.getattr_static(paho.Client, "on_socket_unregister_write"), property)
    assert inner.on_socket_unregister_write == client._on_socket_unregister_write
    for name in ("socket", "want_write", "loop_write", "message_callback_add"):
        assert callable(getattr(inner, name)), name
    # on_filter: paho's per-filter callback takes (client, userdata, message).
    assert list(inspect.signature(inner.message_callback_add).parameters) == ["sub", "callback"]
    # batch_socket_io: paho sends and receives through two methods of its own, on `_sock`,
    # and reports a lost connection through `_loop_rc_handle`; aiomqtt closes its reader
    # through on_socket_close.
    for name in ("_sock_send", "_sock_recv", "_loop_rc_handle", "_call_socket_register_write",
                 "loop_read"):  # fmt: skip
        assert callable(getattr(inner, name)), name
    assert "_sock" in vars(inner)
    # ... and its reader's state, the messages awaiting acknowledgement, what it does with an
    # acknowledged one, and the keepalive's clock, for the PUBACKs it is spared decoding.
    assert inner._in_packet["command"] == 0
    assert isinstance(inner._out_messages, dict)
    assert list(inspect.signature(inner._do_on_publish).parameters) == [
        "mid", "reason_code", "properties",
    ]  # fmt: skip
    assert isinstance(inner._last_bytes_received, float)
    with inner._msgtime_mutex:
        pass
    assert list(inspect.signature(inner._sock_send).parameters) == ["buf"]
    assert list(inspect.signature(inner._sock_recv).parameters) == ["bufsize"]
    assert inner.on_socket_close == client._on_socket_close
    # Acknowledgements: paho's publish returns the packet id and whether it went already;
    # aiomqtt's on_publish takes paho's version-2 arguments.
    assert inner.on_publish == client._on_publish
    assert list(inspect.signature(client._on_publish).parameters) == [
        "client", "userdata", "mid", "reason_code", "properties",
    ]  # fmt: skip
    assert {"mid", "rc", "is_published"} <= set(dir(paho.MQTTMessageInfo))
    # Nagle's algorithm goes off through aiomqtt's public keyword, not through a hook.
    assert "socket_options" in inspect.signature(aiomqtt.Client).parameters


async def test_no_delay_is_set_on_the_connection_through_aiomqtt_s_socket_options(
    mosquitto: Mosquitto,
) -> None:
    for no_delay in (False, True):
        async with connected(new_client(_settings(mosquitto), no_delay=no_delay)) as client:
            sock = paho_client(client).socket()
            assert isinstance(sock, socket.socket)
            nodelay = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
            assert bool(nodelay) is no_delay


async def test_the_session_present_flag_of_each_connack_is_kept(mosquitto: Mosquitto) -> None:
    """A persistent session: absent on the first connection, present on the second."""
    seen = []
    for _ in range(2):
        client = new_client(_settings(mosquitto, "kept-session"), clean_session=False)
        connack = record_connack(client)
        async with connected(client):
            seen.append(connack.session_present)
    assert seen == [False, True]


async def test_topics_taken_by_on_filter_reach_its_callback_and_not_the_iterator(
    mosquitto: Mosquitto,
) -> None:
    taken: list[tuple[str, bytes, bool]] = []
    got = asyncio.Event()

    def take(topic: str, payload: bytes, retained: bool) -> None:  # noqa: FBT001 - on_filter's call
        taken.append((topic, payload, retained))
        if len(taken) == 2:  # the two published on the filter's topics
            got.set()

    client = new_client(_settings(mosquitto))
    on_filter(client, "hooks/own/+", take)
    async with connected(client):
        await client.subscribe([("hooks/own/+", 1), ("hooks/other", 1)])
        await client.publish("hooks/own/a", b"mine", qos=1)
        await client.publish("hooks/other", b"theirs", qos=1)
        await client.publish("hooks/own/b", b"mine too", qos=1)
        async with asyncio.timeout(5):
            message = await anext(aiter(client.messages))
            await got.wait()
    assert (str(message.topic), message.payload) == ("hooks/other", b"theirs")
    assert taken == [("hooks/own/a", b"mine", False), ("hooks/own/b", b"mine too", False)]


async def test_a_publish_on_the_loop_s_thread_is_written_without_waking_the_loop(
    mosquitto: Mosquitto, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the hook, aiomqtt asks for the writer through `call_soon_threadsafe` for every
    publish; with it, never while the socket takes the bytes. Both on one real connection
    each, so the test fails the day the hook stops taking effect."""
    loop = asyncio.get_running_loop()
    woken: list[Callable[..., Any]] = []
    threadsafe = loop.call_soon_threadsafe

    def counting(callback: Callable[..., Any], *args: Any, **kwargs: Any) -> asyncio.Handle:
        if getattr(callback, "__name__", "") == "add_writer":
            woken.append(callback)
        return threadsafe(callback, *args, **kwargs)

    monkeypatch.setattr(loop, "call_soon_threadsafe", counting)
    wakes = []
    for hooked in (False, True):
        async with connected(new_client(_settings(mosquitto))) as client:
            if hooked:
                write_without_waking(client)
            woken.clear()
            await asyncio.gather(*(client.publish("hooks/t", b"x", qos=1) for _ in range(20)))
            wakes.append(len(woken))
    assert wakes[0] >= 1
    assert wakes[1] == 0


async def test_a_write_that_a_flush_made_needless_is_cancelled_not_run(
    mosquitto: Mosquitto,
) -> None:
    """Publishes asked paho for a write on the loop's next turn; `Acknowledgements.flush`
    wrote them all at once. The write asked for then has nothing to do: it is cancelled, so
    paho's `loop_write` ran once, not twice; and a publish with no flush after it is still
    written on the next turn."""
    async with connected(new_client(_settings(mosquitto))) as client:
        write_without_waking(client)
        batch_socket_io(client)
        acks = Acknowledgements(client)
        inner = paho_client(client)
        writes = _count_calls(inner, "loop_write")
        mids = [acks.publish("hooks/t", b"x", 1, retain=False) for _ in range(5)]
        acks.flush()
        assert len(writes) == 1
        for _ in range(3):
            await asyncio.sleep(0)
        assert len(writes) == 1
        mids.append(acks.publish("hooks/t", b"unflushed", 1, retain=False))
        async with asyncio.timeout(5):
            await _acknowledged(acks, mids)
        assert len(writes) == 2


class _CountingSocket:
    """paho's socket, its `send` and `recv` calls counted."""

    def __init__(self, sock: Any) -> None:
        self.sock = sock
        self.sends = 0
        self.recvs = 0

    def send(self, data: bytes) -> int:
        self.sends += 1
        return int(self.sock.send(data))

    def recv(self, size: int) -> bytes:
        self.recvs += 1
        return bytes(self.sock.recv(size))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sock, name)


async def _published(infos: list[paho.MQTTMessageInfo]) -> None:
    """Until paho says each was published (QoS 1: its PUBACK came)."""
    async with asyncio.timeout(5):
        while not all(info.is_published() for info in infos):  # noqa: ASYNC110 - paho has no event for it
            await asyncio.sleep(0.01)


async def _acknowledged(acks: Acknowledgements, mids: list[int]) -> None:
    """Until `acks` has taken each of `mids` (each PUBACK counted)."""
    waiting = list(mids)
    while waiting:
        acks.arrived.clear()
        waiting = [mid for mid in waiting if not acks.take(mid)]
        if waiting:
            await acks.arrived.wait()


def _count_calls(inner: paho.Client, name: str) -> list[object]:
    """Each call of the client's method `name` from now on, noted (and made as before)."""
    calls: list[object] = []
    method = getattr(inner, name)

    def counted(*args: object) -> object:
        calls.append(args)
        return method(*args)

    setattr(inner, name, counted)
    return calls


async def test_a_turn_s_publishes_leave_in_one_send_and_their_pubacks_come_in_one_recv(
    mosquitto: Mosquitto,
) -> None:
    """20 publishes made in one turn of the loop; the loop then held until the broker has
    answered all of them. Unhooked, paho sends each and reads each PUBACK in three `recv`,
    decoding each; hooked, one `send` and one `recv` (and the one that finds nothing more),
    and the PUBACKs counted without paho's decoder."""
    counted = []
    loop = asyncio.get_running_loop()
    for hooked in (False, True):
        async with connected(new_client(_settings(mosquitto))) as client:
            write_without_waking(client)
            if hooked:
                batch_socket_io(client)
            inner = paho_client(client)
            counting = _CountingSocket(inner._sock)
            inner._sock = counting  # type: ignore[assignment]
            decoded = _count_calls(inner, "_handle_pubackcomp")
            infos = [inner.publish("hooks/t", b"x", 1) for _ in range(20)]
            loop.call_soon(time.sleep, 0.5)  # after the write, before any read: all PUBACKs in
            await _published(infos)
            counted.append((counting.sends, counting.recvs, len(decoded)))
            inner._sock = counting.sock
    (sends_before, recvs_before, decoded_before), (sends, recvs, decoded_after) = counted
    assert sends_before == 20
    assert recvs_before >= 60
    assert decoded_before == 20
    assert sends == 1
    assert recvs <= 2
    assert decoded_after == 0  # every PUBACK counted past paho's decoder


class _KernelSocketCounting(socket.socket):
    """A kernel socket on paho's descriptor (what the hook reads as one), its `recv` counted."""

    recvs = 0

    def recv(self, size: int, flags: int = 0) -> bytes:
        self.recvs += 1
        return super().recv(size, flags)


async def test_a_read_that_takes_all_the_socket_held_is_the_last_of_its_wake_up(
    mosquitto: Mosquitto,
) -> None:
    """20 PUBACKs waiting in the kernel's buffer: one `recv` takes them all, and none follows
    only to be told there is nothing (an EAGAIN, where the hook used to ask until it got one).
    A PUBACK that comes later wakes the loop again and is read: nothing is left behind."""
    loop = asyncio.get_running_loop()
    async with connected(new_client(_settings(mosquitto))) as client:
        write_without_waking(client)
        batch_socket_io(client)
        inner = paho_client(client)
        sock = inner._sock
        assert isinstance(sock, socket.socket)
        counting = _KernelSocketCounting(fileno=sock.detach())
        inner._sock = counting
        infos = [inner.publish("hooks/t", b"x", 1) for _ in range(20)]
        loop.call_soon(time.sleep, 0.5)  # after the write, before any read: all PUBACKs in
        await _published(infos)
        assert counting.recvs == 1
        await _published([inner.publish("hooks/t", b"later", 1)])
        assert counting.recvs == 2


async def test_over_tls_a_burst_is_read_in_one_wake_up_and_a_big_message_arrives_whole(
    tls_mosquitto: Mosquitto, certificates: Certificates
) -> None:
    """TLS hands a `recv` one record, and the broker sends each PUBACK as its own: 20 of them
    waiting are still read in one wake-up of the loop (not 20: a window refilled a message at
    a time), and a message of several records arrives whole."""
    loop = asyncio.get_running_loop()
    settings = MqttSettings(
        host=tls_mosquitto.host, port=tls_mosquitto.port, node="hooks", client_id="hooks-tls",
        tls=TlsSettings(ca_file=certificates.ca),
    )  # fmt: skip
    payload = bytes(range(256)) * 400  # 100 KiB: seven records at least
    async with connected(new_client(settings)) as client:
        write_without_waking(client)
        batch_socket_io(client)
        inner = paho_client(client)
        wake_ups = _count_calls(inner, "loop_read")
        infos = [inner.publish("hooks/t", b"x", 1) for _ in range(20)]
        loop.call_soon(time.sleep, 0.5)  # after the write, before any read: all PUBACKs in
        await _published(infos)
        assert len(wake_ups) == 1
        await client.subscribe("hooks/big", qos=1)
        await client.publish("hooks/big", payload, qos=1)
        async with asyncio.timeout(5):
            message = await anext(aiter(client.messages))
    assert message.payload == payload


async def test_what_a_raising_callback_left_queued_is_still_sent(mosquitto: Mosquitto) -> None:
    """paho calls back for a QoS 0 message as it writes it; a callback that raises there,
    after paho's queue emptied, cancels nothing that was queued: the QoS 1 message written
    with it still reaches the broker (its PUBACK comes back)."""
    raised: list[bool] = []

    def raising_once() -> None:
        if not raised:
            raised.append(True)
            raise RuntimeError("a callback's bug")

    async with connected(new_client(_settings(mosquitto))) as client:
        write_without_waking(client)
        batch_socket_io(client)
        acks = Acknowledgements(client, on_arrival=raising_once)
        mid = acks.publish("hooks/t", b"durable", 1, retain=False)
        acks.publish("hooks/t", b"at most once", 0, retain=False)
        acks.flush()  # the QoS 0 message's callback raises in here
        assert raised
        async with asyncio.timeout(3):
            await _acknowledged(acks, [mid])


async def test_acknowledgements_count_each_puback_and_leave_aiomqtt_s_own_to_it(
    mosquitto: Mosquitto,
) -> None:
    client = new_client(_settings(mosquitto))
    async with connected(client):
        write_without_waking(client)
        batch_socket_io(client)
        acks = Acknowledgements(client)
        await client.subscribe("hooks/acks", qos=1)
        mids = [acks.publish("hooks/acks", str(i).encode(), 1, retain=False) for i in range(50)]
        async with asyncio.timeout(5):
            await client.publish("hooks/other", b"aiomqtt's own", qos=1)  # its PUBACK reaches it
            await _acknowledged(acks, mids)
            received = [(await anext(aiter(client.messages))).payload for _ in range(50)]
    assert received == [str(i).encode() for i in range(50)]
    assert not acks.take(mids[0])  # taken once: the id is free to be used again


_AIOMQTT_PRIVATE = frozenset({"_client", "_on_connect", "_on_socket_register_write"})
_ROOT = Path(__file__).parents[2]


def _reaching_in(path: Path) -> list[str]:
    """`x._client` and the like, where `x` is not the module's own `self`."""
    return [
        f"{path.relative_to(_ROOT)}:{node.lineno}: .{node.attr}"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute)
        and node.attr in _AIOMQTT_PRIVATE
        and not (isinstance(node.value, ast.Name) and node.value.id == "self")
    ]


def test_no_other_module_of_the_daemon_reaches_into_aiomqtt() -> None:
    hooks = _ROOT / "daemon/mqtt/paho_hooks.py"
    found = [
        where
        for path in sorted((_ROOT / "daemon").rglob("*.py"))
        if path != hooks
        for where in _reaching_in(path)
    ]
    assert found == []
    assert _reaching_in(hooks)  # the walk sees them where they are
