"""The daemon as a child process, started from a TOML file exactly as systemd starts it.

`write_service_config` writes that file (a broker, a journal directory, JSON logs, one
`[[table]]` per table mapping and serial port); `DaemonProcess` runs
`python -m daemon.cli run --config FILE`, kills it with SIGKILL (as a power cut or the OOM
killer would) or stops it with SIGTERM, and always waits for it. An exit nobody asked for
is a crash: `check()` raises `DaemonCrashed`.
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
from typing import TYPE_CHECKING, Any, Final, Protocol

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

    from daemon.numbers.settings import NumbersConfig
    from daemon.request_gate import RequestLimits


class Endpoint(Protocol):
    """Where the daemon finds its broker: a `Mosquitto`, or a proxy in front of one."""

    @property
    def host(self) -> str: ...

    @property
    def port(self) -> int: ...


# What `shoe2mqtt run` is, run by this interpreter from this checkout or installation.
DAEMON_COMMAND: Final = (sys.executable, "-m", "daemon.cli", "run")
_STOP_TIMEOUT: Final = 15.0


class DaemonCrashed(Exception):
    """The daemon exited without being asked to; the message ends with its last log lines."""

    def __init__(self, returncode: int | None, tail: str) -> None:
        super().__init__(f"the daemon exited with {returncode}:\n{tail}")
        self.returncode = returncode
        self.tail = tail


def write_service_config(  # noqa: PLR0913 - keywords only, each a part of the file
    path: Path,
    broker: Endpoint,
    *,
    node: str,
    state_directory: Path,
    tables: Sequence[tuple[Mapping[str, Any], str | Path | tuple[str, int]]],
    reconnect: tuple[float, float] | None = None,
    baudrate: int | None = None,
    protocol: str = "reference",
    sync: str | None = None,
    requests: RequestLimits | None = None,
    contract: int | None = None,
    numbers: NumbersConfig | None = None,
) -> Path:
    """The daemon's TOML: the broker (the daemon named `node` on it), the journal in
    `state_directory` (synced as `sync` says, if given), JSON logs at level info
    (production's: every settlement is logged), and a shoe speaking `protocol` on each serial
    port, or behind each (host, port) of a serial device server (TCP); `reconnect` is the
    link's (initial, maximum) backoff; `requests` the `[requests]` limits, for a console faster
    than a person (daemon.request_gate); `contract` the console contract (`mqtt.contract`);
    `numbers` the `[numbers]` section (its shifts and their time zone)."""
    lines = ["[mqtt]", f"host = {_toml(broker.host)}", f"port = {broker.port}"]
    lines.append(f"node = {_toml(node)}")  # the client id follows: shoe2mqtt-<node>
    if contract is not None:
        lines.append(f"contract = {contract}")
    if reconnect is not None:
        lines.append(f"reconnect = {{ initial = {reconnect[0]}, maximum = {reconnect[1]} }}")
    lines += ["[journal]", f"state_directory = {_toml(state_directory)}"]
    if sync is not None:
        lines.append(f"sync = {_toml(sync)}")
    lines += ["[logging]", 'format = "json"', 'level = "info"']
    if requests is not None:
        lines += ["[requests]", f"rate = {requests.rate}", f"burst = {requests.burst}"]
        lines.append(f"queue = {requests.queue}")
    if numbers is not None:
        lines += ["[numbers]", f"shifts = {_toml(list(numbers.shifts))}"]
        lines.append(f"timezone = {_toml(numbers.timezone)}")
    for mapping, shoe in tables:
        lines += ["[[table]]", *_table_items(mapping, ("table",))]
        if isinstance(shoe, tuple):
            lines += ["[table.shoe]", f"protocol = {_toml(protocol)}", 'transport = "tcp"']
            lines += [f"host = {_toml(shoe[0])}", f"port = {shoe[1]}"]
            continue
        lines += ["[table.shoe]", f"protocol = {_toml(protocol)}", 'transport = "serial"']
        lines.append(f"port = {_toml(shoe)}")
        if baudrate is not None:
            lines.append(f"baudrate = {baudrate}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _table_items(mapping: Mapping[str, Any], prefix: tuple[str, ...]) -> list[str]:
    """A mapping's plain values as `key = value` lines, then each nested one as a table."""
    plain = [f"{k} = {_toml(v)}" for k, v in mapping.items() if not isinstance(v, dict)]
    nested: list[str] = []
    for key, value in mapping.items():
        if isinstance(value, dict):
            nested += [f"[{'.'.join((*prefix, key))}]", *_table_items(value, (*prefix, key))]
    return plain + nested


def _toml(value: object) -> str:
    # JSON's strings, numbers, booleans and lists of them are TOML's too; a path is a string.
    return json.dumps(value if isinstance(value, bool | int | float | str | list) else str(value))


class DaemonProcess:
    """The daemon as a child process; its output (stdout and stderr) goes to `log`."""

    def __init__(self, config: Path, log: Path, *, prefix: Sequence[str] = ()) -> None:
        """`prefix`: a command the daemon runs under, which execs it (so its PID is the
        daemon's), e.g. `setpriv` taking capabilities away."""
        self.config = config
        self.log = log
        self.prefix = tuple(prefix)
        self.starts = 0
        self.kills = 0
        self._process: asyncio.subprocess.Process | None = None

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.returncode is None

    @property
    def pid(self) -> int:
        assert self._process is not None, "the daemon is not running"
        return self._process.pid

    async def start(self, environment: Mapping[str, str] | None = None) -> None:
        """Start it (with `environment` instead of this process's, if given); returns at once."""
        assert self._process is None, "the daemon is already running"
        with self.log.open("ab") as log:
            self._process = await asyncio.create_subprocess_exec(
                *self.prefix, *DAEMON_COMMAND, "--config", str(self.config),
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=environment,
            )  # fmt: skip
        self.starts += 1

    def send_signal(self, signal_number: int) -> None:
        """Signal the running daemon; `stop()` then waits for it."""
        assert self._process is not None, "the daemon is not running"
        self._process.send_signal(signal_number)

    def check(self) -> None:
        """Raise `DaemonCrashed` if the daemon exited by itself."""
        process = self._process
        if process is not None and process.returncode is not None:
            self._process = None
            raise DaemonCrashed(process.returncode, self.tail())

    async def kill(self) -> None:
        """SIGKILL, as a power cut or the OOM killer would, and wait for the corpse."""
        process, self._process = self._process, None
        assert process is not None, "no daemon to kill"
        if process.returncode is not None:
            raise DaemonCrashed(process.returncode, self.tail())
        process.kill()
        await process.wait()
        self.kills += 1

    async def stop(self, grace: float = _STOP_TIMEOUT) -> int | None:
        """SIGTERM and wait (SIGKILL after `grace` seconds); returns the exit code, None if it
        was not running."""
        if self.running:
            self.send_signal(signal.SIGTERM)
        return await self.wait(grace)

    async def wait(self, grace: float = _STOP_TIMEOUT) -> int | None:
        """Wait for the daemon to exit (SIGKILL after `grace` seconds); returns the exit code,
        None if it was not running."""
        process, self._process = self._process, None
        if process is None:
            return None
        try:
            async with asyncio.timeout(grace):
                await process.wait()
        except TimeoutError:
            process.kill()
            await process.wait()
        return process.returncode

    def tail(self, lines: int = 30) -> str:
        if not self.log.exists():
            return ""
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
