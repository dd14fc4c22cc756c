"""The dealer's final-total distribution (13:69F-36.5) against enumeration, and its speed."""

from __future__ import annotations

import time
from collections import Counter
from fractions import Fraction

import pytest

from rules.analysis import dealer_totals, optional_bonus, twenty_point_bonus
from rules.analysis.dealer_totals import (
    BLACKJACK,
    FINAL_TOTALS,
    dealer_final_totals,
    dealer_final_totals_of,
)
from rules.analysis.shoe import ShoeSpec
from rules.cards import Card, DeckKind
from tests.math.brute_force import dealer_totals_by_brute_force, without_zeros

SMALL_SHOES = [
    "AS AH 2C 3D 4S 5H 6C 7D 8S 9H 10C KD QH",  # every point value, two aces
    "AS 2C 2D 3D 3S 4S 5H 6C 6D 7D KD QH",  # many small cards: long hands
    "AS AH AD 6C 6D 6H KD QH JS",  # soft 17s: the two rules part
]


@pytest.mark.parametrize("hits_soft_17", [True, False])
@pytest.mark.parametrize("shoe", SMALL_SHOES)
def test_recursion_agrees_with_every_order_of_a_small_shoe(
    shoe: str,
    hits_soft_17: bool,  # noqa: FBT001 - parametrized
) -> None:
    cards = [Card.parse(text) for text in shoe.split()]
    exact = dealer_final_totals_of(Counter(cards), hits_soft_17=hits_soft_17)
    brute = dealer_totals_by_brute_force(cards, hits_soft_17=hits_soft_17)
    assert without_zeros(exact) == without_zeros(brute)


@pytest.mark.parametrize("hits_soft_17", [True, False])
@pytest.mark.parametrize("kind", list(DeckKind))
@pytest.mark.parametrize("decks", [1, 2, 6, 8])
def test_totals_sum_to_one(
    decks: int,
    kind: DeckKind,
    hits_soft_17: bool,  # noqa: FBT001 - parametrized
) -> None:
    distribution = dealer_final_totals(ShoeSpec(decks, kind), hits_soft_17=hits_soft_17)
    assert tuple(distribution) == FINAL_TOTALS
    assert sum(distribution.values()) == 1


@pytest.mark.parametrize("kind", list(DeckKind))
def test_blackjack_is_an_ace_and_a_ten_value_card_in_either_order(kind: DeckKind) -> None:
    shoe = ShoeSpec(8, kind)
    n = 8 * kind.size
    aces, tens = 32, 16 * 8 if kind is DeckKind.STANDARD else 12 * 8
    distribution = dealer_final_totals(shoe, hits_soft_17=True)
    assert distribution[BLACKJACK] == Fraction(2 * aces * tens, n * (n - 1))


def test_hitting_soft_17_moves_probability_out_of_17() -> None:
    shoe = ShoeSpec(8, DeckKind.SPANISH)
    hits = dealer_final_totals(shoe, hits_soft_17=True)
    stands = dealer_final_totals(shoe, hits_soft_17=False)
    assert hits["17"] < stands["17"]
    assert hits[BLACKJACK] == stands[BLACKJACK]
    assert hits["22"] + hits["over_22"] > stands["22"] + stands["over_22"]


@pytest.mark.serial  # a time figure: measured alone, after the parallel run
def test_an_eight_deck_analysis_takes_under_a_second() -> None:
    """From cold caches: every game's figures for 8 decks (the goal: under 1 s)."""
    for module in (dealer_totals, optional_bonus, twenty_point_bonus):
        for cached in vars(module).values():
            if hasattr(cached, "cache_clear"):
                cached.cache_clear()
    started = time.perf_counter()
    twenty_point_bonus.twenty_point_distribution(ShoeSpec(8))
    optional_bonus.optional_bonus_distribution(ShoeSpec(8, DeckKind.SPANISH))
    dealer_final_totals(ShoeSpec(8, DeckKind.SPANISH), hits_soft_17=True)
    assert time.perf_counter() - started < 1.0
