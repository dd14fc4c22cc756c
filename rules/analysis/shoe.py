"""Shoe compositions, and the point classes the closed forms count.

A composition maps each distinct card (rank and suit) to how many copies the shoe holds:
`rules.cards.shoe_composition` builds a full shoe, and a test may build a reduced one. The
formulas draw without replacement from it, so a card taken for one hand is not there for
the next.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rules.cards import DeckKind, shoe_composition

if TYPE_CHECKING:
    from collections import Counter
    from collections.abc import Mapping

    from rules.cards import Card

# Point classes: index 0 holds the aces (1 point, or 11 in a soft total), index 9 the
# ten-value cards (10, J, Q, K).
POINT_VALUES = tuple(range(1, 11))


@dataclass(frozen=True, slots=True)
class ShoeSpec:
    """A freshly shuffled shoe: `decks` decks of one kind."""

    decks: int
    deck_kind: DeckKind = DeckKind.STANDARD

    def __post_init__(self) -> None:
        if self.decks < 1:
            raise ValueError(f"a shoe holds at least one deck, not {self.decks}")

    def composition(self) -> Counter[Card]:
        return shoe_composition(self.decks, self.deck_kind)

    def describe(self) -> str:
        kind = "Spanish" if self.deck_kind is DeckKind.SPANISH else "standard"
        return f"{self.decks} {kind} deck{'s' if self.decks != 1 else ''}"


def point_counts(composition: Mapping[Card, int]) -> tuple[int, ...]:
    """How many cards of each point class, aces first and ten-values last."""
    counts = [0] * len(POINT_VALUES)
    for card, copies in composition.items():
        if copies < 0:
            raise ValueError(f"a shoe cannot hold {copies} of {card}")
        counts[card.rank.points - 1] += copies
    return tuple(counts)


def two_card_total(first: int, second: int) -> int:
    """The point count of two cards by their point values (13:69F-2.24(a), 26.6(d)).

    An ace counts 11 where that does not bust the hand: ace + nine is 20, ace + six is 17,
    two aces are 12.
    """
    hard = first + second
    return hard + 10 if 1 in (first, second) and hard <= 11 else hard
