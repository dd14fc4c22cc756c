"""The procedural subsections: who may wager where and when, and what a reader changes.

These are the parts of the texts that read as table procedure (chips on the layout, a
reader that peeks, a player barred until the reshuffle); each becomes an engine rule that
accepts or refuses an event, and each refusal leaves the round exactly as it was.
"""

from __future__ import annotations

import pytest

from rules.errors import WagerRejected
from rules.events import Shuffle, VoidRound
from rules.outputs import HandCompleted, HoleCardRevealed, Phase, Result
from tests.rules.tables import (
    action,
    feed,
    initial_deal,
    make_engine,
    of_type,
    play,
    settlements,
    wager,
    withdraw,
)


def test_2_24_a_a_table_may_leave_the_20_point_bonus_out() -> None:
    engine = make_engine(
        "blackjack", twenty_point_bonus=False, limits={"blackjack": {"min": "10", "max": "500"}}
    )
    feed(engine, [wager(1, "blackjack", "25")])
    with pytest.raises(WagerRejected) as refused:
        engine.apply(wager(1, "twenty_point_bonus", "5"))
    assert refused.value.reason == "not_offered"


@pytest.mark.parametrize(("reader", "revealed_at_deal"), [(True, True), (False, False)])
def test_2_6_j_only_a_reader_reveals_a_dealer_blackjack_before_play(
    *, reader: bool, revealed_at_deal: bool
) -> None:
    """With a reader the ace-up blackjack is known at once; without one, at the dealer's turn."""
    engine = make_engine("blackjack", hole_card_reader=reader)
    feed(engine, [wager(2, "blackjack", "25")])
    out = feed(engine, initial_deal("blackjack", {2: "9S 8D"}, upcard="AH", hole="KC"))
    assert bool(of_type(out, HoleCardRevealed)) is revealed_at_deal
    if not reader:
        # The hole card stays down while seat 2 plays; it shows when play reaches the dealer.
        assert engine.public_view()["round"]["dealer"]["cards"] == ["AH", None]
        [revealed] = of_type(engine.apply(action("stand", 2)), HoleCardRevealed)
        assert (str(revealed.card), revealed.dealer_total) == ("KC", 21)


def test_2_6_j_a_reader_does_not_peek_under_a_small_upcard() -> None:
    engine = make_engine("blackjack")
    feed(engine, [wager(1, "blackjack", "25")])
    out = feed(engine, initial_deal("blackjack", {1: "9S 8D"}, upcard="7H", hole="KC"))
    assert of_type(out, HoleCardRevealed) == []
    assert engine.public_view()["round"]["dealer"]["cards"] == ["7H", None]


def test_26_6_a_the_bonus_wins_on_a_three_card_dealer_bust_only() -> None:
    """A dealer who busts with a fourth card does not pay the bonus: exactly three cards."""
    engine = make_engine("double_attack")
    feed(engine, [wager(1, "initial", "20"), wager(1, "optional_bonus", "5")])
    feed(engine, initial_deal("double_attack", {1: "KS QS"}, upcard="2H", hole="3C"))
    feed(engine, [action("stand", 1)])
    [bonus] = settlements(play(engine, "4D"))  # 2+3+4 = 9: three cards, not over 21
    assert (bonus.result, bonus.outcome, bonus.phase) == (
        Result.LOSE,
        "dealer_three_cards_21_or_less",
        Phase.DEALER_THIRD_CARD,
    )
    # The dealer goes on (9, 15) and busts with a fifth card: the bonus is not paid after all.
    later = play(engine, "6H KH")
    assert settlements(later) == []
    [dealer] = [h for h in of_type(later, HandCompleted) if h.seat is None]
    assert (dealer.total, dealer.reason) == (25, "bust")


def test_26_6_c_the_bonus_is_made_before_the_first_card_and_not_after() -> None:
    engine = make_engine("double_attack")
    feed(engine, [wager(3, "initial", "20"), wager(3, "optional_bonus", "5")])
    feed(engine, [withdraw(3, "optional_bonus"), wager(3, "optional_bonus", "10")])
    play(engine, "9D")  # the upcard: the first card of a double attack round
    before = engine.public_view()
    with pytest.raises(WagerRejected) as refused:
        engine.apply(wager(3, "optional_bonus", "15"))
    assert refused.value.reason == "window_closed"
    assert engine.public_view() == before
    assert before["round"]["seats"][0]["wagers"]["optional_bonus"] == "10.00"


