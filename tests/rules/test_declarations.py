"""What the dealer declares: "No more bets" (13:69F-2.24(d)) and each hand's decision.

A card from a shoe arrives on its own line, with no common clock with the dealer console that
declares wagers and decisions; the engine says what it is waiting for (`awaiting`), so that
the daemon can keep a card until its place is declared instead of guessing it. A round log
without declarations still plays as it always did: a card closes the window it meets, and a
card given to the hand in play is a hit.
"""

from __future__ import annotations

import pytest

from rules.engine import Awaiting
from rules.errors import ActionRejected, RoundStateError, WagerRejected
from rules.events import CloseBetting, Shuffle
from rules.games import WagerKind
from rules.outputs import BettingClosed, CardBurned, CardDealt, PlayerActed
from tests.rules.tables import action, cards, feed, make_engine, of_type, play, wager, withdraw

CLOSE = CloseBetting()


def test_2_24_d_no_more_bets_closes_the_window_before_the_first_card() -> None:
    """ "The dealer shall then announce 'No more bets' and deal": once it is called, no
    20 point bonus wager is made, changed or withdrawn, though no card has come yet."""
    engine = make_engine("blackjack")
    feed(engine, [wager(1, "blackjack", "25"), wager(1, "twenty_point_bonus", "5")])
    [closed] = of_type(engine.apply(CLOSE), BettingClosed)
    assert closed.to_mapping() == {
        "type": "betting_closed",
        "round": 1,
        "step": "players_first_card",
    }
    for late in (wager(1, "twenty_point_bonus", "10"), wager(2, "blackjack", "25")):
        with pytest.raises(WagerRejected) as caught:
            engine.apply(late)
        assert caught.value.reason == "betting_closed"
        assert "No more bets" in caught.value.message
        assert "13:69F-2.24(d)" in caught.value.message
    with pytest.raises(WagerRejected):
        engine.apply(withdraw(1, "twenty_point_bonus"))
    assert engine.public_view()["round"]["seats"][0]["wagers"] == {
        "blackjack": "25.00",
        "twenty_point_bonus": "5.00",
    }


def test_2_24_d_no_more_bets_needs_an_open_window_and_a_player() -> None:
    engine = make_engine("blackjack")
    with pytest.raises(RoundStateError) as caught:
        engine.apply(CLOSE)
    assert caught.value.reason == "no_round"
    feed(engine, [wager(2, "blackjack", "25"), CLOSE])
    with pytest.raises(RoundStateError) as caught:
        engine.apply(CLOSE)
    assert caught.value.reason == "betting_not_open"


def test_2_24_d_a_round_log_without_no_more_bets_deals_as_before() -> None:
    """Round logs written before declarations have no `close_betting`: the first card closes
    the window, and a card given to the hand in play is its hit."""
    engine = make_engine("blackjack")
    feed(engine, [wager(1, "blackjack", "25")])
    out = play(engine, "5C 6S 7H 9C")  # seat 1, upcard, seat 1, hole: seat 1 holds 12
    assert len(of_type(out, CardDealt)) == 4
    [dealt] = of_type(play(engine, "4D"), CardDealt)
    assert (dealt.seat, dealt.hand) == (1, 1)


def test_awaiting_names_what_the_next_card_needs() -> None:
    engine = make_engine("blackjack", burn_cards=1)
    assert engine.awaiting() == Awaiting("round")
    engine.apply(Shuffle())
    assert engine.awaiting() is None  # the burn takes the next card, whatever else happens
    assert of_type(engine.apply(cards("9H")[0]), CardBurned)
    assert engine.awaiting() == Awaiting("round")
    feed(engine, [wager(1, "blackjack", "25"), wager(2, "blackjack", "25")])
    assert engine.awaiting() == Awaiting("close_betting")
    engine.apply(CLOSE)
    assert engine.awaiting() is None
    play(engine, "5C 10D 6S 7H KS 9C")  # 1: 5C 7H = 12; 2: 10D KS = 20; up 6S, hole 9C
    assert engine.awaiting() == Awaiting("decision", 1, 1)
    engine.apply(action("hit", 1))
    assert engine.awaiting() is None
    play(engine, "2D")  # seat 1: 14, still in play
    assert engine.awaiting() == Awaiting("decision", 1, 1)
    engine.apply(action("stand", 1))
    assert engine.awaiting() == Awaiting("decision", 2, 1)
    engine.apply(action("stand", 2))
    assert engine.awaiting() is None  # the dealer draws: 6S 9C = 15
    play(engine, "8D")
    assert engine.awaiting() == Awaiting("round")


