"""How long one Prometheus scrape takes to render, for 3, 32 and 256 tables.

    uv run python bench/metrics_render.py [--repeat R]

Each table has read cards, settled a win and a loss, had a notice and a refused request, as
any table does within minutes; its reader is connected. The rendering (the text format, as
Prometheus asks for it) is what the endpoint runs in its worker thread; the best of R counts.
"""

from __future__ import annotations

import argparse
import platform
import time

from prometheus_client import generate_latest

from daemon.metrics import DaemonMetrics, Readings


def render_time(tables: int, repeat: int) -> tuple[float, int]:
    """Seconds for the best of `repeat` renderings, and the lines rendered."""
    ids = [f"bj-{n}" for n in range(1, tables + 1)]
    readings = Readings(
        broker_connected=True, backlog=0, reader_links=dict.fromkeys(ids, "connected")
    )
    metrics = DaemonMetrics(node="bench", version="bench", tables=ids, readings=lambda: readings)
    for table in ids:
        metrics.card_read(table, readable=True)
        metrics.settled(table, "win")
        metrics.settled(table, "lose")
        metrics.noticed(table, "floorperson_required")
        metrics.rejected(table, "request", "wager_rejected")
    best = float("inf")
    text = b""
    for _ in range(repeat):
        metrics.take_readings()
        started = time.perf_counter()
        text = generate_latest(metrics.registry)
        best = min(best, time.perf_counter() - started)
    return best, len(text.splitlines())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    print(f"{platform.python_implementation()} {platform.python_version()}, best of {args.repeat}")
    for tables in (3, 32, 256):
        seconds, lines = render_time(tables, args.repeat)
        print(f"{tables:>4} tables: {seconds * 1000:6.2f} ms for {lines:,} lines")


if __name__ == "__main__":
    main()
