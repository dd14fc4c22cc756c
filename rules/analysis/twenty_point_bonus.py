"""The 20 point bonus wager (13:69F-2.24), exactly, from the shoe's composition.

The player's first two cards decide the wager (2.24(a), (f), (g)); only the top line also
needs the dealer's two cards. Other players' cards and the dealer's upcard are dealt in
between but stay unknown to the analysis, so by symmetry the player's two cards are a
uniform draw without replacement from the full shoe, and the dealer's two a uniform draw
from what is left after them.

Each line is a closed form in the card counts; `no_20` is worked out separately, from the
point classes, so that the lines summing to one is a check and not a definition.
"""

from __future__ import annotations

import functools
from fractions import Fraction
from typing import TYPE_CHECKING

from rules.analysis.outcomes import WagerAnalysis
from rules.analysis.shoe import POINT_VALUES, ShoeSpec, point_counts, two_card_total
from rules.cards import QUEEN_OF_HEARTS, Card, Rank, Suit
from rules.paytables import TwentyPointOutcome

if TYPE_CHECKING:
    from collections.abc import Mapping

    from rules.money import Odds

NO_TWENTY = "no_20"  # the engine's outcome for a losing wager (rules/twenty_point.py)
CITATION = "13:69F-2.24"

LABELS: dict[str, str] = {
    TwentyPointOutcome.QUEEN_OF_HEARTS_PAIR_DEALER_BLACKJACK.value: (
        "queen of hearts pair and dealer blackjack"
    ),
    TwentyPointOutcome.QUEEN_OF_HEARTS_PAIR.value: "queen of hearts pair",
    TwentyPointOutcome.MATCHED_20.value: "matched 20",
    TwentyPointOutcome.SUITED_20.value: "suited 20",
    TwentyPointOutcome.ANY_20.value: "any 20",
    NO_TWENTY: "no 20 (the wager loses)",
}

NOTES = (
    (
        "The queen of hearts pair and dealer blackjack line is paid whenever the dealer's two "
        "cards are an ace and a ten-value card, with or without a card reader: 2.24(e) "
        "changes when it is paid, not how much."
    ),
    (
        "A posted 2.24(h) aggregate limit can cap that line when several players win it in "
        "one round; the figures here pay it in full."
    ),
)


def twenty_point_distribution_of(composition: Mapping[Card, int]) -> dict[str, Fraction]:
    """The probability of each outcome, `no_20` included, for a player seated at `composition`.

    Needs four cards at least: the player's two and the dealer's two.
    """
    cards = sum(composition.values())
    if cards < 4:
        raise ValueError(f"a round needs four cards at least; this shoe holds {cards}")
    ordered_pairs = cards * (cards - 1)  # the player's first and second card, in order

    def copies(card: Card) -> int:
        return composition.get(card, 0)

    ten_ranks = tuple(rank for rank in Rank if rank.is_ten_value)
    tens_by_suit = {suit: [copies(Card(rank, suit)) for rank in ten_ranks] for suit in Suit}
    aces_by_suit = {suit: copies(Card(Rank.ACE, suit)) for suit in Suit}
    nines_by_suit = {suit: copies(Card(Rank.NINE, suit)) for suit in Suit}
    tens = sum(sum(counts) for counts in tens_by_suit.values())
    aces = sum(aces_by_suit.values())
    nines = sum(nines_by_suit.values())

    # Queen of hearts pair; with the top line the dealer's blackjack comes from the cards
    # left after the two queens (each a ten-value card), the ace up and the ten in the hole
    # or the other way round.
    queens = copies(QUEEN_OF_HEARTS)
    queen_pairs = queens * (queens - 1)
    dealer_blackjacks = 2 * aces * (tens - 2) if queen_pairs else 0
    top = Fraction(queen_pairs * dealer_blackjacks, ordered_pairs * (cards - 2) * (cards - 3))
    queen_pair = Fraction(queen_pairs, ordered_pairs) - top

    # Two copies of one ten-value card; the queen of hearts pair is its own line (2.24(g)1).
    matched = sum(
        n * (n - 1)
        for suit, counts in tens_by_suit.items()
        for rank, n in zip(ten_ranks, counts, strict=True)
        if Card(rank, suit) != QUEEN_OF_HEARTS
    )
    # Same suit but not identical: two different ten-value cards, or an ace and a nine.
    suited = sum(
        sum(counts) ** 2 - sum(n * n for n in counts) + 2 * aces_by_suit[suit] * nines_by_suit[suit]
        for suit, counts in tens_by_suit.items()
    )
    # Different suits (2.24(g)3): all ordered pairs of the two kinds less the same-suit ones.
    any_twenty = tens**2 - sum(sum(counts) ** 2 for counts in tens_by_suit.values())
    any_twenty += 2 * (aces * nines - sum(aces_by_suit[s] * nines_by_suit[s] for s in Suit))

    no_twenty = _ordered_pairs_not_twenty(composition)
    return {
        TwentyPointOutcome.QUEEN_OF_HEARTS_PAIR_DEALER_BLACKJACK.value: top,
        TwentyPointOutcome.QUEEN_OF_HEARTS_PAIR.value: queen_pair,
        TwentyPointOutcome.MATCHED_20.value: Fraction(matched, ordered_pairs),
        TwentyPointOutcome.SUITED_20.value: Fraction(suited, ordered_pairs),
        TwentyPointOutcome.ANY_20.value: Fraction(any_twenty, ordered_pairs),
        NO_TWENTY: Fraction(no_twenty, ordered_pairs),
    }


def _ordered_pairs_not_twenty(composition: Mapping[Card, int]) -> int:
    """Ordered two-card draws whose total is not 20, counted by point value alone."""
    by_points = point_counts(composition)
    return sum(
        by_points[a - 1] * (by_points[b - 1] - (a == b))
        for a in POINT_VALUES
        for b in POINT_VALUES
        if two_card_total(a, b) != 20
    )


@functools.cache
def twenty_point_distribution(shoe: ShoeSpec) -> dict[str, Fraction]:
    """`twenty_point_distribution_of` a full shoe, worked out once per shoe."""
    return twenty_point_distribution_of(shoe.composition())


def analyse_twenty_point_bonus(
    shoe: ShoeSpec,
    paytable: Mapping[TwentyPointOutcome, Odds],
    paytable_name: str,
) -> WagerAnalysis:
    """Hit frequency, return and house edge of `paytable` on `shoe`, line by line."""
    return WagerAnalysis.of(
        "twenty_point_bonus",
        CITATION,
        shoe,
        paytable_name,
        twenty_point_distribution(shoe),
        paytable,
        LABELS,
        NOTES,
    )
