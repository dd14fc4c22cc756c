"""The publish path alone, client against client: CPU per QoS 1 message to a real mosquitto.

    uv run python -m bench.mqtt_clients [--rate 300] [--burst 6] [--seconds 10] [--repeat 3]
        [--gmqtt-python /tmp/gmqtt/bin/python]

Each client publishes `--rate` messages a second in bursts of `--burst` (a card's messages
come together), a round snapshot's size each, and waits for every PUBACK; its process's CPU
time over the run, divided by the messages, is its cost per message. Each runs in a process
of its own, in turn, `--repeat` times, on one broker:
- `aiomqtt`: what the link did before it owned its publish path: a task per message,
  `await client.publish(...)` (an `Event`, a `wait_for` timer), in flight together;
- `paho hooks`: the link's path now (daemon.mqtt.paho_hooks): `Acknowledgements.publish`
  straight into paho, one `send` per turn, the PUBACKs of one `recv` counted together;
- `gmqtt` (with `--gmqtt-python`, an interpreter that has gmqtt, e.g. a throwaway venv:
  `uv venv /tmp/gmqtt && uv pip install -p /tmp/gmqtt gmqtt`): another asyncio client,
  `client.publish(...)`, its PUBACKs seen only in its private message store (it tells the
  application of none).
Nothing else runs in these processes: the figures are the clients', not the daemon's.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Final

from bench.e2e.harness import bench_broker, machine, workspace

PAYLOAD_SIZE: Final = 740  # bytes: a round snapshot (bench/link_publish.py's)

_COMMON: Final = """
import asyncio, sys, time
host, port, rate, burst, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), \\
    int(sys.argv[4]), float(sys.argv[5])
payload = b"x" * {size}
count = int(rate * seconds)

async def paced(send_burst, drained):
    started_cpu, started = time.process_time(), time.monotonic()
    for n in range(0, count, burst):
        send_burst(n, min(burst, count - n))
        await asyncio.sleep(max(0.0, started + (n + burst) / rate - time.monotonic()))
    await drained()
    print((time.process_time() - started_cpu) / count)
""".replace("{size}", str(PAYLOAD_SIZE))

_AIOMQTT: Final = """
import aiomqtt

async def main():
    async with aiomqtt.Client(host, port, max_inflight_messages=32) as client:
        client.pending_calls_threshold = 10_000
        tasks = set()
        def send_burst(n, k):
            for i in range(k):
                task = asyncio.ensure_future(client.publish(f"bench/t{n % 32}", payload, qos=1))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
        async def drained():
            while tasks:
                await asyncio.gather(*tasks)
        await paced(send_burst, drained)

asyncio.run(main())
"""

_PAHO_HOOKS: Final = """
import aiomqtt
from daemon.mqtt.paho_hooks import Acknowledgements, write_without_waking
from daemon.mqtt.paho_socket import batch_socket_io

async def main():
    async with aiomqtt.Client(host, port, max_inflight_messages=32) as client:
        write_without_waking(client)
        batch_socket_io(client)
        acks = Acknowledgements(client)
        waiting = set()
        def send_burst(n, k):
            for i in range(k):
                waiting.add(acks.publish(f"bench/t{n % 32}", payload, 1, retain=False))
        async def drained():
            while waiting:
                acks.arrived.clear()
                waiting.difference_update([mid for mid in list(waiting) if acks.take(mid)])
                if waiting:
                    await acks.arrived.wait()
        await paced(send_burst, drained)

asyncio.run(main())
"""

_GMQTT: Final = """
import gmqtt

async def main():
    client = gmqtt.Client("bench-gmqtt")
    await client.connect(host, port)
    def send_burst(n, k):
        for i in range(k):
            client.publish(f"bench/t{n % 32}", payload, qos=1)
    async def drained():
        # gmqtt tells the application of no PUBACK: its private store empties as they come.
        while not client._persistent_storage.is_empty:
            await asyncio.sleep(0.001)
    await paced(send_burst, drained)
    await client.disconnect()

asyncio.run(main())
"""


def cost(python: str, code: str, port: int, args: argparse.Namespace) -> float:
    done = subprocess.run(  # noqa: S603 - our own code, in the interpreter the user named
        [python, "-c", _COMMON + code, "127.0.0.1", str(port), str(args.rate), str(args.burst),
         str(args.seconds)],
        capture_output=True, text=True, check=True, timeout=args.seconds * 10 + 60,
        cwd=Path(__file__).parents[1],
    )  # fmt: skip
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=300.0, help="messages a second")
    parser.add_argument("--burst", type=int, default=6, help="messages published together")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each, in turn")
    parser.add_argument("--gmqtt-python", help="an interpreter that has gmqtt installed")
    args = parser.parse_args()
    clients = {"aiomqtt": (sys.executable, _AIOMQTT), "paho hooks": (sys.executable, _PAHO_HOOKS)}
    if args.gmqtt_python:
        clients["gmqtt"] = (args.gmqtt_python, _GMQTT)
    print(f"machine: {machine()}", flush=True)
    costs: dict[str, list[float]] = {name: [] for name in clients}
    with workspace() as directory, bench_broker(directory) as broker:
        for _ in range(args.repeat):
            for name, (python, code) in clients.items():
                costs[name].append(cost(python, code, broker.port, args))
                print(f"  {name}: {costs[name][-1] * 1e6:.0f} us CPU per message", flush=True)
    base = statistics.median(costs["aiomqtt"])
    for name, values in costs.items():
        median = statistics.median(values)
        print(
            f"{name}: median {median * 1e6:.0f} us CPU per message ({median / base:.2f} x aiomqtt)"
        )


if __name__ == "__main__":
    main()
