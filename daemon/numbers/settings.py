"""`[numbers]` (docs/configuration.md): the shifts the pit's numbers count by, the casino's
time zone, and the band's confidence; read by daemon/configuration/service_config.py with
the rest of the file."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from rules.config import describe_value

if TYPE_CHECKING:
    from collections.abc import Callable

NUMBERS_KEYS: Final = frozenset({"shifts", "timezone", "confidence"})
CONFIDENCE: Final = (0.5, 0.999999)


@dataclass(frozen=True, slots=True)
class NumbersConfig:
    """`[numbers]`: the shifts the pit's numbers count by, and their band (docs/numbers.md)."""

    shifts: tuple[str, ...] = ("06:00", "14:00", "22:00")  # local times shifts begin
    timezone: str = "UTC"  # the casino's, by its IANA name
    confidence: float = 0.999  # of the hold's band, both sides together


def read_numbers(values: object, refuse: Callable[[str, str], None]) -> NumbersConfig:
    """The section's settings, each mistake told to `refuse(key, why)` (its default kept)."""
    from daemon.numbers.periods import Shifts, ShiftsError

    default = NumbersConfig()
    if not isinstance(values, dict):
        return default  # not a table: the checker said so
    shifts = values.get("shifts", list(default.shifts))
    timezone = values.get("timezone", default.timezone)
    confidence = values.get("confidence", default.confidence)
    if not isinstance(shifts, list) or not all(isinstance(s, str) for s in shifts):
        refuse("shifts", f"must be a list of times such as '06:00', not {describe_value(shifts)}")
        shifts = list(default.shifts)
    if not isinstance(timezone, str):
        refuse("timezone", f"must be a time zone name, not {describe_value(timezone)}")
        timezone = default.timezone
    try:
        Shifts.parse(shifts, timezone)
    except ShiftsError as exc:
        key, _, why = str(exc).partition(": ")
        refuse(key, why)
        shifts, timezone = list(default.shifts), default.timezone
    low, high = CONFIDENCE
    number = isinstance(confidence, int | float) and not isinstance(confidence, bool)
    if not number or not low <= confidence <= high:
        refuse(
            "confidence", f"must be a number from {low} to {high}, not {describe_value(confidence)}"
        )
        confidence = default.confidence
    return NumbersConfig(tuple(shifts), timezone, float(confidence))
