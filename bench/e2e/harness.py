"""What every end-to-end benchmark shares: a broker, the daemon as a process, shoes, players.

The broker and the daemon's process are `daemon.testing`'s, as the tests use them:
- `bench_broker`: mosquitto on a free 127.0.0.1 port, tuned as docs/performance.md says.
- `ReadyDaemon`: the real `shoe2mqtt run --config ...` in its own process, exactly as
  systemd starts it (a TOML file, JSON log lines on stdout, `NOTIFY_SOCKET` for READY=1),
  with its journal in a temporary state directory on the same disk as production would use.
  Its CPU time and resident memory are read from /proc. `serving` starts it for a `Pit`.
- `TimedShoe`: an emulated shoe on a pty that notes CLOCK_MONOTONIC just before it writes
  each card; the subscriber in this same process notes the same clock at each receipt.
- `Pit`: the players of every table (`daemon.simulator.ConsoleSimulator`, the demo's dealer
  and players): wagers and actions travel as requests over MQTT, and each step waits for the
  daemon's round snapshot before the next, so a table is driven as fast as the daemon
  answers and no faster (closed loop, full dealing speed).

A settlement's latency is the receipt time minus the write time of the last card written on
its table, counted only when that card is the table's latest step (not a request).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import aiomqtt

from daemon.request_gate import AUTOMATED_CONSOLE
from daemon.simulator import ConsoleSimulator, TableLog
from daemon.simulator.tables import DEMO_TABLES, demo_shoe
from daemon.testing import DaemonProcess, Mosquitto, write_service_config
from daemon.wire.topics import Topics
from drivers.emulator import EmulatedShoe, EmulatorSettings
from rules.config import TableConfig

if TYPE_CHECKING:
    import argparse
    from collections.abc import AsyncIterator, Iterator, Sequence

    from daemon.numbers.settings import NumbersConfig
    from drivers.emulator.core import Dealt
    from rules.games import Game

BASE: Final = "shoe2mqtt"
STEP_TIMEOUT: Final = 30.0
BAUDRATE: Final = 115200


def machine() -> str:
    model = "unknown CPU"
    with contextlib.suppress(OSError), Path("/proc/cpuinfo").open() as info:
        for line in info:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    pressure = ""  # the share of time something waited for a CPU (Linux PSI), if known
    with contextlib.suppress(OSError, ValueError, IndexError):
        some = Path("/proc/pressure/cpu").read_text().split("\n")[0].split()
        pressure = f", CPU pressure {some[2].partition('=')[2]} % (60 s)"
    return (
        f"{os.cpu_count()} CPUs ({model}), {platform.python_implementation()} "
        f"{platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M')}, load average {load}"
        f"{pressure}"
    )


def add_nice_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--nice", type=int, default=0,
        help="change this process's priority (and its children's) by this much first; on a "
        "machine shared with other work, a negative value (as root) measures the software "
        "rather than its neighbours",
    )  # fmt: skip


def apply_nice(change: int) -> None:
    if change:
        os.nice(change)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def describe_ms(values: list[float]) -> str:
    if not values:
        return "no samples"
    return (
        f"p50 {percentile(values, 0.5) * 1e3:.2f} ms, p99 {percentile(values, 0.99) * 1e3:.2f} ms, "
        f"max {max(values) * 1e3:.2f} ms over {len(values):,}"
    )


# ---------------------------------------------------------------- the broker
def bench_broker(directory: Path) -> Mosquitto:
    """A broker on a free loopback port (`with bench_broker(d) as broker:`)."""
    return Mosquitto(
        directory / "mosquitto",
        log_all=False,
        options=[
            # A subscriber that falls behind must not lose QoS 1 messages to the default limits.
            "max_queued_messages 0",
            "max_inflight_messages 0",
            # Nagle off on the broker's side too: what a site should set (docs/performance.md).
            "set_tcp_nodelay true",
        ],
    )


# ---------------------------------------------------------------- READY=1
class NotifyListener:
    """systemd's end of NOTIFY_SOCKET: notes CLOCK_MONOTONIC when READY=1 arrives."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.ready_at: float | None = None
        self._ready = threading.Event()
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._sock.bind(str(path))
        self._sock.settimeout(0.1)
        self._closing = False
        self._thread = threading.Thread(target=self._read, name="notify-listener", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        while not self._closing:
            try:
                data = self._sock.recv(4096)
            except TimeoutError:
                continue
            if b"READY=1" in data.split(b"\n") and self.ready_at is None:
                self.ready_at = time.monotonic()
                self._ready.set()

    def wait_ready(self, timeout: float) -> float:
        if not self._ready.wait(timeout):
            raise RuntimeError(f"no READY=1 within {timeout:.0f} s")
        assert self.ready_at is not None
        return self.ready_at

    def close(self) -> None:
        self._closing = True
        self._thread.join()
        self._sock.close()


# ---------------------------------------------------------------- the daemon
def table_mapping(game: Game, table_id: str) -> dict[str, Any]:
    mapping = dict(DEMO_TABLES[game])
    mapping["id"] = table_id
    return mapping


def write_config(
    directory: Path,
    broker: Mosquitto,
    tables: Sequence[tuple[dict[str, Any], str | tuple[str, int]]],
    *,
    sync: str | None = "full",
    automated: bool = True,
    contract: int | None = None,
    numbers: NumbersConfig | None = None,
) -> Path:
    """The daemon's TOML in `directory` (its journal in `state` there, `[journal] sync` as
    given, None: the daemon's default): one `[[table]]` per (table mapping, serial port or
    (host, port) of a serial device server). `automated`: the players are programs as fast as
    the daemon (`AUTOMATED_CONSOLE` request limits); else a real table's defaults. `contract`:
    the console contract (`mqtt.contract`; None: the daemon's default). `numbers`: the
    shifts (`[numbers]`; None: the daemon's default)."""
    return write_service_config(
        directory / "shoe2mqtt.toml", broker, node="bench",
        state_directory=directory / "state", tables=tables, baudrate=BAUDRATE, sync=sync,
        requests=AUTOMATED_CONSOLE if automated else None, contract=contract, numbers=numbers,
    )  # fmt: skip


def cpu_seconds(pid: int, thread: int | None = None) -> float:
    """User and system CPU time the process has used (/proc/<pid>/stat), or one of its
    threads (/proc/<pid>/task/<thread>/stat; the main thread's id is the process's)."""
    where = f"/proc/{pid}" if thread is None else f"/proc/{pid}/task/{thread}"
    fields = Path(f"{where}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def rss_mib(pid: int) -> float:
    """The process's resident memory (/proc/<pid>/status)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


# Another tree's daemon (a checkout of an earlier commit) under today's bench: a before and
# after measured by the same load and the same baselines (`--daemon-tree`).
_daemon_tree: list[Path] = []


def run_daemons_from(tree: Path | None) -> None:
    """Every `ReadyDaemon` started from now on runs the daemon of `tree` (its `daemon`,
    `drivers` and `rules` packages first on the path), or this checkout's with None."""
    _daemon_tree[:] = [tree.resolve()] if tree else []


def add_daemon_tree_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--daemon-tree", type=Path, metavar="DIR",
        help="run the daemon of another checkout (e.g. `git worktree add /tmp/before REV`), "
        "with this checkout's bench, load and baselines: a before and after",
    )  # fmt: skip


class ReadyDaemon:
    """`shoe2mqtt run` as systemd starts it; `start()` returns once it said READY=1."""

    def __init__(self, config: Path, directory: Path) -> None:
        # `env` execs the daemon: its PID stays the one the bench measures. PYTHONSAFEPATH:
        # `python -m` would otherwise put the working directory, this checkout, first.
        tree = _daemon_tree[0] if _daemon_tree else None
        prefix = ("env", f"PYTHONPATH={tree}", "PYTHONSAFEPATH=1") if tree else ()
        self.process = DaemonProcess(config, directory / "daemon.log", prefix=prefix)
        self.directory = directory
        self._listener: NotifyListener | None = None

    async def start(self, within: float = 120.0) -> float:
        """Start it and wait for READY=1; returns the seconds that took."""
        # A socket's path has at most 107 bytes: not in the workspace, which may be deep.
        socket_path = (
            Path(tempfile.gettempdir()) / f"s2m-notify-{os.getpid()}-{time.monotonic_ns()}"
        )
        self._listener = NotifyListener(socket_path)
        environment = {**os.environ, "NOTIFY_SOCKET": str(socket_path)}
        environment.pop("WATCHDOG_USEC", None)
        # As installed (scripts/install compiles bytecode): no start compiles every module.
        environment.pop("PYTHONDONTWRITEBYTECODE", None)
        started = time.monotonic()
        await self.process.start(environment)
        while True:  # a second at a time: a daemon that exits (a refused file) fails at once
            try:
                ready = await asyncio.to_thread(self._listener.wait_ready, 1.0)
            except RuntimeError as exc:
                if self.process.running and time.monotonic() - started < within:
                    continue
                said = self.process.tail(5)
                await self.stop()
                message = f"the daemon did not start ({self.process.log}):\n{said}"
                raise RuntimeError(message) from exc
            return ready - started

    def cpu_seconds(self) -> float:
        return cpu_seconds(self.process.pid)

    def rss_mib(self) -> float:
        return rss_mib(self.process.pid)

    async def stop(self) -> None:
        await self.process.stop(grace=60)  # a large journal or many tables take a while
        if self._listener is not None:
            self._listener.close()
            self._listener.path.unlink(missing_ok=True)
            self._listener = None


# ---------------------------------------------------------------- shoes and players
class TimedShoe(EmulatedShoe):
    """An emulated shoe that notes when it wrote each card (CLOCK_MONOTONIC)."""

    def __init__(self, settings: EmulatorSettings) -> None:
        super().__init__(settings)
        self.last_card_at = 0.0
        self.cards = 0

    async def next_card(self) -> Dealt | None:
        self.last_card_at = time.monotonic()
        self.cards += 1
        return await super().next_card()


class TimedSimulator(ConsoleSimulator):
    """The demo's dealer and players, noting when each request leaves."""

    last_request_at: float = 0.0

    async def request(self, command: str, body: dict[str, Any]) -> str:
        self.last_request_at = time.monotonic()
        return await super().request(command, body)


@dataclass(slots=True)
class Pit:
    """Tables, their shoes and players, and the subscriber that times each settlement."""

    games: list[Game]
    seed: int = 1
    shoes: dict[str, TimedShoe] = field(default_factory=dict)
    simulators: dict[str, TimedSimulator] = field(default_factory=dict)
    logs: dict[str, TableLog] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    settlements: int = 0
    messages: int = 0
    measuring: bool = False
    client: aiomqtt.Client | None = None

    def table_ids(self) -> list[str]:
        counts: dict[Game, int] = {}
        ids = []
        for game in self.games:
            counts[game] = counts.get(game, 0) + 1
            ids.append(f"{DEMO_TABLES[game]['id']}-{counts[game]}")
        return ids

    @contextlib.asynccontextmanager
    async def opened(self) -> AsyncIterator[Pit]:
        async with contextlib.AsyncExitStack() as stack:
            for index, (game, table_id) in enumerate(
                zip(self.games, self.table_ids(), strict=True)
            ):
                shoe = TimedShoe(demo_shoe(game, self.seed * 1000 + index))
                self.shoes[table_id] = await stack.enter_async_context(shoe)
            yield self

    def config_tables(self) -> list[tuple[dict[str, Any], str]]:
        return [
            (table_mapping(game, table_id), self.shoes[table_id].path)
            for game, table_id in zip(self.games, self.table_ids(), strict=True)
        ]

    async def play(self, port: int, *, settlements: int, seconds: float) -> float:
        """Play until `settlements` were received or `seconds` passed; returns the seconds."""
        import random

        topics = Topics(BASE)
        rng = random.Random(self.seed)  # noqa: S311 - players' choices, not a secret
        for game, table_id in zip(self.games, self.table_ids(), strict=True):
            self.logs[table_id] = TableLog(topics, table_id, self.send)
            self.simulators[table_id] = TimedSimulator(
                TableConfig.from_mapping(table_mapping(game, table_id)),
                self.shoes[table_id],
                self.logs[table_id],
                random.Random(rng.random()),  # noqa: S311 - players' choices, not a secret
            )
        done = asyncio.Event()
        async with aiomqtt.Client("127.0.0.1", port, identifier="bench-pit") as client:
            self.client = client
            no_delay(client)
            client.pending_calls_threshold = 1000  # every table's players share this client
            await client.subscribe(f"{BASE}/#", qos=1)
            for shoe in self.shoes.values():
                await asyncio.wait_for(shoe.wait_for_host(), STEP_TIMEOUT)
            listener = asyncio.create_task(self._listen(client, settlements, done))
            players = [
                asyncio.create_task(s.run(None), name=f"player:{t}")
                for t, s in self.simulators.items()
            ]
            began = time.monotonic()
            self.measuring = True
            waiting = asyncio.create_task(done.wait())
            await asyncio.wait([waiting, *players], timeout=seconds, return_when="FIRST_COMPLETED")
            elapsed = time.monotonic() - began
            self.measuring = False
            for task in (waiting, listener, *players):
                task.cancel()
            results = await asyncio.gather(waiting, listener, *players, return_exceptions=True)
            for result in results:
                if isinstance(result, Exception):
                    raise result
        return elapsed

    async def _listen(self, client: aiomqtt.Client, target: int, done: asyncio.Event) -> None:
        prefix = len(BASE) + 1
        async for now, topic, payload in receipts(client):
            table_id, _, rest = topic[prefix:].partition("/")
            simulator = self.simulators.get(table_id)
            if simulator is None:
                continue
            self.messages += 1
            if rest == "settlement" and self.measuring:
                self.settlements += 1
                shoe = self.shoes[table_id]
                if shoe.last_card_at > simulator.last_request_at:
                    self.latencies.append(now - shoe.last_card_at)
                if self.settlements >= target:
                    done.set()
            self.logs[table_id].take(topic, payload)

    async def send(self, topic: str, payload: str) -> None:
        """A player's request, through the pit's one client."""
        assert self.client is not None, "the players send only while the pit plays"
        await self.client.publish(topic, payload, qos=1)

    def cards(self) -> int:
        return sum(shoe.cards for shoe in self.shoes.values())


@contextlib.asynccontextmanager
async def serving(
    pit: Pit, directory: Path, broker: Mosquitto, *, sync: str = "full"
) -> AsyncIterator[ReadyDaemon]:
    """The pit's shoes, and the daemon reading them (started until READY=1, stopped after)."""
    async with pit.opened():
        config = write_config(directory, broker, pit.config_tables(), sync=sync)
        daemon = ReadyDaemon(config, directory)
        await daemon.start()
        try:
            yield daemon
        finally:
            await daemon.stop()


@contextlib.contextmanager
def py_spy_profile(py_spy: str | None, out: Path, pid: int) -> Iterator[None]:
    """While the block runs, py-spy (`py_spy`: a throwaway venv's, or None for no profile)
    samples process `pid`'s CPU (idle not sampled) into `out` as collapsed stacks."""
    if py_spy is None:
        yield
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    spy = subprocess.Popen(  # noqa: S603 - the caller's py-spy, our own daemon's pid
        [py_spy, "record", "--pid", str(pid), "--rate", "250", "--format", "raw",
         "--output", str(out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        yield
    finally:
        spy.send_signal(signal.SIGINT)  # py-spy writes what it sampled and exits
        with contextlib.suppress(subprocess.TimeoutExpired):
            spy.wait(30)
        print(f"profile: {out}")


async def receipts(client: aiomqtt.Client) -> AsyncIterator[tuple[float, str, bytes]]:
    """Each message the client receives: (CLOCK_MONOTONIC at its receipt, topic, payload)."""
    async for message in client.messages:
        now = time.monotonic()
        payload = message.payload
        assert isinstance(payload, bytes)
        yield now, message.topic.value, payload


def no_delay(client: aiomqtt.Client) -> None:
    """Nagle off on a bench client's connection, as the daemon's link does."""
    sock = client._client.socket()  # noqa: SLF001 - aiomqtt does not expose paho's socket
    if isinstance(sock, socket.socket):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


@contextlib.contextmanager
def workspace() -> Iterator[Path]:
    """A temporary directory on the disk the journal would use in production (not tmpfs);
    kept after a failure when BENCH_KEEP is set."""
    root = Path(os.environ.get("BENCH_DIR", Path.cwd() / ".cache"))
    root.mkdir(parents=True, exist_ok=True)
    directory = Path(tempfile.mkdtemp(prefix="shoe2mqtt-bench-", dir=root))
    try:
        yield directory
    except BaseException:
        if os.environ.get("BENCH_KEEP"):  # the daemon's and the broker's logs, to read
            print(f"kept {directory}", file=sys.stderr)
            raise
        shutil.rmtree(directory)
        raise
    shutil.rmtree(directory)
