"""The numbers of a group of rounds: a table, a shift, a gaming day, a dealer, a floor.

Sans-I/O and incremental: `Numbers.add` takes one round record (and `add_shoe` one shoe
record) at a time, so the daemon keeps a table's current shift up to date at each round's
end, and a report folds a year of rounds without holding them. Money is integer cents;
rates, averages and the band are floats.

- **Pace**: rounds per hour of play. A gap of more than `BREAK` between one round's start and
  the next is a break (the table closed, the dealer's break), not play: the hours are the sum
  of the gaps up to `BREAK` and the last round's own length.
- **Per wager kind**: handle (every stake settled, voided stakes left out: they were
  returned), what players won (paid on top of their stakes), the house's win (stakes lost
  less what was paid) and its hold (house win / handle); where the wager has exact figures
  (daemon/numbers/theory.py), the theoretical hold and the band (rules/analysis/band.py) of
  the stakes actually wagered, and an alert when the hold lies outside it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from daemon.numbers.theory import ROUND_IS_UNIT, unit_distribution
from rules.analysis.band import (
    DEFAULT_CONFIDENCE,
    Band,
    UnitDistribution,
    band_counted,
    chance_counted,
    in_words,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    from daemon.numbers.records import RoundRecord, ShoeRecord

BREAK = timedelta(minutes=10)


@dataclass(frozen=True, slots=True)
class Alert:
    """A hold outside its band, and how likely a hold that far out is by chance."""

    wager: str
    hold: float
    band: Band
    chance: float

    @property
    def direction(self) -> str:
        return "below" if self.hold < self.band.low else "above"

    def words(self) -> str:
        return (
            f"{self.wager}: hold {self.hold:.2%} is {self.direction} its "
            f"{self.band.confidence:.1%} band [{self.band.low:.2%}, {self.band.high:.2%}] around "
            f"the theoretical {self.band.theoretical:.2%}: a hold this far {self.direction} "
            f"comes by chance {in_words(self.chance)} times, when the table pays as posted"
        )


@dataclass(slots=True)
class WagerNumbers:
    """One wager kind's money in a group of rounds."""

    wager: str
    settlements: int = 0
    handle: int = 0  # cents
    players_won: int = 0  # cents paid on top of the stakes returned
    house_win: int = 0  # cents
    units: Counter[tuple[UnitDistribution, int]] = field(default_factory=Counter)
    without_figures: int = 0  # cents of handle with no exact figures (no band for them)

    @property
    def hold(self) -> float | None:
        return self.house_win / self.handle if self.handle else None

    def band(self, confidence: float = DEFAULT_CONFIDENCE, *, remember: bool = True) -> Band | None:
        """The band of this wager's hold (`remember`: as `band_counted` takes it)."""
        if self.without_figures or not self.units:
            return None
        return band_counted(self.units, confidence, remember=remember)

    def alert(self, confidence: float = DEFAULT_CONFIDENCE) -> Alert | None:
        return self._alert(self.band(confidence))

    def _alert(self, found: Band | None) -> Alert | None:
        hold = self.hold
        if hold is None or found is None or found.contains(hold):
            return None
        return Alert(self.wager, hold, found, chance_counted(self.units, hold))

    def to_mapping(
        self, confidence: float = DEFAULT_CONFIDENCE, *, remember: bool = True
    ) -> dict[str, Any]:
        found = self.band(confidence, remember=remember)
        alert = self._alert(found)
        return {
            "wager": self.wager,
            "settlements": self.settlements,
            "handle_cents": self.handle,
            "players_won_cents": self.players_won,
            "house_win_cents": self.house_win,
            "hold": self.hold,
            "theoretical_hold": None if found is None else found.theoretical,
            "band": None if found is None else [found.low, found.high],
            "confidence": confidence,
            "alert": None if alert is None else alert.words(),
            "alert_chance": None if alert is None else alert.chance,
        }


