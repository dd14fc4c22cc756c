"""The Double Attack optional bonus wager (13:69F-26.6), exactly, from the shoe's composition.

The wager is decided by the dealer's first three cards alone (26.6(a), (d)): it wins when
the two-card total is under 17, so the dealer draws a third card (26.6(d); the dealer
draws it whenever a bonus wager is up, docs/procedures.md), and the three cards exceed 21.
A soft two-card total counts its ace as 11 (ace + six is 17 and the wager loses); a soft
total under 17 cannot bust with one more card, so those hands lose too.

At Double Attack the dealer's upcard is dealt first and the players' cards are never seen by
the wager, so the dealer's three cards are a uniform draw without replacement from the
full shoe: other players' cards, unseen, change nothing by symmetry.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import TYPE_CHECKING

from rules.analysis.outcomes import WagerAnalysis
from rules.analysis.shoe import POINT_VALUES, ShoeSpec, point_counts, two_card_total
from rules.cards import Card, Colour, Rank, Suit
from rules.paytables import BonusOutcome

if TYPE_CHECKING:
    from collections.abc import Mapping

    from rules.money import Odds

# The engine's outcomes for a losing wager (rules/double_attack.py), by when it is settled.
TWO_CARDS_17_OR_MORE = "dealer_two_cards_17_or_more"  # 26.6(d): on the first two cards
THREE_CARDS_21_OR_LESS = "dealer_three_cards_21_or_less"  # 26.6(d)1: after the third
CITATION = "13:69F-26.6"

LABELS: dict[str, str] = {
    BonusOutcome.THREE_EIGHTS_SUITED.value: "three eights of one suit",
    BonusOutcome.THREE_EIGHTS_COLOURED.value: "three eights of one colour, not one suit",
    BonusOutcome.THIRD_CARD_SIX.value: "bust, third card a six",
    BonusOutcome.THIRD_CARD_SEVEN.value: "bust, third card a seven",
    BonusOutcome.THIRD_CARD_EIGHT.value: "bust, third card an eight (not three alike)",
    BonusOutcome.THIRD_CARD_NINE.value: "bust, third card a nine",
    BonusOutcome.THIRD_CARD_TEN.value: "bust, third card a ten-value card",
    TWO_CARDS_17_OR_MORE: "two cards 17 or more (the wager loses)",
    THREE_CARDS_21_OR_LESS: "three cards 21 or less (the wager loses)",
}
_BUST_LINE = {
    6: BonusOutcome.THIRD_CARD_SIX.value,
    7: BonusOutcome.THIRD_CARD_SEVEN.value,
    8: BonusOutcome.THIRD_CARD_EIGHT.value,
    9: BonusOutcome.THIRD_CARD_NINE.value,
    10: BonusOutcome.THIRD_CARD_TEN.value,
}


def optional_bonus_distribution_of(composition: Mapping[Card, int]) -> dict[str, Fraction]:
    """The probability of each outcome, both losing ones included, for the dealer's 3 cards."""
    cards = sum(composition.values())
    if cards < 3:
        raise ValueError(f"the dealer needs three cards; this shoe holds {cards}")
    by_points = point_counts(composition)
    # Ordered triples (upcard, hole card, third card) by point class, without replacement.
    triples = dict.fromkeys(LABELS, 0)
    for first in POINT_VALUES:
        for second in POINT_VALUES:
            first_two = by_points[first - 1] * (by_points[second - 1] - (first == second))
            if first_two <= 0:
                continue
            if two_card_total(first, second) >= 17:
                triples[TWO_CARDS_17_OR_MORE] += first_two * (cards - 2)
                continue
            for third in POINT_VALUES:
                ways = first_two * (by_points[third - 1] - (first == third) - (second == third))
                if ways <= 0:
                    continue
                # An ace counts 1 once three cards could bust: a hand busts on its hard total.
                if first + second + third > 21:
                    triples[_BUST_LINE[third]] += ways
                else:
                    triples[THREE_CARDS_21_OR_LESS] += ways

    # 26.6(d)3: three eights (16, a draw, then 24) are paid by suit or colour instead of
    # the third-card line; one suit is exclusive of one colour (docs/procedures.md).
    eights = {suit: composition.get(Card(Rank.EIGHT, suit), 0) for suit in Suit}
    one_suit = sum(math.perm(n, 3) for n in eights.values())
    one_colour = sum(
        math.perm(sum(n for suit, n in eights.items() if suit.colour is colour), 3)
        for colour in Colour
    )
    triples[BonusOutcome.THREE_EIGHTS_SUITED.value] = one_suit
    triples[BonusOutcome.THREE_EIGHTS_COLOURED.value] = one_colour - one_suit
    triples[BonusOutcome.THIRD_CARD_EIGHT.value] -= one_colour
    ordered_triples = math.perm(cards, 3)  # ordered draws of three, without replacement
    return {name: Fraction(ways, ordered_triples) for name, ways in triples.items()}


@functools.cache
def optional_bonus_distribution(shoe: ShoeSpec) -> dict[str, Fraction]:
    """`optional_bonus_distribution_of` a full shoe, worked out once per shoe."""
    return optional_bonus_distribution_of(shoe.composition())


def analyse_optional_bonus(
    shoe: ShoeSpec,
    paytable: Mapping[BonusOutcome, Odds],
    paytable_name: str,
) -> WagerAnalysis:
    """Hit frequency, return and house edge of `paytable` on `shoe`, line by line."""
    return WagerAnalysis.of(
        "optional_bonus",
        CITATION,
        shoe,
        paytable_name,
        optional_bonus_distribution(shoe),
        paytable,
        LABELS,
        notes=(
            (
                "The dealer's three cards are drawn from the full shoe: the players' cards, "
                "unseen by the wager, change nothing by symmetry."
            ),
        ),
    )
