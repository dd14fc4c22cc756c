"""13:69F-2.24: the 20 point bonus's exact odds against enumeration and hand-derived forms."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.analysis.shoe import ShoeSpec
from rules.analysis.twenty_point_bonus import (
    NO_TWENTY,
    analyse_twenty_point_bonus,
    twenty_point_distribution,
    twenty_point_distribution_of,
)
from rules.cards import Card, DeckKind, shoe_composition
from rules.paytables import TWENTY_POINT_PAYTABLES, TwentyPointOutcome
from tests.math.brute_force import (
    physical_cards,
    twenty_point_by_brute_force,
    two_card_classes_by_brute_force,
    without_zeros,
)

TOP = TwentyPointOutcome.QUEEN_OF_HEARTS_PAIR_DEALER_BLACKJACK.value
PAIR = TwentyPointOutcome.QUEEN_OF_HEARTS_PAIR.value


@pytest.mark.parametrize("kind", list(DeckKind))
@pytest.mark.parametrize("decks", range(1, 9))
def test_outcomes_sum_to_one(decks: int, kind: DeckKind) -> None:
    # no_20 is worked out from the point classes, apart from the winning lines.
    assert sum(twenty_point_distribution(ShoeSpec(decks, kind)).values()) == 1


@pytest.mark.parametrize("kind", list(DeckKind))
def test_two_card_classes_agree_with_every_pair_of_a_two_deck_shoe(kind: DeckKind) -> None:
    composition = shoe_composition(2, kind)
    exact = twenty_point_distribution_of(composition)
    exact[PAIR] += exact.pop(TOP)  # two cards alone cannot tell the top line from the pair
    brute = two_card_classes_by_brute_force(physical_cards(composition))
    assert without_zeros(exact) == without_zeros(brute)


def test_top_line_agrees_with_every_four_card_deal_of_a_small_shoe() -> None:
    # Two queens of hearts, aces, ten-values, nines and blanks: every line can happen.
    cards = _cards("QH QH QS KD 10C JH AS AH AD 9S 9H 5C 8D")
    exact = twenty_point_distribution_of(_count(cards))
    assert exact[TOP] > 0
    assert without_zeros(exact) == without_zeros(twenty_point_by_brute_force(cards))


@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=0, max_value=2**32), st.integers(min_value=4, max_value=10))
def test_any_small_shoe_agrees_with_enumeration(seed: int, size: int) -> None:
    """Reduced compositions drawn from two decks, tilted toward the cards that score."""
    pool = physical_cards(shoe_composition(2, DeckKind.STANDARD))
    scoring = [c for c in pool if c.points in (1, 9, 10)]
    rng = random.Random(seed)  # noqa: S311 - test data, not a secret
    cards = [*rng.sample(scoring, size - 2), *_cards("QH QH")]
    exact = twenty_point_distribution_of(_count(cards))
    assert without_zeros(exact) == without_zeros(twenty_point_by_brute_force(cards))


@pytest.mark.parametrize("decks", [2, 6, 8])
def test_closed_forms_in_the_paytables_own_words(decks: int) -> None:
    """Each line written out by hand for `decks` standard decks (52 cards: 16 ten-values,
    4 aces, 4 nines; one queen of hearts per deck)."""
    n = 52 * decks
    pairs = Fraction(1, n * (n - 1))
    qh = decks * (decks - 1) * pairs  # both queens of hearts
    dealer_blackjack = Fraction(2 * (4 * decks) * (16 * decks - 2), (n - 2) * (n - 3))
    matched = 15 * decks * (decks - 1) * pairs  # 16 ten-value cards less the queen of hearts
    # Per suit: 4 ten-value cards, ordered pairs of two different ones; ace and nine.
    suited = 4 * (4 * 3 * decks * decks + 2 * decks * decks) * pairs
    # Different suits: 16d ten-values times the 12d of other suits; aces times other nines.
    any_20 = (16 * decks * 12 * decks + 2 * 4 * decks * 3 * decks) * pairs
    expected = {
        TOP: qh * dealer_blackjack,
        PAIR: qh * (1 - dealer_blackjack),
        TwentyPointOutcome.MATCHED_20.value: matched,
        TwentyPointOutcome.SUITED_20.value: suited,
        TwentyPointOutcome.ANY_20.value: any_20,
    }
    expected[NO_TWENTY] = 1 - sum(expected.values(), Fraction(0))
    assert twenty_point_distribution(ShoeSpec(decks)) == expected


def test_six_deck_house_edges_of_both_paytables() -> None:
    # The hand-derived lines above, priced: returns sum p * odds less P(lose).
    a = analyse_twenty_point_bonus(ShoeSpec(6), TWENTY_POINT_PAYTABLES["A"], "A")
    b = analyse_twenty_point_bonus(ShoeSpec(6), TWENTY_POINT_PAYTABLES["B"], "B")
    assert a.hit_frequency == Fraction(10272, 97032)  # (96 * 95 + 2 * 24 * 24) / (312 * 311)
    assert round(float(a.house_edge) * 100, 4) == 24.7089
    assert round(float(b.house_edge) * 100, 4) == 17.6391
    # Paytable B pays at least as much on every line, so it can only be cheaper for a player.
    assert b.house_edge < a.house_edge


def test_house_edge_is_one_minus_what_comes_back() -> None:
    result = analyse_twenty_point_bonus(ShoeSpec(8), TWENTY_POINT_PAYTABLES["B"], "B")
    back = sum(o.probability * (o.odds.ratio + 1) for o in result.outcomes if o.odds)
    assert result.house_edge == 1 - back
    assert result.total_probability == 1


def test_one_deck_has_no_queen_of_hearts_pair() -> None:
    distribution = twenty_point_distribution(ShoeSpec(1))
    assert distribution[TOP] == distribution[PAIR] == 0


def test_a_shoe_too_small_for_a_round_is_refused() -> None:
    with pytest.raises(ValueError, match="four cards"):
        twenty_point_distribution_of(_count([Card.parse("QH")] * 3))


def _count(cards: list[Card]) -> dict[Card, int]:
    counts: dict[Card, int] = {}
    for card in cards:
        counts[card] = counts.get(card, 0) + 1
    return counts


def _cards(text: str) -> list[Card]:
    return [Card.parse(word) for word in text.split()]
