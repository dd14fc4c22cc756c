"""The Triple Attack attack wagers, 13:69F-36.5(a)-(d), settled when (g) says."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rules.games import ATTACK_WAGERS
from rules.hands import hand_value
from rules.money import Odds
from rules.outputs import Phase, Result

if TYPE_CHECKING:
    from rules.outputs import Settlement
    from rules.table import Hand, Round

EVEN_MONEY = Odds(1)  # 36.5(g): "at odds of 1 to 1"


def hand_outcome(hand: Hand, dealer_total: int) -> tuple[Result, str, str]:  # noqa: PLR0911 - one return per 36.5 clause
    """(result, outcome, citation) of a finished hand against the dealer's final total."""
    total = hand.value.total
    if total > 21:
        return Result.LOSE, "player_bust", "13:69F-36.5(a)"
    if total == 21:
        return Result.WIN, "blackjack" if hand.natural else "player_21", "13:69F-36.5(b)"
    if len(hand.cards) >= 6:
        return Result.WIN, "six_card_hand", "13:69F-36.5(b)"
    if dealer_total > 22:
        return Result.WIN, "dealer_bust", "13:69F-36.5(c)"
    if dealer_total == 22:
        return Result.PUSH, "dealer_22_push", "13:69F-36.5(d)"
    if total > dealer_total:
        return Result.WIN, "higher_total", "13:69F-36.5(c)"
    if total == dealer_total:
        return Result.PUSH, "equal_total", "13:69F-36.5(d)"
    return Result.LOSE, "lower_total", "13:69F-36.5(c), (d)"


def hand_needs_dealer(hand: Hand) -> bool:
    """Whether the dealer's total can still matter to this hand (36.5(b) wins regardless)."""
    total = hand.value.total
    return total < 21 and len(hand.cards) < 6


def settle_bust(round_: Round, seat: int, hand: Hand) -> list[Settlement]:
    """36.5(g): "the dealer shall immediately collect the player's attack wagers"."""
    return _settle_hand(
        round_, seat, hand, Result.LOSE, "player_bust", "13:69F-36.5(a), (g)", Phase.PLAYER_BUST
    )


def settle_round_end(round_: Round) -> list[Settlement]:
    """36.5(g): after the round, every remaining attack wager at 1 to 1.

    Order (the text gives none for this step): the dealer's right first as elsewhere in the
    rules, so the highest seat first; a seat's split hands in the order they were played;
    first, second, third attack wager.
    """
    out: list[Settlement] = []
    dealer_total = hand_value(round_.dealer).total
    for number in sorted(round_.dealt_in, reverse=True):
        for hand in round_.seats[number].hands:
            if hand.settled:
                continue
            result, outcome, citation = hand_outcome(hand, dealer_total)
            out.extend(
                _settle_hand(
                    round_, number, hand, result, outcome, f"{citation}, (g)", Phase.ROUND_END
                )
            )
    return out


def _settle_hand(
    round_: Round, seat: int, hand: Hand, result: Result, outcome: str, citation: str, phase: Phase
) -> list[Settlement]:
    hand.settled = True
    out = []
    for kind in ATTACK_WAGERS:
        stake = hand.stakes.get(kind)
        if stake is None:
            continue
        out.append(
            round_.settle(
                seat,
                kind,
                stake,
                outcome=outcome,
                phase=phase,
                citation=citation,
                odds=EVEN_MONEY if result is Result.WIN else None,
                result=result,
                hand=hand.number,
            )
        )
    return out
