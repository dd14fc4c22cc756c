"""Card counting as the surveillance room does it: a system's tags, and one shoe's count.

A counting system is data: a tag for each rank (`COUNT_SYSTEMS`). The running count is the
sum of the tags of every card seen face up since the shuffle (a burn and an unrevealed hole
card are not seen); the true count is the running count per deck not yet seen.

`ten_excess` is the other thing a player can watch: how far the share of ten-value cards
still in the shoe is above its share in a full one, in percentage points. Two ten-value
cards make the most common 20 point bonus winner (13:69F-2.24), so a seat that bets that
bonus only when the shoe is rich in them is watched by it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rules.cards import Rank

if TYPE_CHECKING:
    from collections.abc import Mapping

    from rules.cards import Card, DeckKind

_TENS = (Rank.TEN, Rank.JACK, Rank.QUEEN, Rank.KING)


def _tags(line: str) -> dict[Rank, int]:
    """A system's tags from its table row, `A 2 3 4 5 6 7 8 9 10 J Q K` in that order."""
    return dict(zip(Rank, map(int, line.split()), strict=True))


# Balanced systems (a full standard deck sums to 0), so a true count means the same at every
# depth. Hi-Lo is the one most counters use and the default; the others weigh more ranks.
COUNT_SYSTEMS: dict[str, dict[Rank, int]] = {
    #             A  2  3  4  5  6  7  8  9 10  J  Q  K
    "hi_lo": _tags("-1 1  1  1  1  1  0  0  0 -1 -1 -1 -1"),
    "hi_opt_i": _tags("0 0  1  1  1  1  0  0  0 -1 -1 -1 -1"),
    "omega_ii": _tags("0 1  1  2  2  2  1  0 -1 -2 -2 -2 -2"),
}
DEFAULT_SYSTEM = "hi_lo"


@dataclass(slots=True)
class ShoeCount:
    """One shoe's count from the cards seen face up since its shuffle.

    The true count here is the running count, less what the shoe's own make-up adds on
    average (Hi-Lo over a Spanish shoe, without its 10s, drifts up by 1/12 a card), per deck
    not yet seen. Counted so, it is a martingale over the shuffle: its expected next value is
    its value, and its variance after `c` of `N` cards is `d^2 s^2 c / ((N - 1)(N - c))` (`d`
    cards a deck, `s^2` the variance of the tags over the shoe) -- what the surveillance's
    tests take as the null (rules.advantage). A burn and a hole card not yet revealed are
    simply not seen yet: they stay among the cards the count is over.
    """

    tags: Mapping[Rank, int]
    decks: int
    deck_kind: DeckKind
    running: int = 0
    cards_seen: int = 0
    tens_seen: int = 0
    # What the system and the shoe fix, worked out once: the surveillance weighs every seat
    # over up to 600 rounds at each shuffle, and asks for these at every one of them.
    deck_size: int = field(init=False, repr=False, compare=False)
    shoe_size: int = field(init=False, repr=False, compare=False)
    tag_mean: float = field(init=False, repr=False, compare=False)
    tag_variance: float = field(init=False, repr=False, compare=False)
    ten_share: float = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        ranks = self.deck_kind.ranks
        self.deck_size = self.deck_kind.size
        self.shoe_size = self.decks * self.deck_size
        self.tag_mean = mean = sum(self.tags[rank] for rank in ranks) / len(ranks)
        self.tag_variance = sum((self.tags[rank] - mean) ** 2 for rank in ranks) / len(ranks)
        # The share of ten-value cards in a full shoe of this kind.
        self.ten_share = sum(1 for rank in _TENS if rank in ranks) / len(ranks)

    def seen(self, card: Card) -> None:
        self.running += self.tags[card.rank]
        self.tens_seen += card.rank in _TENS
        self.cards_seen += 1

    @property
    def unseen(self) -> int:
        return max(self.shoe_size - self.cards_seen, 1)

    @property
    def true_count(self) -> float:
        return self.true_count_at(self.cards_seen, self.running)

    @property
    def ten_excess(self) -> float:
        """Percentage points by which ten-value cards are a larger share of the cards not
        yet seen than of a full shoe (a martingale too: rules.advantage)."""
        return self.ten_excess_at(self.cards_seen, self.tens_seen)

    def true_count_at(self, seen: int, running: int) -> float:
        """The true count of this system and shoe after `seen` cards at `running`."""
        deviation = running - seen * self.tag_mean
        return self.deck_size * deviation / max(self.shoe_size - seen, 1)

    def ten_excess_at(self, seen: int, tens_seen: int) -> float:
        """`ten_excess` after `seen` cards of which `tens_seen` were ten-valued."""
        tens = self.ten_share * self.shoe_size
        return 100 * ((tens - tens_seen) / max(self.shoe_size - seen, 1) - self.ten_share)

    def _depth(self, seen: int) -> float:
        """c / ((N - 1)(N - c)): how far a martingale over the shuffle has spread by card c."""
        size = self.shoe_size
        return seen / ((size - 1) * max(size - seen, 1))

    def true_count_variance(self, seen: int) -> float:
        """Var(true count) over the shuffle after `seen` cards: d^2 s^2 c / ((N - 1)(N - c))."""
        size = self.deck_size
        return size * size * self.tag_variance * self._depth(seen)

    def ten_excess_variance(self, seen: int) -> float:
        """Var(ten-value excess, in percentage points) over the shuffle after `seen` cards."""
        share = self.ten_share
        return 100 * 100 * share * (1 - share) * self._depth(seen)

    def state(self) -> dict[str, Any]:
        return {"running": self.running, "seen": self.cards_seen, "tens": self.tens_seen}

    def restored(self, data: Mapping[str, Any]) -> ShoeCount:
        self.running, self.cards_seen = int(data["running"]), int(data["seen"])
        self.tens_seen = int(data["tens"])
        return self


def balanced(tags: Mapping[Rank, int]) -> bool:
    """Whether a full standard deck's tags sum to 0."""
    return sum(tags[rank] for rank in Rank) == 0
