"""systemd's end of $NOTIFY_SOCKET, for the deployment tests: what a daemon tells systemd.

A listener thread stamps each datagram with time.monotonic() the moment it arrives, so the
gaps between watchdog pings are measured outside the event loop that sends them.
"""

from __future__ import annotations

import socket
import threading
import time


class Listener:
    """systemd's end of NOTIFY_SOCKET: a bound datagram socket read by a thread."""

    def __init__(self, address: str) -> None:
        self.address = address  # as $NOTIFY_SOCKET spells it
        self.received: list[tuple[float, dict[str, str]]] = []
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._sock.bind(b"\0" + address[1:].encode() if address.startswith("@") else address)
        self._sock.settimeout(0.02)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, name="notify-listener")
        self._thread.start()

    def _read(self) -> None:
        while not self._stop.is_set():
            try:
                data = self._sock.recv(4096)
            except TimeoutError:
                continue
            fields = dict(line.split("=", 1) for line in data.decode().split("\n"))
            self.received.append((time.monotonic(), fields))

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self._sock.close()

    def times_of(self, key: str) -> list[float]:
        return [at for at, fields in self.received if key in fields]

    def messages(self) -> list[dict[str, str]]:
        return [fields for _, fields in self.received]
