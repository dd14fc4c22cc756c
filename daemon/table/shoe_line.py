"""What a table is told of its shoe's line, beside what the shoe says: noise, and overflow.

Between the shoe's driver and the table's inbox, the daemon keeps one `ShoeLine` per table.
It decides what the pit hears, never byte by byte and always in the stream's order:

- **noise** (`drivers.noise`): its report, one `line_noise` notice at most a minute, says what
  the line carried. On a shoe that keeps nothing (ENQ) a frame eaten by the noise is a card
  lost for good, and no number shows it: so the table doubts what it holds (holds every card
  for the dealer console, docs/rules.md decision 13) where the noise begins while cards are
  at stake, and before a card that comes while the noise is on (from its first dropped byte
  until the line was quiet for a second). A table that holds its cards for a doubt already
  is not told again. A shoe that keeps its frames (the reference protocol) sends again what
  it was not acknowledged: its noise is only reported.
- **overflow**: a shoe that keeps nothing cannot be made to wait (its driver must read on, or
  the kernel drops bytes uncounted), so what finds the table's inbox full is dropped and
  counted, and one `reader_overflow` notice goes into the inbox where the first was dropped,
  saying (once the table reaches it) how many were dropped meanwhile: a doubt if a card was
  among them, or if cards were at stake. One notice each time the inbox fills up.

Every notice here is journaled by the table like any other (daemon.table.records `NoticeRecord`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from drivers.events import CardDrawn, CardUnreadable

if TYPE_CHECKING:
    from drivers.noise import LineNoise

_CARDS = (CardDrawn, CardUnreadable)


class LineNotice(NamedTuple):
    """A notice for the pit: `hold` makes it a doubt over every card to come."""

    kind: str
    message: str
    hold: bool = False


@dataclass(slots=True)
class Overflow:
    """What a full inbox refused from the shoe since the first refusal, until the table took
    the notice that tells of it."""

    events: int = 0
    cards: int = 0

    def notice(self, *, at_stake: bool) -> LineNotice:
        message = (
            f"the table could not take what its shoe sent as fast as it came: {self.events:,} "
            f"events ({self.cards:,} of them cards) were dropped, and this shoe keeps nothing"
        )
        return LineNotice("reader_overflow", message, hold=self.cards > 0 or at_stake)


class ShoeLine:
    """One table's noise episode and overflow, as the daemon tells them to the table."""

    def __init__(self, *, reliable: bool) -> None:
        self.reliable = reliable  # the shoe keeps its frames until acknowledged
        self.overflowed = 0  # events refused by a full inbox, since start-up (the metrics')
        self._overflow: Overflow | None = None  # refused, not yet told
        self._noisy = False  # an episode of noise is on

    # ---------------------------------------------------------------- overflow
    def refused(self, event: object) -> Overflow | None:
        """An event the full inbox refused: counted; a new `Overflow` to queue as its notice's
        place when it is the first since the last notice was taken."""
        self.overflowed += 1
        fresh = self._overflow is None
        if self._overflow is None:
            self._overflow = Overflow()
        overflow = self._overflow
        overflow.events += 1
        overflow.cards += isinstance(event, _CARDS)
        return overflow if fresh else None

    def overflow_taken(self, overflow: Overflow, *, at_stake: bool) -> LineNotice:
        """The table reached the overflow's place: what it is told there (what is refused from
        now on is told at a place of its own)."""
        if self._overflow is overflow:
            self._overflow = None
        return overflow.notice(at_stake=at_stake)

    # ---------------------------------------------------------------- noise
    def noise_began(self, *, at_stake: bool, holding: bool) -> LineNotice | None:
        """The line began to carry noise: a doubt now for a shoe that keeps nothing, if cards
        are at stake (and the table does not hold them for a doubt already)."""
        self._noisy = True
        if self.reliable or not at_stake or holding:
            return None
        return LineNotice(
            "line_noise",
            "noise on the shoe's line while cards were at stake: a card's frame may be lost "
            "in it, and this shoe keeps nothing",
            hold=True,
        )

    def before_shoe_event(self, event: object, *, holding: bool) -> LineNotice | None:
        """A doubt before a card that comes while noise is on a line whose shoe keeps
        nothing: a card before it may have been lost in the noise."""
        if self.reliable or not self._noisy or holding or not isinstance(event, _CARDS):
            return None
        return LineNotice(
            "line_noise",
            "a card came from the shoe while noise was on its line: a card's frame before it "
            "may be lost in the noise, and this shoe keeps nothing",
            hold=True,
        )

    def noise_quiet(self) -> None:
        """The line dropped nothing for a while: the cards that come now are as they were."""
        self._noisy = False

    def noise_reported(self, noise: LineNoise) -> LineNotice:
        """The report of the noise, for the pit."""
        keeps = (
            "this shoe sends again what the table did not acknowledge, so nothing is lost"
            if self.reliable
            else "this shoe keeps nothing: a card's frame in the noise is lost"
        )
        return LineNotice("line_noise", f"{noise.describe()}; {keeps}")
