"""A restart late in a busy shift: what the rebuild of the shift's numbers costs the daemon.

    uv run python -m bench.e2e.restart [--tables 4] [--rounds 620] [--daemon-tree DIR]

Each table's journal holds `--rounds` rounds of the current shift (bench/e2e/warm.py: dealt
by the real engine, written by the journal's own store), then `shoe2mqtt run` starts on it,
its shoes not there (nothing is dealt: what is measured is the start alone). Its resident
memory and CPU are read every 0.2 s until every table's `<table>/stats` has arrived (its
shift counted again, daemon/numbers/rebuild.py) and a second after; printed: the seconds to
READY=1 and to the last table's numbers, the RSS at READY=1, at its peak and at the end, and
the CPU the daemon spent.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from datetime import UTC, datetime

import aiomqtt

from bench.e2e.harness import (
    BASE,
    ReadyDaemon,
    add_daemon_tree_argument,
    bench_broker,
    cpu_seconds,
    machine,
    receipts,
    rss_mib,
    run_daemons_from,
    table_mapping,
    workspace,
    write_config,
)
from bench.e2e.openloop import table_ids
from bench.e2e.warm import warm_journal, warm_numbers
from rules.config import TableConfig
from rules.games import Game

SAMPLE = 0.2  # seconds between reads of the daemon's RSS and CPU
FIRST_PORT = 9  # the shoes' ports: the discard service's and up, where nothing answers


async def restart(tables: int, rounds: int, within: float) -> list[str]:
    """The figures' lines (the module's docstring)."""
    with workspace() as directory, bench_broker(directory) as broker:
        ids = table_ids(tables, tuple(Game))
        mappings = [table_mapping(game, table) for game, table in ids]
        shoes = [(m, ("127.0.0.1", FIRST_PORT + i)) for i, m in enumerate(mappings)]
        now = datetime.now(UTC)
        config = write_config(directory, broker, shoes, sync=None, numbers=warm_numbers(now))
        began = time.monotonic()
        configs = [TableConfig.from_mapping(m) for m in mappings]
        await warm_journal(directory / "state", configs, rounds, contract=4, now=now)
        took = time.monotonic() - began
        lines = [f"warm journal: {tables} tables x {rounds} rounds in {took:.0f} s"]
        async with aiomqtt.Client(broker.host, broker.port, identifier="bench-restart") as client:
            await client.subscribe(f"{BASE}/+/stats", qos=1)
            daemon = ReadyDaemon(config, directory)
            started = time.monotonic()
            ready = await daemon.start()
            pid = daemon.process.pid
            try:
                at_ready = rss_mib(pid)
                seen, samples = await _watch(client, pid, {c.table_id for c in configs}, within)
                rebuilt = max(seen.values(), default=float("nan")) - started
                cpu = cpu_seconds(pid)
            finally:
                await daemon.stop()
        peak = max(rss for _, rss in samples)
        lines.append(
            f"READY=1 {ready:.2f} s after start; every table's numbers {rebuilt:.1f} s after "
            f"start ({len(seen)} of {tables} tables)"
        )
        lines.append(
            f"daemon RSS {at_ready:.1f} MiB at READY=1, peak {peak:.1f}, at the end "
            f"{samples[-1][1]:.1f}; CPU {cpu:.1f} s"
        )
        return lines


async def _watch(
    client: aiomqtt.Client, pid: int, tables: set[str], within: float
) -> tuple[dict[str, float], list[tuple[float, float]]]:
    """When each table's first `stats` arrived, and (time, RSS) every SAMPLE seconds, until
    every table's arrived and a second more (or `within` seconds)."""
    seen: dict[str, float] = {}
    samples: list[tuple[float, float]] = []

    async def listen() -> None:
        prefix = len(BASE) + 1
        async for now, topic, _ in receipts(client):
            seen.setdefault(topic[prefix:].partition("/")[0], now)

    listener = asyncio.create_task(listen(), name="bench-restart-listener")
    try:
        deadline = time.monotonic() + within
        done_at: float | None = None
        while time.monotonic() < deadline:
            samples.append((time.monotonic(), rss_mib(pid)))
            if done_at is None and tables <= seen.keys():
                done_at = time.monotonic()
            if done_at is not None and time.monotonic() - done_at >= 1.0:
                break
            await asyncio.sleep(SAMPLE)
    finally:
        listener.cancel()
        await asyncio.gather(listener, return_exceptions=True)
    return seen, samples


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=620, help="a table's rounds in the shift")
    parser.add_argument("--within", type=float, default=1800.0, help="seconds to wait at most")
    add_daemon_tree_argument(parser)
    args = parser.parse_args()
    run_daemons_from(args.daemon_tree)
    print(f"machine: {machine()}", flush=True)
    print("\n".join(await restart(args.tables, args.rounds, args.within)))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
