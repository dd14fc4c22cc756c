"""The open-loop bench's tail period by period, on figures made up for it."""

from __future__ import annotations

import array

from bench.e2e.openloop import Tally, by_period


def test_the_tail_is_printed_period_by_period_beside_the_relays() -> None:
    """A run longer than a period: each period's p99, the daemon's and the bare relay's
    (a tail that grows over a floor's hour is told from one that comes and goes)."""
    tally = Tally()
    for n in range(100):  # first period: 1..100 ms; second: 101..200 ms
        for offset, base in ((0.0, 0), (300.0, 100)):
            tally.card_latency.append((base + n + 1) / 1e3)
            tally.card_received.append(offset + n)
    tally.relay_latency["bare"] = array.array("d", [0.002] * 100)
    tally.relay_received.extend(float(n) for n in range(100))
    assert by_period(tally, 300.0) == (
        "  card->settlement p99 by period, ms (daemon/bare relay): 0-5 min 100/2, 5-10 min 200"
    )
    short = Tally()
    short.card_latency.append(0.01)
    short.card_received.append(0.0)
    assert by_period(short, 300.0) is None
