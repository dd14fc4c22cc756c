"""Which shift, gaming day and group a round belongs to.

Shifts are configured as the local times they begin (`[numbers] shifts`, default 06:00,
14:00 and 22:00) in the casino's time zone (`[numbers] timezone`, default UTC). The gaming
day begins with the first shift of the list: with the default, the night shift that begins
at 22:00 on 29 November belongs to the gaming day of 29 November, up to 06:00 on the 30th.
A round belongs to the shift and the day it started in.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from typing import TYPE_CHECKING, Final
from zoneinfo import ZoneInfo

from daemon.numbers.records import RoundRecord
from daemon.numbers.tally import Numbers

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from daemon.numbers.records import ShoeRecord

DEFAULT_SHIFTS: Final = ("06:00", "14:00", "22:00")
GROUPINGS: Final = ("table", "shift", "day", "dealer", "floor")
NO_DEALER: Final = "(not named)"


class ShiftsError(ValueError):
    """Shift boundaries that are not times of day, or a time zone that is not one."""


@dataclass(frozen=True, slots=True)
class Shifts:
    """The shift boundaries, in order from the gaming day's start, and the time zone."""

    starts: tuple[time, ...] = tuple(time.fromisoformat(s) for s in DEFAULT_SHIFTS)
    zone: tzinfo = UTC

    @classmethod
    def parse(cls, starts: Iterable[str] = DEFAULT_SHIFTS, timezone: str = "UTC") -> Shifts:
        try:
            parsed = tuple(time.fromisoformat(s) for s in starts)
        except (TypeError, ValueError) as exc:
            raise ShiftsError(f"shifts: each must be a time of day such as '06:00': {exc}") from exc
        if not parsed:
            raise ShiftsError("shifts: at least one")
        if list(parsed) != sorted(set(parsed)):
            raise ShiftsError("shifts: in order through the day, each once")
        try:
            zone: tzinfo = UTC if timezone == "UTC" else ZoneInfo(timezone)
        except (ValueError, KeyError, OSError) as exc:
            raise ShiftsError(f"timezone: {timezone!r} is not a time zone name") from exc
        return cls(parsed, zone)

    def locate(self, moment: datetime) -> tuple[date, time]:
        """The gaming day and the start of the shift `moment` falls in."""
        local = moment.astimezone(self.zone)
        clock = local.time().replace(tzinfo=None)
        day = local.date()
        if clock < self.starts[0]:  # before the day's first shift: the day before's last
            return day - timedelta(days=1), self.starts[-1]
        start = max(s for s in self.starts if s <= clock)
        return day, start

    def shift_label(self, moment: datetime) -> str:
        day, start = self.locate(moment)
        return f"{day.isoformat()} {start.strftime('%H:%M')}"

    def day_label(self, moment: datetime) -> str:
        return self.locate(moment)[0].isoformat()

    def current_shift_start(self, moment: datetime) -> datetime:
        day, start = self.locate(moment)
        naive = datetime.combine(day, start)
        if start < self.starts[0]:  # the night's part after midnight
            naive += timedelta(days=1)
        return naive.replace(tzinfo=self.zone)


def key_of(record: RoundRecord, by: str, shifts: Shifts) -> dict[str, str]:
    """The group `record` belongs to when grouped `by` one of GROUPINGS."""
    if by == "table":
        return {"table": record.table}
    if by == "shift":
        return {"table": record.table, "shift": shifts.shift_label(record.started)}
    if by == "day":
        return {"table": record.table, "day": shifts.day_label(record.started)}
    if by == "dealer":
        return {"dealer": record.dealer or NO_DEALER}
    return {"floor": "all tables"}


@dataclass(slots=True)
class Grouped:
    """Round and shoe records in, the numbers of each group out, in order of first round."""

    by: str
    shifts: Shifts = field(default_factory=Shifts)
    posted: Mapping[str, str] = field(default_factory=dict)
    groups: dict[tuple[tuple[str, str], ...], Numbers] = field(default_factory=dict)
    _shoe_group: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)

    def add(self, record: RoundRecord | ShoeRecord) -> None:
        if isinstance(record, RoundRecord):
            key = key_of(record, self.by, self.shifts)
            frozen = tuple(key.items())
            group = self.groups.get(frozen)
            if group is None:
                group = self.groups[frozen] = Numbers(key, self.posted)
            group.add(record)
            self._shoe_group[record.table] = frozen
            return
        # A shoe counts where its table's rounds were last counted (a dealer's, a shift's).
        frozen_shoe = self._shoe_group.get(record.table)
        if frozen_shoe is not None:
            self.groups[frozen_shoe].add_shoe(record)

    def numbers(self) -> list[Numbers]:
        return list(self.groups.values())

    def last_group(self, table: str) -> Numbers | None:
        """The group that holds the table's last round added, if any."""
        frozen = self._shoe_group.get(table)
        return None if frozen is None else self.groups[frozen]