@dataclass(slots=True)
class Numbers:
    """Everything counted over a group of rounds and shoes."""

    key: dict[str, str] = field(default_factory=dict)
    posted: Mapping[str, str] = field(default_factory=dict)  # table -> paytable posted
    rounds: int = 0
    voided: int = 0
    first: datetime | None = None
    last: datetime | None = None
    play: timedelta = timedelta(0)
    hands: int = 0
    cards: int = 0
    seats: int = 0
    shoes: int = 0
    cut_cards: int = 0  # shoes whose cut card was seen
    penetration_sum: float = 0.0
    wagers: dict[str, WagerNumbers] = field(default_factory=dict)
    queen_of_hearts_pairs_paid: int = 0
    floorperson_calls: int = 0
    held_rounds: int = 0
    reviewed_rounds: int = 0
    unreadable_cards: int = 0
    sections: dict[str, list[str]] = field(default_factory=dict)  # lines the report adds
    _last_start: dict[str, datetime] = field(default_factory=dict)  # per table
    _last_length: dict[str, timedelta] = field(default_factory=dict)

    def add(self, record: RoundRecord) -> None:
        self._pace(record)
        self.rounds += 1
        self.voided += record.voided
        self.hands += record.hands
        self.cards += record.cards
        self.seats += record.seats
        self.queen_of_hearts_pairs_paid += record.queen_of_hearts_pairs_paid
        self.floorperson_calls += record.floorperson_calls
        self.held_rounds += record.held
        self.reviewed_rounds += record.reviewed
        self.unreadable_cards += record.unreadable_cards
        self._money(record)

    def _pace(self, record: RoundRecord) -> None:
        self.first = record.started if self.first is None else min(self.first, record.started)
        self.last = record.ended if self.last is None else max(self.last, record.ended)
        before = self._last_start.get(record.table)
        if before is not None:
            gap = record.started - before
            # The round before counts up to this one's start, or its own length after a break.
            self.play += gap if timedelta(0) <= gap <= BREAK else self._last_length[record.table]
        self._last_start[record.table] = record.started
        self._last_length[record.table] = max(record.ended - record.started, timedelta(0))

    def _money(self, record: RoundRecord) -> None:
        round_units: dict[str, int] = {}
        for settled in record.settled:
            if settled.result == "void":
                continue
            numbers = self.wagers.setdefault(settled.wager, WagerNumbers(settled.wager))
            numbers.settlements += 1
            numbers.handle += settled.stake
            numbers.house_win += settled.house_win
            numbers.players_won += settled.won if settled.result == "win" else 0
            if settled.wager in ROUND_IS_UNIT:
                round_units[settled.wager] = round_units.get(settled.wager, 0) + settled.stake
            else:
                self._unit(record, settled.wager, settled.stake)
        for wager, stake in round_units.items():
            self._unit(record, wager, stake)

    def _unit(self, record: RoundRecord, wager: str, stake: int) -> None:
        numbers = self.wagers[wager]
        unit = (
            None
            if record.settings is None
            else unit_distribution(record.settings, wager, self.posted.get(record.table))
        )
        if unit is None:
            numbers.without_figures += stake
        else:
            numbers.units[unit, stake] += 1

    def add_shoe(self, shoe: ShoeRecord) -> None:
        self.shoes += 1
        if shoe.cut_card_seen:
            self.cut_cards += 1
            self.penetration_sum += shoe.penetration

    # ------------------------------------------------------------ figures
    @property
    def hours(self) -> float:
        """Hours of play: the gaps between rounds up to a break, and the last round."""
        last = sum(self._last_length.values(), timedelta(0))
        return (self.play + last).total_seconds() / 3600

    @property
    def rounds_per_hour(self) -> float | None:
        hours = self.hours
        return self.rounds / hours if hours > 0 else None

    def per_round(self, total: int) -> float | None:
        dealt = self.rounds - self.voided
        return total / dealt if dealt else None

    @property
    def penetration(self) -> float | None:
        return self.penetration_sum / self.cut_cards if self.cut_cards else None

    def alerts(self, confidence: float = DEFAULT_CONFIDENCE) -> list[Alert]:
        return [a for w in self.wagers.values() if (a := w.alert(confidence)) is not None]

    def to_mapping(
        self, confidence: float = DEFAULT_CONFIDENCE, *, remember: bool = True
    ) -> dict[str, Any]:
        """`remember`: as `band_counted` takes it, for every wager's band."""
        return {
            **self.key,
            "rounds": self.rounds,
            "voided": self.voided,
            "first": None if self.first is None else self.first.isoformat(),
            "last": None if self.last is None else self.last.isoformat(),
            "hours": self.hours,
            "rounds_per_hour": self.rounds_per_hour,
            "hands_per_round": self.per_round(self.hands),
            "cards_per_round": self.per_round(self.cards),
            "seats_in_play": self.per_round(self.seats),
            "shoes": self.shoes,
            "penetration": self.penetration,
            "wagers": [
                self.wagers[w].to_mapping(confidence, remember=remember)
                for w in sorted(self.wagers)
            ],
            "queen_of_hearts_pairs_paid": self.queen_of_hearts_pairs_paid,
            "floorperson_calls": self.floorperson_calls,
            "held_rounds": self.held_rounds,
            "reviewed_rounds": self.reviewed_rounds,
            "unreadable_cards": self.unreadable_cards,
        }