def test_36_5_e_wagers_go_on_the_table_s_own_betting_areas() -> None:
    engine = make_engine("triple_attack", seats=5)
    for seat in (0, 6):
        with pytest.raises(WagerRejected) as refused:
            engine.apply(wager(seat, "first_attack", "25"))
        assert refused.value.reason == "no_such_seat"
    assert engine.public_view()["round"] is None


def test_36_5_h_no_wager_is_removed_or_altered_once_the_first_card_is_out() -> None:
    engine = make_engine("triple_attack")
    feed(engine, [wager(1, "first_attack", "25"), wager(2, "first_attack", "25")])
    play(engine, "9S")  # seat 1's first card
    for event in (
        withdraw(1, "first_attack"),
        wager(1, "first_attack", "50"),
        wager(3, "first_attack", "25"),
    ):
        before = engine.public_view()
        with pytest.raises(WagerRejected) as refused:
            engine.apply(event)
        assert refused.value.reason == "window_closed"
        assert engine.public_view() == before


def test_36_5_i_a_doubled_wager_is_not_altered_and_a_split_carries_every_wager() -> None:
    engine = make_engine("triple_attack")
    feed(engine, [wager(1, "first_attack", "25"), wager(2, "first_attack", "10")])
    play(engine, "8S 5D")
    feed(engine, [wager(1, "second_attack", "25")])
    play(engine, "6C")
    feed(engine, [wager(2, "third_attack", "10")])
    play(engine, "8H 6S 9C")  # seat 1: 8 8; seat 2: 5 6; dealer 6 up, 9 down
    feed(engine, [action("split", 1)])
    play(engine, "2D")  # hand 1: 8 2
    feed(engine, [action("stand", 1, 1)])
    play(engine, "3C")  # hand 2: 8 3
    feed(engine, [action("stand", 1, 2), action("double", 2)])
    for event in (withdraw(2, "third_attack"), wager(2, "third_attack", "20")):
        with pytest.raises(WagerRejected):
            engine.apply(event)
    out = play(engine, "KD 7H")  # seat 2 doubles to 21; the dealer 6+9+7 = 22
    paid = settlements(out)
    assert [(s.seat, s.hand, s.wager.value, s.stake, s.result) for s in paid] == [
        (2, 1, "first_attack", 2000, Result.WIN),
        (2, 1, "third_attack", 2000, Result.WIN),
        (1, 1, "first_attack", 2500, Result.PUSH),
        (1, 1, "second_attack", 2500, Result.PUSH),
        (1, 2, "first_attack", 2500, Result.PUSH),
        (1, 2, "second_attack", 2500, Result.PUSH),
    ]


def test_36_5_j_a_seat_that_sat_out_waits_for_the_reshuffle() -> None:
    engine = make_engine("triple_attack", mid_shoe_entry=False)
    feed(engine, [Shuffle()])
    play(engine, "2C")  # the burn card
    feed(engine, [wager(1, "first_attack", "25")])
    play(engine, "KS 9H 7D 8C")  # seat 1: K 7 = 17... dealt K, 9 up, 7, 8 down
    feed(engine, [action("stand", 1)])  # dealer 9+8 = 17 stands: round over
    with pytest.raises(WagerRejected) as refused:
        engine.apply(wager(2, "first_attack", "25"))
    assert refused.value.reason == "sat_out"
    feed(engine, [wager(1, "first_attack", "25"), VoidRound("misdeal")])
    feed(engine, [Shuffle()])
    assert feed(engine, [wager(2, "first_attack", "25")])


def test_36_5_j_mid_shoe_entry_is_allowed_by_default() -> None:
    engine = make_engine("triple_attack")
    feed(engine, [wager(1, "first_attack", "25")])
    play(engine, "KS 9H 7D 8C")
    feed(engine, [action("stand", 1)])
    assert feed(engine, [wager(2, "first_attack", "25")])


@pytest.mark.parametrize("kind", ["second_attack", "third_attack"])
def test_36_5_f_an_attack_wager_made_after_the_first_card_is_never_withdrawn(kind: str) -> None:
    """The subchapter lets the second and third attack be made after the first card; no more."""
    engine = make_engine("triple_attack")
    feed(engine, [wager(1, "first_attack", "25")])
    play(engine, "9S")
    feed(engine, [wager(1, "second_attack", "25")] if kind == "second_attack" else [])
    play(engine, "6C")
    if kind == "third_attack":
        feed(engine, [wager(1, "third_attack", "25")])
    before = engine.public_view()
    with pytest.raises(WagerRejected) as refused:
        engine.apply(withdraw(1, kind))
    assert refused.value.reason == "window_closed"
    assert engine.public_view() == before