def test_a_double_and_a_split_take_their_cards_without_another_decision() -> None:
    engine = make_engine("blackjack")
    feed(engine, [wager(1, "blackjack", "25"), wager(2, "blackjack", "25"), CLOSE])
    play(engine, "8C 5D 6S 8H 6C 9C")  # 1: 8C 8H; 2: 5D 6C = 11; up 6S, hole 9C
    engine.apply(action("split", 1))
    assert engine.awaiting() is None  # the first split hand takes its second card
    play(engine, "3D")
    assert engine.awaiting() == Awaiting("decision", 1, 1)
    engine.apply(action("stand", 1, 1))
    assert engine.awaiting() is None  # the second split hand's second card
    play(engine, "10H")
    engine.apply(action("stand", 1, 2))
    engine.apply(action("double", 2))
    assert engine.awaiting() is None
    [dealt] = of_type(play(engine, "9D"), CardDealt)
    assert (dealt.seat, dealt.hand) == (2, 1)


def test_a_hit_declared_is_dealt_before_any_other_decision_of_its_hand() -> None:
    """The dealer deals the card a hit calls for before anything else is decided for the
    hand: a stand that comes while that card is on its way (held, unread) must not take its
    place, or the card would go to the next hand."""
    engine = make_engine("blackjack")
    feed(engine, [wager(1, "blackjack", "25"), CLOSE])
    play(engine, "5C 6S 7H 9C")
    engine.apply(action("hit", 1))
    for name in ("hit", "stand", "surrender"):
        with pytest.raises(ActionRejected) as caught:
            engine.apply(action(name, 1))
        assert caught.value.reason == "hit_pending"
    [dealt] = of_type(play(engine, "4D"), CardDealt)
    assert (dealt.seat, dealt.hand) == (1, 1)
    [acted] = of_type(engine.apply(action("stand", 1)), PlayerActed)
    assert acted.action == "stand"


def test_36_5_f_each_attack_window_is_closed_by_the_dealer() -> None:
    """Triple Attack: the second attack window opens after the players' first cards and the
    third after the upcard; the deal waits for "No more bets" on each."""
    engine = make_engine("triple_attack")
    feed(engine, [wager(1, "first_attack", "10"), CLOSE])
    play(engine, "5C")
    assert engine.awaiting() == Awaiting("close_betting")
    engine.apply(wager(1, "second_attack", "10"))
    engine.apply(CLOSE)
    with pytest.raises(WagerRejected) as caught:
        engine.apply(wager(1, "third_attack", "10"))
    assert caught.value.reason == "window_closed"  # its window opens after the upcard
    play(engine, "6S")  # the upcard
    assert engine.awaiting() == Awaiting("close_betting")
    feed(engine, [wager(1, "third_attack", "10"), CLOSE])
    with pytest.raises(WagerRejected) as caught:
        engine.apply(wager(1, "third_attack", "20"))
    assert caught.value.reason == "betting_closed"
    play(engine, "7H 9C")
    seat = engine.public_view()["round"]["seats"][0]
    assert seat["wagers"] == {
        "first_attack": "10.00",
        "second_attack": "10.00",
        "third_attack": "10.00",
    }


def test_26_6_b_the_double_attack_window_after_the_upcard_is_closed_by_the_dealer() -> None:
    engine = make_engine("double_attack")
    feed(engine, [wager(1, "initial", "10"), wager(1, "optional_bonus", "5"), CLOSE])
    play(engine, "6S")  # the upcard comes first at Double Attack
    assert engine.awaiting() == Awaiting("close_betting")
    feed(engine, [wager(1, "double_attack", "10"), CLOSE])
    assert engine.awaiting() is None
    [dealt] = of_type(play(engine, "5C"), CardDealt)
    assert (dealt.seat, dealt.card is not None) == (1, True)
    wagers = engine.public_view()["round"]["seats"][0]["wagers"]
    assert wagers[WagerKind.DOUBLE_ATTACK.value] == "10.00"
