"""Hundreds of tables in one daemon: start to READY=1, CPU at rest and dealing, SIGTERM to exit.

    uv run python -m bench.e2e.tables [--tables 256] [--shoes tcp|absent] [--seconds 10]
                                      [--profile DIR --py-spy PATH]

Each table is a blackjack table whose shoe is behind a TCP port on 127.0.0.1, as a serial
device server delivers it (`daemon.testing.DeviceServers`, `--shoes tcp`), or a serial port
that does not exist, so that every driver keeps retrying (`--shoes absent`: the link events
of a site whose readers are all unplugged). The real daemon runs as systemd runs it, with a
fresh journal on disk. Printed:

- start to READY=1, and to every shoe connected (tcp);
- the daemon's CPU over `--seconds` at rest, then while every table deals a card a second;
- SIGTERM to exit at five moments: at rest, as a start begins replaying the journal, at
  READY=1, while dealing, and as every shoe's link has just dropped (a burst of link
  events); goal 1 s each.

`--profile DIR` records the daemon with py-spy (`--py-spy`, a throwaway venv's) from start
to stop, CPU only (idle not sampled), as collapsed stacks (`--format raw`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import time
from pathlib import Path
from typing import TYPE_CHECKING

from bench.e2e.harness import (
    ReadyDaemon,
    bench_broker,
    machine,
    py_spy_profile,
    table_mapping,
    workspace,
)
from daemon.configuration.service_config import MAX_TABLES
from daemon.testing import DaemonProcess, DeviceServers, write_service_config
from rules.games import Game

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from daemon.testing import Mosquitto


def write_tables_config(
    directory: Path, broker: Mosquitto, count: int, ports: list[int] | None
) -> Path:
    tables = [
        (
            table_mapping(Game.BLACKJACK, f"bj-{i}"),
            ("127.0.0.1", ports[i]) if ports is not None else f"/dev/shoe2mqtt-absent-{i}",
        )
        for i in range(count)
    ]
    return write_service_config(
        directory / "shoe2mqtt.toml", broker, node="bench", state_directory=directory / "state",
        tables=tables,
    )  # fmt: skip


async def stop_time(daemon: ReadyDaemon) -> float:
    """SIGTERM now; seconds until the process has exited."""
    began = time.monotonic()
    await daemon.stop()
    return time.monotonic() - began


async def stop_while_replaying(config: Path, directory: Path) -> float:
    """SIGTERM as soon as the daemon says it is starting (the journal is being replayed, the
    broker not yet met); seconds until it has exited."""
    daemon = DaemonProcess(config, directory / "replaying.log")
    await daemon.start()
    while b"daemon.starting" not in daemon.log.read_bytes():  # noqa: ASYNC110 - a log gives no signal
        await asyncio.sleep(0.005)
    began = time.monotonic()
    await daemon.stop()
    return time.monotonic() - began


@contextlib.asynccontextmanager
async def started(config: Path, directory: Path) -> AsyncIterator[tuple[ReadyDaemon, float]]:
    daemon = ReadyDaemon(config, directory)
    ready = await daemon.start(within=300)
    try:
        yield daemon, ready
    finally:
        await daemon.stop()


async def deal_every_second(shoes: DeviceServers, tables: int, seconds: float) -> int:
    """Each shoe deals a card a second, spread over the second; returns the cards dealt."""
    dealt = 0
    began = time.monotonic()
    while time.monotonic() - began < seconds:
        for index in range(tables):
            dealt += await shoes.deal(index)
            await asyncio.sleep(1 / tables)
    return dealt


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=256)
    parser.add_argument("--shoes", choices=("tcp", "absent"), default="tcp")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--profile", type=Path)
    parser.add_argument("--py-spy", default="py-spy")
    args = parser.parse_args()
    if args.tables > MAX_TABLES:
        parser.error(
            f"--tables: one process serves at most {MAX_TABLES} "
            "(daemon/configuration/service_config.py)"
        )
    return args


async def main() -> None:
    args = _arguments()
    print(f"machine: {machine()}")
    stops: dict[str, float] = {}
    with workspace() as directory, bench_broker(directory) as broker:
        async with DeviceServers(args.tables if args.shoes == "tcp" else 0) as shoes:
            ports = shoes.ports if args.shoes == "tcp" else None
            config = write_tables_config(directory, broker, args.tables, ports)
            stops["at rest"] = await _start_rest_and_deal(args, config, directory, shoes)
            stops |= await _stop_at_each_moment(args, config, directory, shoes)
    print(
        "SIGTERM to exit: "
        + ", ".join(f"{moment} {seconds:.2f} s" for moment, seconds in stops.items())
        + " (goal 1 s each)"
    )


async def _start_rest_and_deal(
    args: argparse.Namespace, config: Path, directory: Path, shoes: DeviceServers
) -> float:
    """Start to READY=1 (and every shoe connected), CPU at rest and dealing, RSS; then the
    time SIGTERM takes at rest."""
    daemon = ReadyDaemon(config, directory)
    began = time.monotonic()
    ready = await daemon.start(within=300)
    out = (args.profile or directory) / f"daemon-{args.tables}-{args.shoes}.txt"
    with py_spy_profile(args.py_spy if args.profile else None, out, daemon.process.pid):
        try:
            if args.shoes == "tcp":
                await asyncio.wait_for(shoes.wait_connected(args.tables), 300)
                print(
                    f"{args.tables} tables ({args.shoes}): READY=1 after {ready:.2f} s, "
                    f"every shoe connected after {time.monotonic() - began:.2f} s"
                )
            else:
                print(f"{args.tables} tables ({args.shoes}): READY=1 after {ready:.2f} s")
            cpu = daemon.cpu_seconds()
            await asyncio.sleep(args.seconds)
            at_rest = (daemon.cpu_seconds() - cpu) / args.seconds
            line = f"daemon CPU at rest {at_rest:.2f} of a core"
            if args.shoes == "tcp":
                cpu = daemon.cpu_seconds()
                dealt = await deal_every_second(shoes, args.tables, args.seconds)
                dealing = (daemon.cpu_seconds() - cpu) / args.seconds
                line += f", dealing {dealing:.2f} ({dealt:,} cards in {args.seconds:.0f} s)"
            print(f"{line}; RSS {daemon.rss_mib():.0f} MiB", flush=True)
            return await stop_time(daemon)
        finally:
            await daemon.stop()


async def _stop_at_each_moment(
    args: argparse.Namespace, config: Path, directory: Path, shoes: DeviceServers
) -> dict[str, float]:
    """SIGTERM to exit as a start replays the journal, at READY=1, and (shoes over TCP)
    while dealing and as every shoe's link has just dropped."""
    stops = {"replaying the journal": await stop_while_replaying(config, directory)}
    async with started(config, directory) as (daemon, _):
        stops["at READY=1"] = await stop_time(daemon)
    if args.shoes != "tcp":
        return stops
    async with started(config, directory) as (daemon, _):
        await asyncio.wait_for(shoes.wait_connected(args.tables), 300)
        dealing = asyncio.create_task(deal_every_second(shoes, args.tables, 3600))
        await asyncio.sleep(2)
        stops["dealing"] = await stop_time(daemon)
        dealing.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await dealing
    async with started(config, directory) as (daemon, _):
        await asyncio.wait_for(shoes.wait_connected(args.tables), 300)
        shoes.drop_hosts()
        await asyncio.sleep(0.05)
        stops["every shoe just dropped"] = await stop_time(daemon)
    return stops


if __name__ == "__main__":
    asyncio.run(main())
