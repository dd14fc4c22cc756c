"""The dealer's final total, by exact recursion over the cards left in the shoe.

The dealer draws from a full shoe until the table's rule says stand (17 or more; a soft 17
is hit where the table hits soft 17). Every draw is without replacement, so each branch
carries the shoe it leaves behind. Dealt from a full shoe, the dealer's hand is exactly
the cards missing from it, so the remaining composition alone names a state and the
recursion is memoized on it: an 8-deck shoe has a few thousand such states.

Outcomes are the ones 13:69F-36.5 distinguishes: 17 to 21, a blackjack (two-card 21),
exactly 22 (which pushes the hands still standing, 36.5(d)) and over 22.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from rules.analysis.outcomes import exact_and_decimal
from rules.analysis.shoe import POINT_VALUES, ShoeSpec, point_counts

if TYPE_CHECKING:
    from collections.abc import Mapping

    from rules.cards import Card

BLACKJACK = "blackjack"
TWENTY_TWO = "22"
OVER_22 = "over_22"
FINAL_TOTALS = ("17", "18", "19", "20", "21", BLACKJACK, TWENTY_TWO, OVER_22)
LABELS = {
    "17": "17",
    "18": "18",
    "19": "19",
    "20": "20",
    "21": "21 (three or more cards)",
    BLACKJACK: "blackjack",
    TWENTY_TWO: "exactly 22 (hands of 20 or less push, 36.5(d))",
    OVER_22: "over 22",
}
CITATION = "13:69F-36.5"
_INDEX = {name: index for index, name in enumerate(FINAL_TOTALS)}

Distribution = tuple[Fraction, ...]  # one probability per FINAL_TOTALS entry, in order


def final_total_name(total: int, cards: int) -> str:
    """The outcome a dealer hand that has stopped drawing ends in."""
    if total == 21 and cards == 2:
        return BLACKJACK
    if total > 22:
        return OVER_22
    return str(total)


def dealer_final_totals_of(
    composition: Mapping[Card, int], *, hits_soft_17: bool
) -> dict[str, Fraction]:
    """The probability of each final total for a dealer who starts on `composition`."""
    shoe = point_counts(composition)
    memo: dict[tuple[int, ...], Distribution] = {}

    def play(remaining: tuple[int, ...], hard: int, *, ace: bool, cards: int) -> Distribution:
        soft = ace and hard <= 11  # one ace counted as 11; two would bust
        total = hard + 10 if soft else hard
        draws = total < 17 or (total == 17 and soft and hits_soft_17)
        if cards >= 2 and not draws:
            ended = [Fraction(0)] * len(FINAL_TOTALS)
            ended[_INDEX[final_total_name(total, cards)]] = Fraction(1)
            return tuple(ended)
        known = memo.get(remaining)
        if known is not None:
            return known
        left = sum(remaining)
        if left == 0:
            raise ValueError("the shoe ran out before the dealer's hand was complete")
        weighted = [Fraction(0)] * len(FINAL_TOTALS)
        for value in POINT_VALUES:
            copies = remaining[value - 1]
            if not copies:
                continue
            after = (*remaining[: value - 1], copies - 1, *remaining[value:])
            branch = play(after, hard + value, ace=ace or value == 1, cards=cards + 1)
            for index, probability in enumerate(branch):
                if probability:
                    weighted[index] += copies * probability
        result = tuple(p / left for p in weighted)
        memo[remaining] = result
        return result

    distribution = play(shoe, 0, ace=False, cards=0)
    return dict(zip(FINAL_TOTALS, distribution, strict=True))


@functools.cache
def dealer_final_totals(shoe: ShoeSpec, *, hits_soft_17: bool) -> dict[str, Fraction]:
    """`dealer_final_totals_of` a full shoe, worked out once per shoe and rule."""
    return dealer_final_totals_of(shoe.composition(), hits_soft_17=hits_soft_17)


@dataclass(frozen=True, slots=True)
class DealerAnalysis:
    """The dealer's final-total distribution at a Triple Attack table."""

    shoe: ShoeSpec
    hits_soft_17: bool
    probabilities: Mapping[str, Fraction]

    @property
    def rule(self) -> str:
        return "hits soft 17" if self.hits_soft_17 else "stands on soft 17"

    def to_mapping(self) -> dict[str, Any]:
        return {
            "wager": "dealer_final_total",
            "citation": CITATION,
            "decks": self.shoe.decks,
            "deck_kind": self.shoe.deck_kind.value,
            "dealer_hits_soft_17": self.hits_soft_17,
            "totals": [
                {"total": name, "label": LABELS[name], "probability": exact_and_decimal(p)}
                for name, p in self.probabilities.items()
            ],
        }


def analyse_dealer(shoe: ShoeSpec, *, hits_soft_17: bool) -> DealerAnalysis:
    return DealerAnalysis(shoe, hits_soft_17, dealer_final_totals(shoe, hits_soft_17=hits_soft_17))
