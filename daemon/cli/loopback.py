"""The loopback address and a free port on it, for a server a command starts for itself.

The demo's embedded broker and its pit display listen here on a port the kernel picked;
daemon.testing (development-only) takes the same two for its brokers, proxies and device
servers, so the repository has one of each.
"""

from __future__ import annotations

import socket
from typing import Final

LOOPBACK: Final = "127.0.0.1"


def free_port(host: str = LOOPBACK) -> int:
    """A TCP port nothing listens on now (the kernel's choice for a bind to port 0).

    Free when asked, not reserved: a server started on it soon after gets it, as the demo's
    and the tests' do; another process could take it in between, which costs a retry.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        port: int = probe.getsockname()[1]
        return port
