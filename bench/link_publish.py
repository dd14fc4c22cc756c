"""The daemon's MQTT link alone: CPU per message it publishes, QoS 1, to a real mosquitto.

    uv run python -m bench.link_publish [--rate 300] [--seconds 10] [--compare OTHER_LINK.py]
                                        [--repeat 5] [--burst 6]

An open-loop stream of messages (`--rate` a second, about what 32 tables at 40 cards/s make:
6.6 messages a card) is put in a `MemoryOutbox` while an `MqttLink` drains it; this
process's CPU time (user and system, all threads) over the run, divided by the messages,
is the link's cost per message (plus the outbox's and the loop's, which the daemon pays
too). `--compare` loads another version of daemon/mqtt/link.py from a file (e.g. the one
before a change: `git show main:daemon/mqtt/link.py > /tmp/link_before.py`) and runs the
two alternately (`--repeat` times each, medians compared) on the same broker, so the ratio
is of one run. `--burst N` puts N messages at once every N / rate seconds, as a card makes
its messages together (6.5 a card in the daemon's open-loop runs); the default, 1, puts
them one at a time.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import statistics
import sys
import time
from typing import TYPE_CHECKING, Any

from bench.e2e.harness import bench_broker, machine, workspace
from daemon.mqtt import MemoryOutbox, MqttSettings, OutboundMessage
from daemon.mqtt import link as current_link

if TYPE_CHECKING:
    from types import ModuleType

PAYLOAD = b'{"type":"round_snapshot",' + b'"x":1,' * 120 + b'"end":true}'  # a snapshot's size


async def cpu_per_message(
    link_module: ModuleType, port: int, rate: float, seconds: float, burst: int = 1
) -> float:
    outbox = MemoryOutbox(capacity=1_000_000)
    settings = MqttSettings(host="127.0.0.1", port=port, node="bench-link", base_topic="bench")
    link: Any = link_module.MqttLink(settings, outbox)
    async with asyncio.TaskGroup() as tasks:
        running = tasks.create_task(link.run(), name="link")
        while link.state.value != "connected":  # noqa: ASYNC110 - no event to wait on
            await asyncio.sleep(0.01)
        count = int(rate * seconds)
        started_cpu, started = time.process_time(), time.monotonic()
        for n in range(0, count, burst):
            for k in range(n, min(n + burst, count)):
                topic = f"bench/t{k // burst % 32}/round_snapshot"
                outbox.put(OutboundMessage(topic, PAYLOAD, retain=True))
            await asyncio.sleep(max(0.0, started + (n + burst) / rate - time.monotonic()))
        while len(outbox):  # noqa: ASYNC110 - drained when the broker acknowledged the last
            await asyncio.sleep(0.005)
        used = time.process_time() - started_cpu
        running.cancel()
    return used / count


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=300.0, help="messages a second")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--compare", help="another daemon/mqtt/link.py to run alternately")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each, alternately")
    parser.add_argument("--burst", type=int, default=1, help="messages put at once")
    args = parser.parse_args()
    versions = {"this link": current_link}
    if args.compare:
        spec = importlib.util.spec_from_file_location("link_compared", args.compare)
        assert spec is not None
        assert spec.loader is not None
        other = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = other  # its dataclasses look themselves up there
        spec.loader.exec_module(other)
        versions = {"compared link": other, **versions}
    print(f"machine: {machine()}")
    costs: dict[str, list[float]] = {name: [] for name in versions}
    with workspace() as directory, bench_broker(directory) as broker:
        for _ in range(args.repeat):
            for name, module in versions.items():
                cost = await cpu_per_message(
                    module, broker.port, args.rate, args.seconds, args.burst
                )
                costs[name].append(cost)
                print(f"  {name}: {cost * 1e6:.0f} us CPU per message", flush=True)
    for name, values in costs.items():
        print(f"{name}: median {statistics.median(values) * 1e6:.0f} us CPU per message")
    if args.compare:
        ratio = statistics.median(costs["this link"]) / statistics.median(costs["compared link"])
        print(f"this link / compared link: {ratio:.2f} x")


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main())
