"""Paytables as data, and the hand classifications they are keyed by.

Lines are listed best first: "paid once for the highest qualifying hand" (13:69F-2.24(f))
means the first line a hand qualifies for, in this order.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

from rules.cards import QUEEN_OF_HEARTS, Card, Rank
from rules.hands import hand_value
from rules.money import Odds

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence


class TwentyPointOutcome(enum.Enum):
    """13:69F-2.24(f) and (g), best first."""

    QUEEN_OF_HEARTS_PAIR_DEALER_BLACKJACK = "queen_of_hearts_pair_dealer_blackjack"
    QUEEN_OF_HEARTS_PAIR = "queen_of_hearts_pair"
    MATCHED_20 = "matched_20"  # (g)1: two identical cards, not the queen of hearts pair
    SUITED_20 = "suited_20"  # (g)2
    ANY_20 = "any_20"  # (g)3


TWENTY_POINT_PAYTABLES: dict[str, dict[TwentyPointOutcome, Odds]] = {
    "A": {
        TwentyPointOutcome.QUEEN_OF_HEARTS_PAIR_DEALER_BLACKJACK: Odds(1000),
        TwentyPointOutcome.QUEEN_OF_HEARTS_PAIR: Odds(125),
        TwentyPointOutcome.MATCHED_20: Odds(19),
        TwentyPointOutcome.SUITED_20: Odds(9),
        TwentyPointOutcome.ANY_20: Odds(4),
    },
    "B": {
        TwentyPointOutcome.QUEEN_OF_HEARTS_PAIR_DEALER_BLACKJACK: Odds(1000),
        TwentyPointOutcome.QUEEN_OF_HEARTS_PAIR: Odds(200),
        TwentyPointOutcome.MATCHED_20: Odds(25),
        TwentyPointOutcome.SUITED_20: Odds(10),
        TwentyPointOutcome.ANY_20: Odds(4),
    },
}
# "at no less than the odds in the following paytable selected by the casino licensee": a
# posted custom paytable must pay at least the lower of A and B on every line, which is A.
TWENTY_POINT_MINIMUM = TWENTY_POINT_PAYTABLES["A"]


def is_queen_of_hearts_pair(cards: Sequence[Card]) -> bool:
    return len(cards) == 2 and cards[0] == QUEEN_OF_HEARTS and cards[1] == QUEEN_OF_HEARTS


def classify_twenty(cards: Sequence[Card]) -> TwentyPointOutcome | None:
    """The highest 13:69F-2.24(g) class a two-card hand qualifies for, ignoring the dealer.

    A queen-of-hearts pair is returned as the pair; whether the dealer's blackjack lifts it
    to the top line is decided when the hole card is known (2.24(e)). Ace + nine is a point
    count of 20 (docs/procedures.md), so A9 suited is a suited 20.
    """
    if len(cards) != 2 or hand_value(cards).total != 20:
        return None
    first, second = cards
    if is_queen_of_hearts_pair(cards):
        return TwentyPointOutcome.QUEEN_OF_HEARTS_PAIR
    if first == second:
        return TwentyPointOutcome.MATCHED_20
    if first.suit is second.suit:
        return TwentyPointOutcome.SUITED_20
    return TwentyPointOutcome.ANY_20


class BonusOutcome(enum.Enum):
    """13:69F-26.6(d): the optional bonus by the dealer's third card, best first."""

    THREE_EIGHTS_SUITED = "three_eights_suited"  # (d)3ii
    THREE_EIGHTS_COLOURED = "three_eights_coloured"  # (d)3i
    THIRD_CARD_SIX = "third_card_six"
    THIRD_CARD_SEVEN = "third_card_seven"
    THIRD_CARD_EIGHT = "third_card_eight"
    THIRD_CARD_NINE = "third_card_nine"
    THIRD_CARD_TEN = "third_card_ten"  # any ten-value card


OPTIONAL_BONUS_PAYTABLES: dict[str, dict[BonusOutcome, Odds]] = {
    "regulation": {
        BonusOutcome.THREE_EIGHTS_SUITED: Odds(200),
        BonusOutcome.THREE_EIGHTS_COLOURED: Odds(50),
        BonusOutcome.THIRD_CARD_SIX: Odds(15),
        BonusOutcome.THIRD_CARD_SEVEN: Odds(10),
        BonusOutcome.THIRD_CARD_EIGHT: Odds(8),
        BonusOutcome.THIRD_CARD_NINE: Odds(6),
        BonusOutcome.THIRD_CARD_TEN: Odds(3),
    },
}
OPTIONAL_BONUS_MINIMUM = OPTIONAL_BONUS_PAYTABLES["regulation"]

_THIRD_CARD_LINE = {
    6: BonusOutcome.THIRD_CARD_SIX,
    7: BonusOutcome.THIRD_CARD_SEVEN,
    8: BonusOutcome.THIRD_CARD_EIGHT,
    9: BonusOutcome.THIRD_CARD_NINE,
    10: BonusOutcome.THIRD_CARD_TEN,
}


def classify_dealer_bust(dealer_cards: Sequence[Card]) -> BonusOutcome | None:
    """The 26.6(d) line a three-card dealer hand pays, or None when the bonus loses.

    Only a hand of exactly three cards whose total exceeds 21 wins (26.6(d)1, 2). Three
    eights of one suit take precedence over three eights of one colour, which take
    precedence over the third-card line (26.6(d)3; docs/procedures.md: exclusive).
    """
    if len(dealer_cards) != 3 or hand_value(dealer_cards).total <= 21:
        return None
    if all(card.rank is Rank.EIGHT for card in dealer_cards):
        if len({card.suit for card in dealer_cards}) == 1:
            return BonusOutcome.THREE_EIGHTS_SUITED
        if len({card.colour for card in dealer_cards}) == 1:
            return BonusOutcome.THREE_EIGHTS_COLOURED
    third = dealer_cards[2]
    # A third card that busts a two-card total under 17 is worth 6 to 10 (an ace or 2-5
    # cannot bust it), so the lookup cannot miss for a legal deal.
    return _THIRD_CARD_LINE[third.points]


def at_least(
    posted: Mapping[enum.Enum, Odds], minimum: Mapping[enum.Enum, Odds]
) -> list[enum.Enum]:
    """The lines of a posted paytable that pay less than the regulation's minimum."""
    return [line for line, odds in minimum.items() if posted[line].ratio < odds.ratio]
