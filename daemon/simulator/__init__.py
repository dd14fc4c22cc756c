"""The console simulator: a table's dealer and players as a dealer console (docs/mqtt.md).

It ships in the wheel because `shoe2mqtt demo` plays its tables with it; the tests and the
benchmarks play theirs with the same one (`ConsoleSimulator`), each giving it what it sees of
the broker (a `Sight`: the demo's and the benchmarks' `TableLog`, the test harness's
`Collector`).
"""

from daemon.simulator.console import (
    BURN,
    SHUFFLE,
    ConsoleSimulator,
    Disturbance,
    wager_plan,
)
from daemon.simulator.sight import STEP_TIMEOUT, Received, Sight, Stalled, TableLog

__all__ = [
    "BURN",
    "SHUFFLE",
    "STEP_TIMEOUT",
    "ConsoleSimulator",
    "Disturbance",
    "Received",
    "Sight",
    "Stalled",
    "TableLog",
    "wager_plan",
]
