"""The relays the benchmarks compare the daemon with: serial frame in, the same bytes out on MQTT.

    python -m bench.e2e.relay MQTT_PORT ENDPOINT [ENDPOINT ...] [--prefix relay]
                              [--durable {full,normal} --file PATH]

ENDPOINT is a serial port (a pty) or `tcp:HOST:PORT` (a serial device server). The same
serial library as the daemon (pyserial-asyncio-fast) or an asyncio connection reads each
port; the same MQTT client (aiomqtt, Nagle off) publishes each frame as-is, QoS 1, to
`<prefix>/<n>` (n: the endpoint's index), in order, without waiting for the PUBACK before
reading on: no decoding, no rules, no journal.

The reference protocol is reliable (docs/protocol.md §1.4): the device sends its next frame
only once the host acknowledged the one before. So the relay does the least a host must: it
greets the device (STATUS_REQUEST) when it opens the line, reads each frame's type and
sequence number from its header, and acknowledges every numbered frame: the bare relay as
soon as it has read it, a durable relay once the frame is written (and synced). A repeat of
the frame it acknowledged last (a resend that crossed its acknowledgement) is acknowledged
again and not published, as the daemon judges a duplicate.

`--durable` makes it the **durable relay**: each frame is written to PATH (on the disk the
daemon's journal uses) before it is published.
- `full`: and made durable with `fdatasync` first, as SQLite's `synchronous = FULL` syncs
  its write-ahead log at each commit. Frames that arrive while a sync runs share the next one
  (group commit, as the daemon's journal does), on one writer thread, so no frame is
  published before a sync that covers it has returned. PATH is filled with zeros and synced
  once at start, then written in place as a ring: a sync then flushes data, never the file's
  size (as SQLite reuses its write-ahead log): the least any durable bridge must pay.
- `normal`: written (to the page cache) but not synced, as SQLite's `synchronous = NORMAL`
  in WAL mode leaves the log unsynced at commit: it survives the process's crash, not a
  power cut. This is what `[journal] sync = "normal"` is compared with.
Prints `ready` once connected, and runs until SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import queue
import signal
import socket
import threading
from typing import TYPE_CHECKING, Final

import aiomqtt
import serial_asyncio_fast

from drivers.codecs import reference

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

FLAG: Final = bytes([reference.FLAG])
ESCAPE: Final = bytes([reference.ESCAPE])
# Frames that carry no number of their own (they say which comes next): never acknowledged.
UNNUMBERED: Final = {reference.MessageType.DEVICE_IDENTITY, reference.MessageType.HEARTBEAT}
RING_BYTES: Final = 16 << 20
MAX_IN_FLIGHT: Final = 32  # QoS 1 publishes awaiting PUBACK, as the daemon's link allows


class DurableLog:
    """Frames written to a file on disk before they are published; see the module's text."""

    def __init__(self, path: Path | str, *, sync: bool) -> None:
        self.sync = sync
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
        os.write(self._fd, bytes(RING_BYTES))
        os.fsync(self._fd)
        self._offset = 0
        self._queue: queue.SimpleQueue[tuple[bytes, asyncio.Future[None]] | None] = (
            queue.SimpleQueue()
        )
        self._thread = threading.Thread(target=self._write_loop, name="durable-log")
        if sync:
            self._thread.start()

    def _put(self, frame: bytes) -> None:
        if self._offset + len(frame) > RING_BYTES:
            self._offset = 0
        os.pwrite(self._fd, frame, self._offset)
        self._offset += len(frame)

    async def write(self, frame: bytes) -> None:
        if not self.sync:
            self._put(frame)
            return
        done = asyncio.get_running_loop().create_future()
        self._queue.put((frame, done))
        await done

    def _write_loop(self) -> None:
        while True:
            item = self._queue.get()
            batch = [item]
            while not self._queue.empty():
                batch.append(self._queue.get())
            waiting = [entry for entry in batch if entry is not None]
            for frame, _done in waiting:
                self._put(frame)
            if waiting:
                os.fdatasync(self._fd)
            for _frame, done in waiting:
                done.get_loop().call_soon_threadsafe(_resolve, done)
            if None in batch:
                return

    def close(self) -> None:
        if self.sync:
            self._queue.put(None)
            self._thread.join()
        os.close(self._fd)


