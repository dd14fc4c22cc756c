"""Blackjack hand totals: hard and soft, and the blackjack itself."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rules.cards import Card


@dataclass(frozen=True, slots=True)
class HandValue:
    """The best total of a hand; `soft` when an ace is counted as 11 in it."""

    total: int
    soft: bool

    @property
    def busted(self) -> bool:
        return self.total > 21


def hand_value(cards: Sequence[Card]) -> HandValue:
    hard = 0
    aces = False
    for card in cards:  # a plain loop: this runs for every card the engine sees
        points = card.rank.points
        hard += points
        aces = aces or points == 1
    # One ace counted as 11 adds 10; two would add 20 and always bust.
    if hard <= 11 and aces:
        return HandValue(hard + 10, soft=True)
    return HandValue(hard, soft=False)


def is_blackjack(cards: Sequence[Card]) -> bool:
    """An ace and a ten-value card as the first two cards of an unsplit hand.

    Whether the hand was split is the caller's knowledge; this looks at the cards only.
    """
    return len(cards) == 2 and hand_value(cards).total == 21
