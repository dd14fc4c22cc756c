"""The systemd notify protocol (sd_notify(3)): readiness, status, and the watchdog.

Under `Type=notify` systemd passes `$NOTIFY_SOCKET`, an AF_UNIX datagram socket (in the
abstract namespace when the name starts with `@`), and waits for `READY=1` on it; with
`WatchdogSec=` it also passes `$WATCHDOG_USEC` and kills the service when `WATCHDOG=1` stops
arriving. The protocol is one datagram of `KEY=VALUE` lines, so it is implemented here in a
few lines rather than by linking libsystemd or shelling out to systemd-notify (which would
send from another PID, one that `NotifyAccess=main` rightly ignores).

Two promises to the daemon:
- a send never blocks the event loop: the socket is non-blocking, and a full queue drops the
  message (systemd's own sd_notify does the same);
- a send never raises: the daemon's work is the table, not systemd; a failure is logged once
  when it starts and once when it ends, not on every watchdog ping in between.

Outside systemd (`$NOTIFY_SOCKET` unset) every method is a no-op, so the daemon calls them
unconditionally. The status text is shown by `systemctl status` to anyone on the PC, so it
must never carry an unrevealed card: counts and states only.
"""

from __future__ import annotations

import asyncio
import os
import socket
import time
from typing import TYPE_CHECKING, Final

import structlog

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

log = structlog.get_logger("notify")

# The watchdog is pinged at this fraction of its interval, as sd_watchdog_enabled(3) advises:
# one late ping (a slow GC, a busy CPU) must not be fatal, a stuck loop must.
WATCHDOG_PING_FRACTION: Final = 0.5
# While it starts (the journal opened, upgraded, replayed), the daemon asks systemd for this
# much more time at every third of it: TimeoutStartSec= then bounds a stuck start, not a long
# one. Sent from the event loop, so a start that hangs stops asking and is killed.
START_EXTENSION: Final = 30.0