def frame_header(frame: bytes) -> tuple[int, int] | None:
    """(type, seq) of a stuffed frame ending in FLAG; None if too short to have them."""
    body = frame.rstrip(FLAG).lstrip(FLAG)
    if ESCAPE in body:  # rare: unstuff (a byte after ESCAPE is sent XOR ESCAPE_XOR)
        raw = bytearray()
        escaped = False
        for byte in body:
            if escaped:
                raw.append(byte ^ reference.ESCAPE_XOR)
                escaped = False
            elif byte == reference.ESCAPE:
                escaped = True
            else:
                raw.append(byte)
        body = bytes(raw)
    if len(body) < reference.HEADER_SIZE:
        return None
    return body[1], int.from_bytes(body[2:4], "big")


def _resolve(done: asyncio.Future[None]) -> None:
    if not done.done():
        done.set_result(None)


async def open_endpoint(endpoint: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """The port's reader, and its writer, which must be kept: collected, it closes the port."""
    if endpoint.startswith("tcp:"):
        host, port = endpoint.removeprefix("tcp:").rsplit(":", 1)
        return await asyncio.open_connection(host, int(port))
    return await serial_asyncio_fast.open_serial_connection(url=endpoint, baudrate=115200)


class Forwarder:
    """Frames of every endpoint to MQTT, each endpoint's in order; see the module's text."""

    def __init__(self, client: aiomqtt.Client, prefix: str, durable: DurableLog | None) -> None:
        self.client = client
        self.prefix = prefix
        self.durable = durable
        self.publishing: set[asyncio.Task[None]] = set()

    async def _publish(
        self, topic: str, frame: bytes, acknowledge: Callable[[], None] | None
    ) -> None:
        if self.durable is not None:
            await self.durable.write(frame)
        if acknowledge is not None:
            acknowledge()
        await self.client.publish(topic, frame, qos=1)

    async def forward(self, index: int, endpoint: str) -> None:
        reader, writer = await open_endpoint(endpoint)
        host = reference.HostLink()
        writer.write(host.greeting())
        topic = f"{self.prefix}/{index}"
        last_seq: int | None = None
        while True:
            frame = await reader.readuntil(FLAG)
            header = frame_header(frame)
            if header is None:  # an opening flag alone is not a frame
                continue
            kind, seq = header
            acknowledge: Callable[[], None] | None = None
            if kind not in UNNUMBERED:
                if seq == last_seq:  # a resend of what it holds: acknowledged again
                    writer.write(host.acknowledgement(seq))
                    continue
                last_seq = seq
                acknowledge = functools.partial(writer.write, host.acknowledgement(seq))
                if self.durable is None:  # nothing to make durable: acknowledged on receipt
                    acknowledge()
                    acknowledge = None
            # A task per frame, started in arrival order: the writes queue in that order,
            # their syncs resolve in that order, so frames are acknowledged and published in
            # that order, and the next frame is read while this one syncs (its sync may share
            # ours).
            task = asyncio.create_task(self._publish(topic, frame, acknowledge))
            self.publishing.add(task)
            task.add_done_callback(self.publishing.discard)


async def relay(port: int, endpoints: list[str], prefix: str, durable: DurableLog | None) -> None:
    client = aiomqtt.Client(
        "127.0.0.1", port, identifier=f"bench-{prefix}", max_inflight_messages=MAX_IN_FLIGHT
    )
    async with client:
        sock = client._client.socket()  # noqa: SLF001 - Nagle off, as the daemon's link does
        assert isinstance(sock, socket.socket)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        client.pending_calls_threshold = 10_000  # frames of every port in flight at once
        forwarder = Forwarder(client, prefix, durable)
        stop = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
        tasks = [asyncio.create_task(forwarder.forward(i, e)) for i, e in enumerate(endpoints)]
        print("ready", flush=True)
        await stop.wait()
        for task in [*tasks, *forwarder.publishing]:
            task.cancel()
        await asyncio.gather(*tasks, *forwarder.publishing, return_exceptions=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mqtt_port", type=int)
    parser.add_argument("endpoints", nargs="+")
    parser.add_argument("--prefix", default="relay")
    parser.add_argument("--durable", choices=["full", "normal"])
    parser.add_argument("--file", help="where a durable relay writes its frames")
    args = parser.parse_args()
    if args.durable is not None and args.file is None:
        parser.error("--durable needs --file")
    durable = None if args.durable is None else DurableLog(args.file, sync=args.durable == "full")
    try:
        asyncio.run(relay(args.mqtt_port, args.endpoints, args.prefix, durable))
    finally:
        if durable is not None:
            durable.close()


if __name__ == "__main__":
    main()
