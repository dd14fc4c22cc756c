"""`[surveillance]`: the count system, and when a seat's evidence is flagged.

Read as the daemon starts, before the journal's replay (daemon.parts.recovery), so a replay
weighs the seats as the live table did; a reload leaves a change for the next restart
(daemon.configuration.reload). The defaults, and why, are in docs/math.md, "Advantage play";
each setting is in docs/configuration.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, Protocol

from daemon.table.surveillance import SurveillanceConfig
from rules.advantage import Thresholds
from rules.config import describe_value
from rules.counting import COUNT_SYSTEMS

if TYPE_CHECKING:
    from daemon.configuration.file import FieldPath

SURVEILLANCE_KEYS: Final = frozenset(
    {"count_system", "evidence_z", "min_rounds", "min_spread", "min_moves"}
)
EVIDENCE_Z: Final = (2.0, 10.0)
MIN_ROUNDS: Final = range(2, 1_001)
MIN_SPREAD: Final = (1.0, 100.0)
MIN_MOVES: Final = range(1, 1_001)


class _Section(Protocol):
    def whole_number(self, key: str, default: int, allowed: range) -> int: ...
    def choice(self, key: str, default: str, choices: tuple[str, ...]) -> str: ...


class _Checker(Protocol):
    """What this section needs of the configuration's checker (service_config)."""

    def section(self, name: str, value: object, known: frozenset[str]) -> Any: ...  # noqa: ANN401 - the checker's own section type
    def error(self, where: FieldPath, message: str) -> None: ...


def check_surveillance(checker: _Checker, value: object) -> SurveillanceConfig:
    """`[surveillance]` checked: every mistake reported to `checker`, the default in its
    place."""
    default = SurveillanceConfig()
    limits = default.thresholds
    section: _Section | None = checker.section("surveillance", value, SURVEILLANCE_KEYS)
    if section is None or not isinstance(value, dict):
        return default
    values: dict[str, Any] = value

    def number(key: str, fallback: float, low: float, high: float) -> float:
        given = values.get(key, fallback)
        # Not a boolean, not NaN (which compares false with everything), within the range.
        if (
            isinstance(given, bool)
            or not isinstance(given, int | float)
            or not low <= given <= high
        ):
            message = f"must be a number from {low:g} to {high:g}, not {describe_value(given)}"
            checker.error(("surveillance", key), message)
            return fallback
        return float(given)

    return SurveillanceConfig(
        section.choice("count_system", default.count_system, tuple(COUNT_SYSTEMS)),
        Thresholds(
            evidence_z=number("evidence_z", limits.evidence_z, *EVIDENCE_Z),
            min_rounds=section.whole_number("min_rounds", limits.min_rounds, MIN_ROUNDS),
            min_spread=number("min_spread", limits.min_spread, *MIN_SPREAD),
            min_moves=section.whole_number("min_moves", limits.min_moves, MIN_MOVES),
        ),
    )
