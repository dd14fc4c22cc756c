"""Brute-force enumeration over physical cards, judged by the rules core's own classifiers.

Every ordered deal of distinct cards is equally likely; counting them is slow but has
nothing to get wrong, and it decides hands with `rules.paytables` and `rules.hands`, the
code the engine settles with, not with the analysis's arithmetic.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from fractions import Fraction
from typing import TYPE_CHECKING

from rules.analysis.dealer_totals import final_total_name
from rules.analysis.optional_bonus import THREE_CARDS_21_OR_LESS, TWO_CARDS_17_OR_MORE
from rules.analysis.twenty_point_bonus import NO_TWENTY
from rules.hands import hand_value, is_blackjack
from rules.paytables import TwentyPointOutcome, classify_dealer_bust, classify_twenty

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from rules.cards import Card


def physical_cards(composition: Mapping[Card, int]) -> list[Card]:
    return [card for card, copies in composition.items() for _ in range(copies)]


def twenty_point_by_brute_force(cards: Sequence[Card]) -> dict[str, Fraction]:
    """Every ordered (player, player, dealer up, dealer hole) deal of four distinct cards."""
    counts: Counter[str] = Counter()
    for first, second, up, hole in itertools.permutations(cards, 4):
        line = classify_twenty([first, second])
        if line is TwentyPointOutcome.QUEEN_OF_HEARTS_PAIR and is_blackjack([up, hole]):
            line = TwentyPointOutcome.QUEEN_OF_HEARTS_PAIR_DEALER_BLACKJACK
        counts[NO_TWENTY if line is None else line.value] += 1
    deals = math.perm(len(cards), 4)
    return {name: Fraction(n, deals) for name, n in counts.items()}


def two_card_classes_by_brute_force(cards: Sequence[Card]) -> dict[str, Fraction]:
    """The player's two cards only: the queen of hearts pair is one class here."""
    counts: Counter[str] = Counter()
    for first, second in itertools.permutations(cards, 2):
        line = classify_twenty([first, second])
        counts[NO_TWENTY if line is None else line.value] += 1
    pairs = math.perm(len(cards), 2)
    return {name: Fraction(n, pairs) for name, n in counts.items()}


def optional_bonus_by_brute_force(cards: Sequence[Card]) -> dict[str, Fraction]:
    """Every ordered (upcard, hole card, third card) of three distinct cards."""
    counts: Counter[str] = Counter()
    for up, hole, third in itertools.permutations(cards, 3):
        if hand_value([up, hole]).total >= 17:
            counts[TWO_CARDS_17_OR_MORE] += 1
            continue
        line = classify_dealer_bust([up, hole, third])
        counts[THREE_CARDS_21_OR_LESS if line is None else line.value] += 1
    triples = math.perm(len(cards), 3)
    return {name: Fraction(n, triples) for name, n in counts.items()}


def dealer_totals_by_brute_force(
    cards: Sequence[Card], *, hits_soft_17: bool
) -> dict[str, Fraction]:
    """Every order the dealer could draw the cards in, until the rule says stand."""
    result: Counter[str] = Counter()

    def draw(hand: list[Card], remaining: list[Card], weight: Fraction) -> None:
        value = hand_value(hand)
        draws = value.total < 17 or (value.total == 17 and value.soft and hits_soft_17)
        if len(hand) >= 2 and not draws:
            name = "blackjack" if is_blackjack(hand) else final_total_name(value.total, len(hand))
            result[name] += weight  # type: ignore[assignment]  # Counter of Fractions
            return
        share = weight / len(remaining)
        for index, card in enumerate(remaining):
            draw([*hand, card], remaining[:index] + remaining[index + 1 :], share)

    draw([], list(cards), Fraction(1))
    return {name: Fraction(p) for name, p in result.items()}


def without_zeros(distribution: Mapping[str, Fraction]) -> dict[str, Fraction]:
    return {name: p for name, p in distribution.items() if p}