class Notifier:
    """Sends sd_notify messages to one socket address; a no-op without an address."""

    def __init__(self, address: str | None = None, *, watchdog_usec: int | None = None) -> None:
        """`address` is $NOTIFY_SOCKET's value; `watchdog_usec` the interval for this process."""
        self._address = _socket_address(address) if address else None
        self._watchdog_usec = watchdog_usec if watchdog_usec and watchdog_usec > 0 else None
        self._failing = False
        self._ready = False

    @classmethod
    def from_environment(
        cls, environ: Mapping[str, str] | None = None, *, pid: int | None = None
    ) -> Notifier:
        """The notifier systemd set up for this process, or a no-op one outside systemd."""
        env = os.environ if environ is None else environ
        address = env.get("NOTIFY_SOCKET") or None
        if address is not None and not address.startswith(("/", "@")):
            # Newer systemd may pass vsock: addresses (VMs); a table PC never needs them.
            log.warning("systemd.notify_socket_invalid", address=address, hint="notifications off")
            address = None
        return cls(address, watchdog_usec=_watchdog_usec(env, os.getpid() if pid is None else pid))

    @property
    def enabled(self) -> bool:
        return self._address is not None

    def watchdog_interval(self) -> float | None:
        """The watchdog timeout in seconds, or None when systemd runs no watchdog for us."""
        if self._address is None or self._watchdog_usec is None:
            return None
        return self._watchdog_usec / 1_000_000

    def ready(self, status: str | None = None) -> None:
        """Startup is complete: configuration loaded, journal replayed, broker connected."""
        self._ready = True
        self.notify("READY=1", *_status_line(status))

    def status(self, text: str) -> None:
        """One line that `systemctl status` shows: what the daemon is doing right now."""
        self.notify(*_status_line(text))

    def extend_start(self, seconds: float, status: str | None = None) -> None:
        """Before READY=1: systemd waits at least `seconds` more from now, and shows why."""
        if not self._ready:
            self.notify(f"EXTEND_TIMEOUT_USEC={int(seconds * 1_000_000)}", *_status_line(status))

    async def keep_starting(self, status: Callable[[], str]) -> None:
        """Until cancelled: extend the start timeout (START_EXTENSION) and say what the
        daemon is doing (`status()`), every third of the extension."""
        if self._address is None:
            return
        while True:
            self.extend_start(START_EXTENSION, status())
            await asyncio.sleep(START_EXTENSION / 3)

    def stopping(self, status: str | None = None) -> None:
        """Shutdown has begun; systemd shows `deactivating` instead of a failure."""
        self.notify("STOPPING=1", *_status_line(status))

    def reloading(self) -> None:
        """A reload has begun; follow it with `ready()` when the new configuration applies.

        MONOTONIC_USEC is what `Type=notify-reload` (systemd 253) needs to tell this reload
        from an earlier one; older systemd ignores the field.
        """
        now_usec = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
        self.notify("RELOADING=1", f"MONOTONIC_USEC={now_usec}")

    def watchdog(self) -> None:
        """One keep-alive ping; `watchdog_loop` sends them on time.

        Before READY=1 systemd also runs TimeoutStartSec=, and a daemon waiting for a broker
        that is away at boot is alive, not stuck (it reads the shoe and journals meanwhile).
        So until `ready()` each ping pushes the start timeout one watchdog interval ahead: a
        live loop keeps the start going as long as the broker takes, a hung one runs out.
        """
        if self._ready or self._watchdog_usec is None:
            self.notify("WATCHDOG=1")
        else:
            self.notify("WATCHDOG=1", f"EXTEND_TIMEOUT_USEC={self._watchdog_usec}")

    async def watchdog_loop(self) -> None:
        """Ping at half the interval, from the event loop itself, until cancelled.

        Sent by a task on the daemon's own loop on purpose: if anything blocks the loop, the
        pings stop, and systemd kills and restarts a process that would otherwise look alive
        while no shoe is read and nothing is published. Returns at once without a watchdog.
        """
        interval = self.watchdog_interval()
        if interval is None:
            return
        period = interval * WATCHDOG_PING_FRACTION
        while True:
            self.watchdog()
            await asyncio.sleep(period)

    def notify(self, *lines: str) -> None:
        """Send `lines` (each `KEY=VALUE`) as one datagram; log, never raise, on failure."""
        if self._address is None or not lines:
            return
        message = "\n".join(lines).encode()
        try:
            # A socket per message, as sd_notify does: nothing to close, nothing to inherit.
            with socket.socket(
                socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_NONBLOCK | socket.SOCK_CLOEXEC
            ) as sock:
                sock.sendto(message, self._address)
        except OSError as exc:
            if not self._failing:
                self._failing = True
                log.warning(
                    "systemd.notify_failed",
                    error=exc.strerror or str(exc),
                    message=lines[0],
                )
            return
        if self._failing:
            self._failing = False
            log.info("systemd.notify_resumed")


def _socket_address(name: str) -> str | bytes:
    # '@' stands for the leading NUL of a Linux abstract socket name (unix(7)).
    return b"\0" + name[1:].encode() if name.startswith("@") else name


def _watchdog_usec(env: Mapping[str, str], pid: int) -> int | None:
    """$WATCHDOG_USEC if it is meant for `pid`, as sd_watchdog_enabled(3) decides."""
    try:
        usec = int(env.get("WATCHDOG_USEC", ""))
    except ValueError:
        return None
    watchdog_pid = env.get("WATCHDOG_PID")
    if watchdog_pid is not None and watchdog_pid != str(pid):
        return None  # inherited from a parent that systemd watches, not us
    return usec if usec > 0 else None


def _status_line(text: str | None) -> tuple[str, ...]:
    # One datagram line per field: a newline in the text would start a bogus field.
    return () if text is None else (f"STATUS={' '.join(text.splitlines())}",)
