"""The bare relay the latency benchmark compares the daemon with.

    python -m bench.e2e.relay MQTT_PORT PTY [PTY ...]

The same serial library (pyserial-asyncio-fast) reads each port, the same MQTT client
(aiomqtt) publishes each frame as-is, QoS 1, to `relay/<n>`, each port awaiting the PUBACK
of its frame before it reads the next: no decoding, no rules, no journal. Prints `ready`
once connected, and runs until SIGTERM.
"""

from __future__ import annotations

import asyncio
import signal
import socket
import sys

import aiomqtt
import serial_asyncio_fast

FLAG = b"\x7e"  # the reference protocol's frame delimiter


async def relay(port: int, paths: list[str]) -> None:
    async with aiomqtt.Client("127.0.0.1", port, identifier="bench-relay") as client:
        sock = client._client.socket()  # noqa: SLF001 - Nagle off, as the daemon's link does
        assert isinstance(sock, socket.socket)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        async def forward(index: int, path: str) -> None:
            reader, _writer = await serial_asyncio_fast.open_serial_connection(
                url=path, baudrate=115200
            )
            while True:
                frame = await reader.readuntil(FLAG)
                if len(frame) > 1:  # an opening flag alone is not a frame
                    await client.publish(f"relay/{index}", frame, qos=1)

        stop = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
        tasks = [asyncio.create_task(forward(i, p)) for i, p in enumerate(paths)]
        print("ready", flush=True)
        await stop.wait()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


if __name__ == "__main__":
    asyncio.run(relay(int(sys.argv[1]), sys.argv[2:]))
