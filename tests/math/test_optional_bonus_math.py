"""13:69F-26.6: the Double Attack optional bonus's exact odds against enumeration."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from rules.analysis.optional_bonus import (
    THREE_CARDS_21_OR_LESS,
    TWO_CARDS_17_OR_MORE,
    analyse_optional_bonus,
    optional_bonus_distribution,
    optional_bonus_distribution_of,
)
from rules.analysis.shoe import ShoeSpec
from rules.cards import Card, DeckKind, Rank, Suit, shoe_composition
from rules.money import Odds
from rules.paytables import OPTIONAL_BONUS_PAYTABLES, BonusOutcome
from tests.math.brute_force import optional_bonus_by_brute_force, physical_cards, without_zeros

REGULATION = OPTIONAL_BONUS_PAYTABLES["regulation"]
SUITED = BonusOutcome.THREE_EIGHTS_SUITED.value
COLOURED = BonusOutcome.THREE_EIGHTS_COLOURED.value


@pytest.mark.parametrize("kind", list(DeckKind))
@pytest.mark.parametrize("decks", range(1, 9))
def test_outcomes_sum_to_one(decks: int, kind: DeckKind) -> None:
    assert sum(optional_bonus_distribution(ShoeSpec(decks, kind)).values()) == 1


@pytest.mark.parametrize("kind", list(DeckKind))
def test_every_three_card_deal_of_one_deck(kind: DeckKind) -> None:
    composition = shoe_composition(1, kind)
    brute = optional_bonus_by_brute_force(physical_cards(composition))
    assert without_zeros(optional_bonus_distribution_of(composition)) == without_zeros(brute)


def test_three_eights_of_one_suit_and_of_one_colour_against_enumeration() -> None:
    # Three decks' eights (three of each suit) and a few others: both eights lines happen.
    cards = [Card(Rank.EIGHT, suit) for suit in Suit] * 3
    cards += list(_one_each("6H 9C 10D KS 5H AS 2D"))
    counts: dict[Card, int] = {}
    for card in cards:
        counts[card] = counts.get(card, 0) + 1
    exact = optional_bonus_distribution_of(counts)
    assert exact[SUITED] > 0
    assert exact[COLOURED] > 0
    assert without_zeros(exact) == without_zeros(optional_bonus_by_brute_force(cards))


def test_three_eights_in_eight_spanish_decks_by_hand() -> None:
    # Each suit holds 8 eights and each colour 16, of 384 cards.
    exact = optional_bonus_distribution(ShoeSpec(8, DeckKind.SPANISH))
    triples = math.perm(384, 3)
    assert exact[SUITED] == Fraction(4 * math.perm(8, 3), triples)
    assert exact[COLOURED] == Fraction(2 * math.perm(16, 3) - 4 * math.perm(8, 3), triples)


def test_soft_totals_under_17_never_win_and_ace_six_stands() -> None:
    # A, 5, K in every order: A5 or 5A is soft 16 and draws the king (16), A K is a
    # blackjack, 5 K is 15 and draws the ace (16). Nothing busts.
    ace_five = without_zeros(optional_bonus_distribution_of(_one_each("AS 5H KD")))
    assert ace_five == {
        THREE_CARDS_21_OR_LESS: Fraction(4, 6),
        TWO_CARDS_17_OR_MORE: Fraction(2, 6),
    }
    # A, 6, K: A6 is 17 and stands (the wager loses on two cards), not soft 17 drawing a ten.
    ace_six = without_zeros(optional_bonus_distribution_of(_one_each("AS 6H KD")))
    assert ace_six == {THREE_CARDS_21_OR_LESS: Fraction(2, 6), TWO_CARDS_17_OR_MORE: Fraction(4, 6)}


def _one_each(text: str) -> dict[Card, int]:
    return {Card.parse(word): 1 for word in text.split()}


@pytest.mark.parametrize(
    ("decks", "kind", "edge_percent"),
    [(8, DeckKind.SPANISH, 8.0064), (6, DeckKind.STANDARD, 1.9548)],
)
def test_house_edges(decks: int, kind: DeckKind, edge_percent: float) -> None:
    result = analyse_optional_bonus(ShoeSpec(decks, kind), REGULATION, "regulation")
    assert result.total_probability == 1
    assert round(float(result.house_edge) * 100, 4) == edge_percent


def test_a_better_posted_paytable_lowers_the_edge() -> None:
    shoe = ShoeSpec(8, DeckKind.SPANISH)
    better = dict(REGULATION) | {BonusOutcome.THIRD_CARD_TEN: Odds(4)}
    regulation = analyse_optional_bonus(shoe, REGULATION, "regulation")
    custom = analyse_optional_bonus(shoe, better, "custom")
    ten = regulation.probability(BonusOutcome.THIRD_CARD_TEN.value)
    assert regulation.house_edge - custom.house_edge == ten
