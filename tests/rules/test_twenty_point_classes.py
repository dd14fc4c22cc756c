"""13:69F-2.24(g): the definitions of the winning hands, one class at a time."""

from __future__ import annotations

import pytest

from rules.cards import Card
from rules.paytables import TwentyPointOutcome, classify_twenty


def _hand(text: str) -> list[Card]:
    return [Card.parse(part) for part in text.split()]


@pytest.mark.parametrize("hand", ["KD QS 2C", "KD 9D", "AS AH", "AS KS", "5H 5H"])
def test_2_24_g_only_two_cards_totalling_20_qualify(hand: str) -> None:
    assert classify_twenty(_hand(hand)) is None


@pytest.mark.parametrize("hand", ["KD KD", "10S 10S", "JC JC", "QS QS", "QD QD"])
def test_2_24_g_1_matched_20_is_two_identical_cards(hand: str) -> None:
    assert classify_twenty(_hand(hand)) is TwentyPointOutcome.MATCHED_20


def test_2_24_g_1_the_queen_of_hearts_pair_is_not_a_matched_20() -> None:
    assert classify_twenty(_hand("QH QH")) is TwentyPointOutcome.QUEEN_OF_HEARTS_PAIR


@pytest.mark.parametrize("hand", ["KD JD", "AC 9C", "9C AC", "QH KH", "10H QH"])
def test_2_24_g_2_suited_20_is_two_cards_of_one_suit(hand: str) -> None:
    assert classify_twenty(_hand(hand)) is TwentyPointOutcome.SUITED_20


@pytest.mark.parametrize("hand", ["KD KH", "KD JH", "AS 9D", "QH QD", "10C 10S"])
def test_2_24_g_3_any_20_is_two_cards_of_different_suits(hand: str) -> None:
    assert classify_twenty(_hand(hand)) is TwentyPointOutcome.ANY_20
