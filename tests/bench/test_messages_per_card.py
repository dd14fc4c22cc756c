"""The messages-per-card bench counts what the table service would hand the broker."""

from __future__ import annotations

import structlog

from bench.messages_per_card import count
from rules.games import Game


def test_the_round_state_leaves_the_numbering_and_a_burst_costs_one_state() -> None:
    with structlog.testing.capture_logs():
        before = count(Game.TRIPLE_ATTACK, 10, pace=5.0, contract=2)
        after = count(Game.TRIPLE_ATTACK, 10, pace=5.0, contract=3)
    assert before.cards == after.cards > 0
    assert before.rounds == after.rounds == 10
    # The same numbered messages either way; only the snapshots differ.
    numbered = {k: n for k, n in before.kinds.items() if k != "round"}
    assert {k: n for k, n in after.kinds.items() if k != "round"} == numbered
    # Contract 2: a snapshot after every event that changed the round; contract 3: a wager
    # burst (seven seats' wagers sent together) and the cards 200 ms apart share states.
    assert after.kinds["round"] < before.kinds["round"]
    assert after.per_card < before.per_card


def test_under_contract_4_a_card_is_about_two_messages() -> None:
    """One numbered message an input: the card's, and the requests' between two cards
    (docs/performance.md, "One message an input"); the goal is at most three."""
    with structlog.testing.capture_logs():
        three = count(Game.DOUBLE_ATTACK, 20, pace=1.25, contract=3)
        four = count(Game.DOUBLE_ATTACK, 20, pace=1.25, contract=4)
    assert four.cards == three.cards > 0
    assert four.rounds == three.rounds == 20
    assert all(k in ("round", "state") or k.startswith("surveillance/") for k in four.kinds)
    assert four.per_card <= 3.0 < three.per_card
