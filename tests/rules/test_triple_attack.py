"""Triple Attack Blackjack: the attack wagers, N.J.A.C. 13:69F-36.5.

Deal and wager windows (docs/procedures.md): first attack before the first card; each
player's first card; the optional second attack (equal to the first); the dealer's upcard;
the optional third attack (equal to the first, allowed without the second); each player's
second card; the hole card. Every attack wager is paid 1 to 1 (36.5(g)); the expected
results below are worked out by hand from (a)-(d).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from rules.errors import ActionRejected, WagerRejected
from rules.games import WagerKind
from rules.money import Odds
from rules.outputs import (
    CardDealt,
    HandCompleted,
    HoleCardRevealed,
    Phase,
    Result,
    RoundEnded,
    Settlement,
    WagerAccepted,
)
from tests.rules.tables import (
    action,
    card,
    cards,
    feed,
    make_engine,
    play,
    settlements,
    wager,
    withdraw,
)

if TYPE_CHECKING:
    from rules.engine import TableEngine
    from rules.outputs import Output

FIRST, SECOND, THIRD = WagerKind.FIRST_ATTACK, WagerKind.SECOND_ATTACK, WagerKind.THIRD_ATTACK


def ta_engine(**overrides: object) -> TableEngine:
    return make_engine("triple_attack", **overrides)


def deal(
    engine: TableEngine,
    hands: dict[int, str],
    *,
    upcard: str,
    hole: str,
    stake: str = "10",
    second: tuple[int, ...] = (),
    third: tuple[int, ...] = (),
) -> list[Output]:
    """A whole initial deal with each attack wager placed in its own window."""
    seats = sorted(hands)
    pairs = {seat: hands[seat].split() for seat in seats}
    out = feed(engine, [wager(seat, FIRST, stake) for seat in seats])
    out += feed(engine, cards(" ".join(pairs[seat][0] for seat in seats)))
    out += feed(engine, [wager(seat, SECOND, stake) for seat in second])
    out += play(engine, upcard)
    out += feed(engine, [wager(seat, THIRD, stake) for seat in third])
    out += feed(engine, cards(" ".join(pairs[seat][1] for seat in seats)))
    out += play(engine, hole)
    return out


def summary(items: list[Settlement]) -> list[tuple[int, int | None, str, str, int, int]]:
    """(seat, hand, wager, result, stake, won) of each settlement, in order."""
    return [(s.seat, s.hand, s.wager.value, s.result.value, s.stake, s.won) for s in items]


def turn(engine: TableEngine) -> object:
    return engine.public_view()["round"]["turn"]


# --------------------------------------------- 36.5(a) and (g): a bust is collected at once
def test_36_5_a_g_bust_collects_every_attack_wager_at_once() -> None:
    engine = ta_engine()
    deal(engine, {1: "KC 6C", 2: "9C 8C"}, upcard="7S", hole="9H", second=(1,), third=(1,))
    out = play(engine, "QD")  # seat 1: 10 + 6 + 10 = 26
    assert out[:2] == [CardDealt(1, 1, 1, card("QD")), HandCompleted(1, 1, 1, 26, "bust")]
    collected = settlements(out)
    assert out[2:] == collected
    assert summary(collected) == [
        (1, 1, "first_attack", "lose", 1000, 0),
        (1, 1, "second_attack", "lose", 1000, 0),
        (1, 1, "third_attack", "lose", 1000, 0),
    ]
    for each in collected:
        assert (each.phase, each.outcome, each.odds) == (Phase.PLAYER_BUST, "player_bust", None)
    assert [each.order for each in collected] == [1, 2, 3]
    assert turn(engine) == {"seat": 2, "hand": 1}  # collected before seat 2 acts
    # After the round nothing of seat 1 is settled again.
    end = feed(engine, [action("stand", 2)])  # dealer 7 + 9 = 16, draws
    end += play(engine, "2D")  # dealer 18
    assert summary(settlements(end)) == [(2, 1, "first_attack", "lose", 1000, 0)]


def test_36_5_a_bust_collects_only_the_wagers_placed() -> None:
    engine = ta_engine()
    deal(engine, {1: "KC 6C", 2: "KD 5D"}, upcard="7S", hole="9H", third=(1, 2))
    out = play(engine, "QD")
    assert summary(settlements(out)) == [
        (1, 1, "first_attack", "lose", 1000, 0),
        (1, 1, "third_attack", "lose", 1000, 0),
    ]
    out = play(engine, "JD")  # seat 2 busts too: the phase order runs on
    assert [(s.seat, s.wager, s.order) for s in settlements(out)] == [
        (2, FIRST, 3),
        (2, THIRD, 4),
    ]
    assert isinstance(out[-1], RoundEnded)  # nobody needs the dealer: 36.5(a) needs no draw


def test_36_5_a_g_bust_of_a_doubled_hand_collects_the_doubled_wagers() -> None:
    engine = ta_engine()
    deal(engine, {1: "6C 6D"}, upcard="7S", hole="9H", second=(1,))
    feed(engine, [action("double", 1)])
    out = play(engine, "KD")  # 22
    assert summary(settlements(out)) == [
        (1, 1, "first_attack", "lose", 2000, 0),
        (1, 1, "second_attack", "lose", 2000, 0),
    ]
    assert settlements(out)[0].phase is Phase.PLAYER_BUST


def test_36_5_a_g_bust_of_a_split_hand_is_collected_before_the_next_hand_plays() -> None:
    engine = ta_engine()
    deal(engine, {1: "8C 8D"}, upcard="7S", hole="9H", third=(1,))
    feed(engine, [action("split", 1)])
    play(engine, "6H")  # hand 1: 14
    out = play(engine, "KH")  # hand 1: 24
    assert summary(settlements(out)) == [
        (1, 1, "first_attack", "lose", 1000, 0),
        (1, 1, "third_attack", "lose", 1000, 0),
    ]
    assert turn(engine) == {"seat": 1, "hand": 2}


# ------------------------------------------------------- 36.5(b): 21 and six-card hands win
def test_36_5_b_a_21_wins_even_against_a_dealer_21() -> None:
    engine = ta_engine()
    deal(engine, {1: "7C 4C", 2: "KD QD"}, upcard="9S", hole="7H", second=(1,))
    out = play(engine, "KH")  # seat 1: 7 + 4 + 10 = 21, hand ends by itself
    assert out[1] == HandCompleted(1, 1, 1, 21, "twenty_one")
    assert turn(engine) == {"seat": 2, "hand": 1}
    feed(engine, [action("stand", 2)])
    out = play(engine, "5D")  # dealer 9 + 7 + 5 = 21
    paid = settlements(out)
    assert summary(paid) == [
        (2, 1, "first_attack", "lose", 1000, 0),  # 20 against 21
        (1, 1, "first_attack", "win", 1000, 1000),
        (1, 1, "second_attack", "win", 1000, 1000),
    ]
    assert [s.outcome for s in paid] == ["lower_total", "player_21", "player_21"]
    assert paid[1].odds == Odds(1)


def test_36_5_b_blackjack_wins_against_a_dealer_blackjack() -> None:
    engine = ta_engine(hole_card_reader=True)
    out = deal(engine, {1: "AC KC", 3: "KD QD"}, upcard="AS", hole="JH", third=(1, 3))
    assert isinstance(out[-1], RoundEnded)  # the reader shows the dealer blackjack at once
    paid = settlements(out)
    assert summary(paid) == [
        (3, 1, "first_attack", "lose", 1000, 0),
        (3, 1, "third_attack", "lose", 1000, 0),
        (1, 1, "first_attack", "win", 1000, 1000),
        (1, 1, "third_attack", "win", 1000, 1000),
    ]
    assert [s.outcome for s in paid[2:]] == ["blackjack", "blackjack"]
    assert {s.phase for s in paid} == {Phase.ROUND_END}


def test_36_5_b_blackjack_wins_against_a_dealer_22() -> None:
    engine = ta_engine()
    deal(engine, {1: "AC KC", 2: "9D 9H"}, upcard="6S", hole="6H")
    feed(engine, [action("stand", 2)])
    out = play(engine, "KD")  # dealer 22
    paid = settlements(out)
    assert [(s.seat, s.result, s.outcome) for s in paid] == [
        (2, Result.PUSH, "dealer_22_push"),
        (1, Result.WIN, "blackjack"),
    ]


def test_36_5_b_six_card_hand_under_21_wins_and_play_moves_on() -> None:
    engine = ta_engine()
    deal(engine, {1: "2C 3C", 2: "KD QD"}, upcard="KS", hole="QH", second=(1,))
    out = play(engine, "2D 3D 4D")  # 5 cards: 14, still in play
    assert turn(engine) == {"seat": 1, "hand": 1}
    assert not any(isinstance(item, HandCompleted) for item in out)
    out = play(engine, "2H")  # sixth card: 16
    assert out == [CardDealt(1, 1, 1, card("2H")), HandCompleted(1, 1, 1, 16, "six_cards")]
    assert turn(engine) == {"seat": 2, "hand": 1}
    out = feed(engine, [action("stand", 2)])  # dealer 20 stands
    paid = settlements(out)
    assert summary(paid) == [
        (2, 1, "first_attack", "push", 1000, 0),
        (1, 1, "first_attack", "win", 1000, 1000),
        (1, 1, "second_attack", "win", 1000, 1000),
    ]
    assert [s.outcome for s in paid] == ["equal_total", "six_card_hand", "six_card_hand"]


def test_36_5_b_six_card_hand_wins_against_dealer_21_and_22() -> None:
    for third_card, dealer_total, reason, seat_2 in (
        ("5H", 21, "stand", "lose"),  # seat 2's 20 loses to 21 ...
        ("6H", 22, "bust", "push"),  # ... and pushes against 22, while six cards win both
    ):
        engine = ta_engine()
        deal(engine, {1: "2C 3C", 2: "KD JD"}, upcard="9S", hole="7S")
        play(engine, "2D 3D 4D 2H")  # six cards, 16
        out = feed(engine, [action("stand", 2)]) + play(engine, third_card)
        assert out[-5] == CardDealt(1, None, None, card(third_card))
        assert out[-4] == HandCompleted(1, None, None, dealer_total, reason)
        assert summary(settlements(out)) == [
            (2, 1, "first_attack", seat_2, 1000, 0),
            (1, 1, "first_attack", "win", 1000, 1000),
        ]


def test_36_5_b_dealer_does_not_draw_when_only_six_card_hands_and_21s_remain() -> None:
    engine = ta_engine()
    deal(engine, {1: "2C 3C", 2: "7D 4D"}, upcard="9S", hole="7S")
    play(engine, "2D 3D 4D 2H")  # seat 1: six cards, 16
    out = play(engine, "KH")  # seat 2: 21; the dealer's 16 cannot change either result
    assert out[-4] == HandCompleted(1, None, None, 16, "not_needed")
    assert [(s.seat, s.result, s.outcome) for s in settlements(out)] == [
        (2, Result.WIN, "player_21"),
        (1, Result.WIN, "six_card_hand"),
    ]
    assert out[-1] == RoundEnded(1)


# ------------------------------------------------------ 36.5(c) and (d): against the dealer
@pytest.mark.parametrize(
    ("player", "dealer", "draws", "result", "outcome"),
    [
        # (c): higher total, or the dealer over 22.
        pytest.param("KC 9C", "KS 8H", "", Result.WIN, "higher_total", id="c_19_vs_18"),
        pytest.param("KC 2C", "6S 7H", "KD", Result.WIN, "dealer_bust", id="c_12_vs_23"),
        pytest.param("9C 8C", "KS 6H", "QD", Result.WIN, "dealer_bust", id="c_17_vs_26"),
        # (d): equal total, or the dealer exactly 22.
        pytest.param("KC 8C", "KS 8H", "", Result.PUSH, "equal_total", id="d_18_vs_18"),
        pytest.param("KC QC", "6S 6H", "KD", Result.PUSH, "dealer_22_push", id="d_20_vs_22"),
        pytest.param("KC 2C", "6S 6H", "KD", Result.PUSH, "dealer_22_push", id="d_12_vs_22"),
        # neither: a lower total loses.
        pytest.param("KC 7C", "KS 8H", "", Result.LOSE, "lower_total", id="17_vs_18"),
    ],
)
def test_36_5_c_d_against_the_dealer(
    player: str, dealer: str, draws: str, result: Result, outcome: str
) -> None:
    engine = ta_engine()
    upcard, hole = dealer.split()
    deal(engine, {4: player}, upcard=upcard, hole=hole, second=(4,), third=(4,))
    out = feed(engine, [action("stand", 4)])
    if draws:
        out += play(engine, draws)
    paid = settlements(out)
    won = 1000 if result is Result.WIN else 0
    assert summary(paid) == [
        (4, 1, "first_attack", result.value, 1000, won),
        (4, 1, "second_attack", result.value, 1000, won),
        (4, 1, "third_attack", result.value, 1000, won),
    ]
    for each in paid:
        assert each.outcome == outcome
        assert each.odds == (Odds(1) if result is Result.WIN else None)
        assert each.phase is Phase.ROUND_END


def test_36_5_dealer_hits_soft_17_by_default() -> None:
    engine = ta_engine()
    deal(engine, {1: "KC 8C"}, upcard="AS", hole="6H")  # soft 17
    out = feed(engine, [action("stand", 1)])
    assert not any(isinstance(item, RoundEnded) for item in out)
    out = play(engine, "4D")  # A + 6 + 4 = soft 21
    [paid] = settlements(out)
    assert (paid.result, paid.outcome) == (Result.LOSE, "lower_total")


# ------------------------------------------------------------------- 36.5(f): wager windows
def test_36_5_f_first_attack_not_made_changed_or_withdrawn_after_the_first_card() -> None:
    engine = ta_engine()
    feed(engine, [wager(1, FIRST, "10"), wager(2, FIRST, "10")])
    play(engine, "9C")  # seat 1's first card
    before = engine.public_view()
    for late in (
        wager(1, FIRST, "20"),
        wager(1, FIRST, "5"),
        withdraw(1, FIRST),
        wager(3, FIRST, "10"),
    ):
        with pytest.raises(WagerRejected) as caught:
            engine.apply(late)
        assert caught.value.reason == "window_closed"
        assert engine.public_view() == before
    # the deal goes on unharmed
    assert play(engine, "9D") == [CardDealt(1, 2, 1, card("9D"))]


def test_36_5_f_second_attack_only_between_the_first_cards_and_the_upcard() -> None:
    engine = ta_engine()
    feed(engine, [wager(1, FIRST, "10"), wager(2, FIRST, "10")])
    with pytest.raises(WagerRejected) as caught:
        engine.apply(wager(1, SECOND, "10"))  # before any card
    assert caught.value.reason == "window_closed"
    play(engine, "9C")  # seat 1's first card; seat 2's is still to come
    with pytest.raises(WagerRejected) as caught:
        engine.apply(wager(1, SECOND, "10"))
    assert caught.value.reason == "window_closed"
    play(engine, "9D")  # every player has a first card: the window is open
    assert feed(engine, [wager(2, SECOND, "10")]) == [WagerAccepted(1, 2, SECOND, 1000)]
    play(engine, "5S")  # the upcard closes it
    before = engine.public_view()
    for late in (wager(1, SECOND, "10"), withdraw(2, SECOND)):
        with pytest.raises(WagerRejected) as caught:
            engine.apply(late)
        assert caught.value.reason == "window_closed"
        assert engine.public_view() == before


def test_36_5_f_third_attack_only_between_the_upcard_and_the_second_cards() -> None:
    engine = ta_engine()
    feed(engine, [wager(1, FIRST, "10"), wager(2, FIRST, "10")])
    play(engine, "9C 9D")
    with pytest.raises(WagerRejected) as caught:
        engine.apply(wager(1, THIRD, "10"))  # before the upcard
    assert caught.value.reason == "window_closed"
    play(engine, "5S")
    # allowed without the second attack
    assert feed(engine, [wager(1, THIRD, "10")]) == [WagerAccepted(1, 1, THIRD, 1000)]
    play(engine, "8C")  # seat 1's second card closes it
    before = engine.public_view()
    with pytest.raises(WagerRejected) as caught:
        engine.apply(wager(2, THIRD, "10"))
    assert caught.value.reason == "window_closed"
    assert engine.public_view() == before
    out = play(engine, "8D KH")  # seat 2's second card, the hole card
    assert out[-1] == CardDealt(1, None, None, None)
    out = feed(engine, [action("stand", 1), action("stand", 2)])  # dealer 5 + K = 15 draws
    out += play(engine, "QH")  # dealer 25
    assert summary(settlements(out)) == [
        (2, 1, "first_attack", "win", 1000, 1000),
        (1, 1, "first_attack", "win", 1000, 1000),
        (1, 1, "third_attack", "win", 1000, 1000),
    ]


@pytest.mark.parametrize("kind", [SECOND, THIRD])
@pytest.mark.parametrize("amount", ["10", "19.99", "20.01", "40"])
def test_36_5_f_second_and_third_attack_equal_the_first(kind: WagerKind, amount: str) -> None:
    engine = ta_engine()
    feed(engine, [wager(1, FIRST, "20")])
    play(engine, "9C")
    if kind is THIRD:
        play(engine, "5S")
    before = engine.public_view()
    with pytest.raises(WagerRejected) as caught:
        engine.apply(wager(1, kind, amount))
    assert caught.value.reason == "must_equal_required_wager"
    assert engine.public_view() == before
    assert feed(engine, [wager(1, kind, "20")]) == [WagerAccepted(1, 1, kind, 2000)]


def test_36_5_f_no_second_attack_without_a_first() -> None:
    engine = ta_engine()
    feed(engine, [wager(1, FIRST, "10")])
    play(engine, "9C")
    with pytest.raises(WagerRejected) as caught:
        engine.apply(wager(2, SECOND, "10"))
    assert caught.value.reason == "requires_wager"


# ----------------------------------------------- 36.5(g): settled after the round at 1 to 1
def test_36_5_g_settled_after_the_round_highest_seat_first_first_to_third() -> None:
    engine = ta_engine()
    out = deal(
        engine,
        {1: "KC 9C", 3: "KD 9D", 5: "KH 9H"},
        upcard="KS",
        hole="8S",
        second=(1,),
        third=(1, 3),
    )
    assert settlements(out) == []
    out = feed(engine, [action("stand", 1), action("stand", 3)])
    assert settlements(out) == []  # nothing before the round is over
    out = feed(engine, [action("stand", 5)])
    reveal = next(i for i, item in enumerate(out) if isinstance(item, HoleCardRevealed))
    assert out[reveal + 1] == HandCompleted(1, None, None, 18, "stand")
    paid = settlements(out)
    assert out[reveal + 2 : -1] == paid
    assert out[-1] == RoundEnded(1)
    assert [(s.seat, s.wager, s.order) for s in paid] == [
        (5, FIRST, 1),
        (3, FIRST, 2),
        (3, THIRD, 3),
        (1, FIRST, 4),
        (1, SECOND, 5),
        (1, THIRD, 6),
    ]
    for each in paid:
        assert (each.result, each.odds, each.stake, each.won) == (Result.WIN, Odds(1), 1000, 1000)
        assert (each.phase, each.outcome) == (Phase.ROUND_END, "higher_total")


def test_36_5_g_even_money_on_a_stake_with_cents() -> None:
    engine = ta_engine()
    deal(engine, {1: "KC 9C"}, upcard="KS", hole="8S", stake="12.35", third=(1,))
    out = feed(engine, [action("stand", 1)])
    assert summary(settlements(out)) == [
        (1, 1, "first_attack", "win", 1235, 1235),
        (1, 1, "third_attack", "win", 1235, 1235),
    ]


# ------------------------------------------------------------------- doubling and splitting
def test_36_5_doubling_doubles_every_attack_wager_and_takes_one_card() -> None:
    engine = ta_engine()
    deal(engine, {1: "5C 6C", 2: "KD 8D"}, upcard="9S", hole="7H", second=(1,), third=(1,))
    feed(engine, [action("double", 1)])
    before = engine.public_view()
    for name in ("stand", "hit", "double", "split"):
        with pytest.raises(ActionRejected) as caught:
            engine.apply(action(name, 1))
        assert caught.value.reason == "doubled"
        assert engine.public_view() == before
    out = play(engine, "2D")  # 13, and the hand is over
    assert out == [CardDealt(1, 1, 1, card("2D")), HandCompleted(1, 1, 1, 13, "doubled")]
    assert turn(engine) == {"seat": 2, "hand": 1}
    out = feed(engine, [action("stand", 2)])
    out += play(engine, "6D")  # dealer 22
    assert summary(settlements(out)) == [
        (2, 1, "first_attack", "push", 1000, 0),
        (1, 1, "first_attack", "push", 2000, 0),
        (1, 1, "second_attack", "push", 2000, 0),
        (1, 1, "third_attack", "push", 2000, 0),
    ]


def test_36_5_doubled_hand_wins_the_doubled_wagers() -> None:
    engine = ta_engine()
    deal(engine, {1: "5C 6C"}, upcard="9S", hole="7H", third=(1,))
    feed(engine, [action("double", 1)])
    out = play(engine, "9D")  # 20
    out += play(engine, "8D")  # dealer 24
    assert summary(settlements(out)) == [
        (1, 1, "first_attack", "win", 2000, 2000),
        (1, 1, "third_attack", "win", 2000, 2000),
    ]


def test_36_5_splitting_carries_every_placed_attack_wager_to_each_hand() -> None:
    engine = ta_engine()
    deal(engine, {1: "8C 8D"}, upcard="KS", hole="8H", third=(1,))
    feed(engine, [action("split", 1)])
    view = engine.public_view()["round"]["seats"][0]["hands"]
    assert [hand["cards"] for hand in view] == [["8C"], ["8D"]]
    play(engine, "KH")  # hand 1: 18
    feed(engine, [action("stand", 1)])
    play(engine, "2H")  # hand 2: 10
    feed(engine, [action("double", 1, 2)])  # doubles hand 2's wagers only
    out = play(engine, "9H")  # hand 2: 19
    assert summary(settlements(out)) == [
        (1, 1, "first_attack", "push", 1000, 0),
        (1, 1, "third_attack", "push", 1000, 0),
        (1, 2, "first_attack", "win", 2000, 2000),
        (1, 2, "third_attack", "win", 2000, 2000),
    ]


@pytest.mark.parametrize("surrender", [False, True])
def test_36_5_surrender_is_not_offered(*, surrender: bool) -> None:
    engine = ta_engine(surrender=surrender)
    deal(engine, {1: "KC 6C"}, upcard="KS", hole="7H")
    before = engine.public_view()
    with pytest.raises(ActionRejected) as caught:
        engine.apply(action("surrender", 1))
    assert caught.value.reason == "not_offered"
    assert engine.public_view() == before
    out = play(engine, "4D") + feed(engine, [action("stand", 1)])  # 20 against 17
    assert summary(settlements(out)) == [(1, 1, "first_attack", "win", 1000, 1000)]
