"""`[surveillance]`: the count system, and when a seat's evidence is flagged.

Read as the daemon starts, before the journal's replay (daemon.parts.recovery), so a replay
weighs the seats as the live table did; a reload leaves a change for the next restart
(daemon.configuration.reload). The defaults, and why, are in docs/math.md, "Advantage play";
each setting is in docs/configuration.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from daemon.table.surveillance import SurveillanceConfig
from rules.advantage import Thresholds
from rules.counting import COUNT_SYSTEMS

if TYPE_CHECKING:
    from daemon.configuration.problems import Problems

SURVEILLANCE_KEYS: Final = frozenset(
    {"count_system", "evidence_z", "min_rounds", "min_spread", "min_moves"}
)
EVIDENCE_Z: Final = (2.0, 10.0)
MIN_ROUNDS: Final = range(2, 1_001)
MIN_SPREAD: Final = (1.0, 100.0)
MIN_MOVES: Final = range(1, 1_001)


def check_surveillance(problems: Problems, value: object) -> SurveillanceConfig:
    """`[surveillance]` checked: every problem told to the collector, the default in its
    place."""
    default = SurveillanceConfig()
    limits = default.thresholds
    section = problems.section("surveillance", value, SURVEILLANCE_KEYS)
    if section is None:
        return default
    return SurveillanceConfig(
        section.choice("count_system", default.count_system, tuple(COUNT_SYSTEMS)),
        Thresholds(
            evidence_z=section.number("evidence_z", limits.evidence_z, *EVIDENCE_Z),
            min_rounds=section.whole_number("min_rounds", limits.min_rounds, MIN_ROUNDS),
            min_spread=section.number("min_spread", limits.min_spread, *MIN_SPREAD),
            min_moves=section.whole_number("min_moves", limits.min_moves, MIN_MOVES),
        ),
    )
