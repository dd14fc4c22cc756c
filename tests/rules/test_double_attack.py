"""Double Attack Blackjack: the optional bonus wager, N.J.A.C. 13:69F-26.6.

Every expected figure below is worked out by hand from the regulation's pay table
(26.6(d)2: 10 → 3 to 1, nine → 6 to 1, eight → 8 to 1, seven → 10 to 1, six → 15 to 1;
26.6(d)3: three eights of one colour 50 to 1, of one suit 200 to 1), never copied from the
engine. At double attack the dealer's upcard is the first card of the round (reversed deal,
docs/procedures.md), so "prior to the first card" (26.6(b)) means before the upcard.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from rules.errors import CardRejected, ConfigError, WagerRejected
from rules.games import WagerKind
from rules.money import Odds
from rules.outputs import (
    CardDealt,
    HandCompleted,
    HoleCardRevealed,
    Phase,
    Result,
    RoundEnded,
    WagerAccepted,
)
from tests.rules.tables import (
    action,
    card,
    cards,
    feed,
    initial_deal,
    make_config,
    make_engine,
    play,
    settlements,
    wager,
    withdraw,
)

if TYPE_CHECKING:
    from rules.engine import TableEngine
    from rules.outputs import Output

PLAYER_17 = "9C 8C"  # a hard 17 that stands and is never 21, whatever the dealer holds


def da_engine(**overrides: object) -> TableEngine:
    return make_engine("double_attack", **overrides)


def bets(engine: TableEngine, seats: dict[int, tuple[str, str | None]]) -> list[Output]:
    """Each seat's initial wager and, when given, its optional bonus wager."""
    events = []
    for seat, (initial, bonus) in sorted(seats.items()):
        events.append(wager(seat, "initial", initial))
        if bonus is not None:
            events.append(wager(seat, "optional_bonus", bonus))
    return feed(engine, events)


def deal_and_stand(
    engine: TableEngine, seats: list[int], *, upcard: str, hole: str
) -> list[Output]:
    """The reversed initial deal with every seat on a hard 17, then every seat stands."""
    out = feed(
        engine,
        initial_deal("double_attack", dict.fromkeys(seats, PLAYER_17), upcard=upcard, hole=hole),
    )
    out += feed(engine, [action("stand", seat) for seat in seats])
    return out


def bonus_round(
    seats: dict[int, tuple[str, str | None]], *, upcard: str, hole: str, **overrides: object
) -> tuple[TableEngine, list[Output]]:
    engine = da_engine(**overrides)
    bets(engine, seats)
    return engine, deal_and_stand(engine, sorted(seats), upcard=upcard, hole=hole)


def index_of(outputs: list[Output], kind: type) -> int:
    return next(i for i, item in enumerate(outputs) if isinstance(item, kind))


# --------------------------------------------------------------- 26.6(b): amount and window
def test_26_6_b_minimum_of_one_dollar_is_enforced_by_the_configuration() -> None:
    limits = {
        "initial": {"min": "10", "max": "500"},
        "optional_bonus": {"min": "0.99", "max": "100"},
        "double_attack": {"min": "10", "max": "500"},
    }
    with pytest.raises(ConfigError) as caught:
        make_config("double_attack", limits=limits)
    assert caught.value.field == "limits.optional_bonus.min"
    limits["optional_bonus"]["min"] = "1.00"
    assert make_config("double_attack", limits=limits).limits  # exactly $1.00 is allowed


def test_26_6_b_below_the_posted_minimum_is_rejected() -> None:
    engine = da_engine()
    bets(engine, {1: ("10", None)})
    with pytest.raises(WagerRejected) as caught:
        engine.apply(wager(1, "optional_bonus", "0.99"))
    assert caught.value.reason == "below_minimum"
    assert feed(engine, [wager(1, "optional_bonus", "1")]) == [
        WagerAccepted(1, 1, WagerKind.OPTIONAL_BONUS, 100)
    ]


def test_26_6_b_1_not_more_than_the_initial_wager() -> None:
    engine = da_engine()
    bets(engine, {1: ("20", None)})
    with pytest.raises(WagerRejected) as caught:
        engine.apply(wager(1, "optional_bonus", "20.01"))
    assert (caught.value.seat, caught.value.kind) == (1, "optional_bonus")
    assert caught.value.reason == "above_required_wager"
    out = engine.apply(wager(1, "optional_bonus", "20"))  # equal to the initial wager
    assert engine.public_view()["round"]["seats"][0]["wagers"] == {
        "initial": "20.00",
        "optional_bonus": "20.00",
    }
    assert len(out) == 1


def test_26_6_b_2_not_more_than_the_posted_maximum_even_below_the_initial_wager() -> None:
    limits = {
        "initial": {"min": "10", "max": "500"},
        "optional_bonus": {"min": "1", "max": "25"},
        "double_attack": {"min": "10", "max": "500"},
    }
    engine = da_engine(limits=limits)
    bets(engine, {1: ("100", None)})
    with pytest.raises(WagerRejected) as caught:
        engine.apply(wager(1, "optional_bonus", "25.01"))
    assert caught.value.reason == "above_maximum"
    engine.apply(wager(1, "optional_bonus", "25"))  # the lesser of $100 and $25
    assert engine.public_view()["round"]["seats"][0]["wagers"]["optional_bonus"] == "25.00"


def test_26_6_b_needs_the_initial_wager_first() -> None:
    engine = da_engine()
    with pytest.raises(WagerRejected) as caught:
        engine.apply(wager(1, "optional_bonus", "5"))
    assert caught.value.reason == "requires_wager"
    assert engine.round is None  # a rejected wager opens no round


def test_26_6_b_initial_wager_cannot_drop_below_the_bonus_riding_on_it() -> None:
    engine = da_engine()
    bets(engine, {1: ("20", "15")})
    with pytest.raises(WagerRejected) as caught:
        engine.apply(wager(1, "initial", "10"))
    assert caught.value.reason == "dependent_wager"
    with pytest.raises(WagerRejected):
        engine.apply(withdraw(1, "initial"))
    feed(engine, [wager(1, "initial", "15")])  # still at least the bonus: fine


def test_26_6_b_bonus_may_be_changed_or_withdrawn_before_the_upcard() -> None:
    engine = da_engine()
    bets(engine, {1: ("20", "10")})
    feed(engine, [wager(1, "optional_bonus", "5"), withdraw(1, "optional_bonus")])
    assert engine.public_view()["round"]["seats"][0]["wagers"] == {"initial": "20.00"}


@pytest.mark.parametrize(
    "late",
    [
        pytest.param(wager(2, "optional_bonus", "5"), id="new_bonus"),
        pytest.param(wager(1, "optional_bonus", "10"), id="increase"),
        pytest.param(wager(1, "optional_bonus", "1"), id="decrease"),
        pytest.param(withdraw(1, "optional_bonus"), id="withdraw"),
    ],
)
def test_26_6_b_upcard_is_the_first_card_so_no_bonus_change_after_it(late: object) -> None:
    engine = da_engine()
    bets(engine, {1: ("20", "5"), 2: ("20", None)})
    feed(engine, cards("6S"))  # the dealer's upcard: the first card of the round
    before = engine.public_view()
    with pytest.raises(WagerRejected) as caught:
        engine.apply(late)  # type: ignore[arg-type]  # parametrized events
    assert caught.value.reason == "window_closed"
    assert engine.public_view() == before
    # The round is unharmed: the deal goes on, and the bonus is the $5 placed in time.
    rest = feed(engine, [*cards("9C 9D 8C 8D 6H"), action("stand", 1), action("stand", 2)])
    out = rest + play(engine, "KD")
    [paid] = settlements(out)
    assert (paid.seat, paid.stake, paid.won) == (1, 500, 1500)  # K third card: 3 to 1


def test_26_6_b_initial_wager_also_closes_at_the_upcard() -> None:
    engine = da_engine()
    bets(engine, {1: ("20", None)})
    feed(engine, cards("6S"))
    with pytest.raises(WagerRejected) as caught:
        engine.apply(wager(2, "initial", "20"))
    assert caught.value.reason == "window_closed"


# --------------------------------------------------------------------- double attack window
def test_double_attack_wager_not_before_the_upcard() -> None:
    engine = da_engine()
    bets(engine, {1: ("20", None)})
    with pytest.raises(WagerRejected) as caught:
        engine.apply(wager(1, "double_attack", "20"))
    assert caught.value.reason == "window_closed"


def test_double_attack_wager_after_the_upcard_at_most_the_initial_wager() -> None:
    engine = da_engine()
    bets(engine, {1: ("20", None), 2: ("30", None)})
    feed(engine, cards("6S"))
    with pytest.raises(WagerRejected) as caught:
        engine.apply(wager(1, "double_attack", "20.01"))
    assert caught.value.reason == "above_required_wager"
    with pytest.raises(WagerRejected) as caught:
        engine.apply(wager(3, "double_attack", "10"))  # no initial wager at seat 3
    assert caught.value.reason == "requires_wager"
    out = feed(engine, [wager(1, "double_attack", "20"), wager(2, "double_attack", "10")])
    kind = WagerKind.DOUBLE_ATTACK
    assert out == [WagerAccepted(1, 1, kind, 2000), WagerAccepted(1, 2, kind, 1000)]


def test_double_attack_wager_closes_at_the_players_first_card() -> None:
    engine = da_engine()
    bets(engine, {1: ("20", None), 2: ("20", None)})
    feed(engine, cards("6S 9C"))  # upcard, then seat 1's first card
    before = engine.public_view()
    with pytest.raises(WagerRejected) as caught:
        engine.apply(wager(2, "double_attack", "20"))
    assert caught.value.reason == "window_closed"
    assert engine.public_view() == before
    [dealt] = feed(engine, cards("9D"))
    assert dealt == CardDealt(1, 2, 1, card("9D"))


# ---------------------------------------------------------------- 26.6(d)1: the bonus loses
@pytest.mark.parametrize(
    ("upcard", "hole", "total"),
    [
        pytest.param("KS", "7H", 17, id="hard_17"),
        pytest.param("9S", "9H", 18, id="18"),
        pytest.param("KS", "QH", 20, id="20"),
        pytest.param("6S", "AH", 17, id="soft_17"),
    ],
)
def test_26_6_d_1_first_two_cards_17_or_more_lose_at_the_reveal(
    upcard: str, hole: str, total: int
) -> None:
    _, out = bonus_round({1: ("20", "10"), 3: ("20", "5")}, upcard=upcard, hole=hole)
    reveal = index_of(out, HoleCardRevealed)
    assert out[reveal] == HoleCardRevealed(1, card(hole), total)
    lost = settlements(out)
    assert out[reveal + 1 : reveal + 3] == lost  # right after the reveal
    assert [(s.seat, s.order, s.stake) for s in lost] == [(3, 1, 500), (1, 2, 1000)]
    for each in lost:
        assert each.outcome == "dealer_two_cards_17_or_more"
        assert (each.result, each.odds, each.won) == (Result.LOSE, None, 0)
        assert each.phase is Phase.DEALER_TWO_CARDS
        assert each.hand is None
        assert each.citation == "13:69F-26.6(d)1"
    assert isinstance(out[-1], RoundEnded)  # the dealer stands: no third card


def test_26_6_d_1_soft_17_loses_at_two_cards_even_where_the_dealer_hits_it() -> None:
    engine, out = bonus_round({1: ("20", "10")}, upcard="AS", hole="6H", dealer_hits_soft_17=True)
    [lost] = settlements(out)
    assert (lost.phase, lost.result) == (Phase.DEALER_TWO_CARDS, Result.LOSE)
    assert not any(isinstance(item, RoundEnded) for item in out)  # the dealer draws to soft 17
    third = play(engine, "KD")  # A + 6 + K = hard 17: the bonus was settled already
    assert settlements(third) == []
    assert isinstance(third[-1], RoundEnded)


def test_26_6_d_1_dealer_blackjack_seen_by_the_reader_loses_the_bonus_at_once() -> None:
    engine = da_engine(hole_card_reader=True)
    bets(engine, {2: ("20", "10")})
    out = feed(engine, initial_deal("double_attack", {2: PLAYER_17}, upcard="AS", hole="KH"))
    reveal = index_of(out, HoleCardRevealed)
    [lost] = settlements(out)
    assert out[reveal + 1] == lost
    assert (lost.seat, lost.phase, lost.result, lost.won) == (
        2,
        Phase.DEALER_TWO_CARDS,
        Result.LOSE,
        0,
    )
    assert isinstance(out[-1], RoundEnded)  # no player acts against a dealer blackjack


def test_26_6_d_1_dealer_blackjack_without_reader_loses_at_the_reveal() -> None:
    engine = da_engine(hole_card_reader=False)
    bets(engine, {2: ("20", "10")})
    out = feed(engine, initial_deal("double_attack", {2: PLAYER_17}, upcard="AS", hole="KH"))
    assert settlements(out) == []  # the hole card is not known yet
    out = feed(engine, [action("stand", 2)])
    reveal = index_of(out, HoleCardRevealed)
    [lost] = settlements(out)
    assert out[reveal + 1] == lost
    assert (lost.phase, lost.result, lost.outcome) == (
        Phase.DEALER_TWO_CARDS,
        Result.LOSE,
        "dealer_two_cards_17_or_more",
    )


@pytest.mark.parametrize(
    ("upcard", "hole", "third", "total"),
    [
        pytest.param("6S", "6H", "9D", 21, id="12_plus_9_is_21"),
        pytest.param("AS", "5H", "KD", 16, id="soft_16_plus_K_is_hard_16"),
        pytest.param("KS", "6H", "5D", 21, id="16_plus_5_is_21"),
        pytest.param("2S", "3H", "4D", 9, id="5_plus_4_is_9"),
    ],
)
def test_26_6_d_1_three_cards_not_over_21_lose_right_after_the_third_card(
    upcard: str, hole: str, third: str, total: int
) -> None:
    engine, out = bonus_round({1: ("20", "10")}, upcard=upcard, hole=hole)
    assert settlements(out) == []  # under 17 on two cards: wait for the third
    out = play(engine, third)
    assert out[0] == CardDealt(1, None, None, card(third))
    [lost] = settlements(out)
    assert out[1] == lost
    assert lost.outcome == "dealer_three_cards_21_or_less"
    assert (lost.result, lost.odds, lost.stake, lost.won) == (Result.LOSE, None, 1000, 0)
    assert (lost.phase, lost.order) == (Phase.DEALER_THIRD_CARD, 1)
    if total < 17:  # the dealer draws on; no second bonus settlement
        more = play(engine, "8D")
        assert settlements(more) == []
        assert isinstance(more[-1], RoundEnded)
    else:
        assert out[-1] == RoundEnded(1)


# ------------------------------------------------------------------ 26.6(d)2: the pay table
@pytest.mark.parametrize(
    ("upcard", "hole", "third", "outcome", "odds"),
    [
        # 12-16 on two cards; every third card here makes exactly 22.
        pytest.param("6S", "6H", "JD", "third_card_ten", 3, id="jack_3_to_1"),
        pytest.param("6S", "6H", "QD", "third_card_ten", 3, id="queen_3_to_1"),
        pytest.param("6S", "6H", "KD", "third_card_ten", 3, id="king_3_to_1"),
        pytest.param("7S", "6H", "9D", "third_card_nine", 6, id="nine_6_to_1"),
        pytest.param("8S", "6H", "8H", "third_card_eight", 8, id="eight_8_to_1"),
        pytest.param("9S", "6H", "7D", "third_card_seven", 10, id="seven_10_to_1"),
        pytest.param("KS", "6H", "6D", "third_card_six", 15, id="six_15_to_1"),
    ],
)
def test_26_6_d_2_pay_table_by_the_third_card(
    upcard: str, hole: str, third: str, outcome: str, odds: int
) -> None:
    engine, out = bonus_round({1: ("20", "10")}, upcard=upcard, hole=hole)
    assert settlements(out) == []
    out = play(engine, third)
    [paid] = settlements(out)
    assert out[0] == CardDealt(1, None, None, card(third))
    assert out[1] == paid  # right after the third card, before anything else
    assert out[2:] == [HandCompleted(1, None, None, 22, "bust"), RoundEnded(1)]
    assert (paid.seat, paid.hand, paid.outcome) == (1, None, outcome)
    assert (paid.result, paid.odds) == (Result.WIN, Odds(odds))
    assert (paid.stake, paid.won) == (1000, 1000 * odds)
    assert (paid.phase, paid.order) == (Phase.DEALER_THIRD_CARD, 1)
    assert paid.citation == "13:69F-26.6(d)2, (d)3"


def test_26_6_d_2_exact_amounts_on_a_stake_with_cents() -> None:
    # A six third card: $7.50 at 15 to 1 is $112.50, $1.25 at 15 to 1 is $18.75.
    engine, _ = bonus_round({1: ("10", "7.50"), 2: ("10", "1.25")}, upcard="KS", hole="6H")
    paid = settlements(play(engine, "6D"))
    assert [(s.seat, s.stake, s.won) for s in paid] == [(2, 125, 1875), (1, 750, 11250)]
    # A queen third card: $1.25 at 3 to 1 is $3.75.
    engine, _ = bonus_round({1: ("10", "1.25")}, upcard="6S", hole="6H")
    [paid_ten] = settlements(play(engine, "QC"))
    assert (paid_ten.stake, paid_ten.won) == (125, 375)


# ------------------------------------------------------------------- 26.6(d)3: three eights
@pytest.mark.parametrize(
    ("dealer", "colour"),
    [
        pytest.param("8H 8D 8D", "red", id="red_hearts_diamonds"),
        pytest.param("8S 8C 8S", "black", id="black_spades_clubs"),
        pytest.param("8D 8D 8H", "red", id="third_card_other_red_suit"),
    ],
)
def test_26_6_d_3_i_three_eights_same_colour_50_to_1(dealer: str, colour: str) -> None:
    upcard, hole, third = dealer.split()
    assert card(upcard).colour.value == colour
    engine, _ = bonus_round({1: ("20", "10")}, upcard=upcard, hole=hole)
    [paid] = settlements(play(engine, third))
    assert paid.outcome == "three_eights_coloured"
    assert (paid.result, paid.odds, paid.won) == (Result.WIN, Odds(50), 50_000)
    assert paid.phase is Phase.DEALER_THIRD_CARD


@pytest.mark.parametrize("suit", ["S", "H", "D", "C"])
def test_26_6_d_3_ii_three_eights_suited_200_to_1_takes_precedence_over_colour(
    suit: str,
) -> None:
    engine, _ = bonus_round({1: ("20", "10")}, upcard=f"8{suit}", hole=f"8{suit}")
    [paid] = settlements(play(engine, f"8{suit}"))
    assert paid.outcome == "three_eights_suited"
    assert (paid.result, paid.odds, paid.stake, paid.won) == (Result.WIN, Odds(200), 1000, 200_000)


@pytest.mark.parametrize("dealer", ["8S 8H 8S", "8H 8D 8C", "8C 8S 8D"])
def test_26_6_d_3_eights_of_mixed_colour_pay_the_eight_line_8_to_1(dealer: str) -> None:
    upcard, hole, third = dealer.split()
    engine, _ = bonus_round({1: ("20", "10")}, upcard=upcard, hole=hole)
    [paid] = settlements(play(engine, third))
    assert paid.outcome == "third_card_eight"
    assert (paid.odds, paid.won) == (Odds(8), 8000)


def test_26_6_d_3_two_eights_and_a_different_third_card_pay_by_the_third_card() -> None:
    engine, _ = bonus_round({1: ("20", "10")}, upcard="8S", hole="8S")
    [paid] = settlements(play(engine, "6S"))  # 8 + 8 + 6 = 22, all spades, not three eights
    assert (paid.outcome, paid.odds, paid.won) == ("third_card_six", Odds(15), 15_000)


# --------------------------------------------------------------- 26.6(d)2: settlement order
def test_26_6_d_2_paid_from_the_dealers_right_highest_seat_first() -> None:
    seats: dict[int, tuple[str, str | None]] = {
        1: ("20", "5"),
        2: ("20", None),
        4: ("20", "10"),
        6: ("20", "15"),
    }
    engine, _ = bonus_round(seats, upcard="6S", hole="6H")
    paid = settlements(play(engine, "JD"))
    assert [(s.seat, s.order, s.stake, s.won) for s in paid] == [
        (6, 1, 1500, 4500),
        (4, 2, 1000, 3000),
        (1, 3, 500, 1500),
    ]


def test_26_6_d_1_collected_from_the_highest_seat_first_too() -> None:
    seats: dict[int, tuple[str, str | None]] = {2: ("20", "5"), 7: ("20", "10"), 5: ("20", "1")}
    _, out = bonus_round(seats, upcard="KS", hole="8H")
    lost = settlements(out)
    assert [(s.seat, s.order, s.result) for s in lost] == [
        (7, 1, Result.LOSE),
        (5, 2, Result.LOSE),
        (2, 3, Result.LOSE),
    ]


# ---------------------------------------------------- the dealer's third card for the bonus
def test_26_6_d_dealer_draws_a_third_card_for_the_bonus_when_every_player_busted() -> None:
    engine = da_engine()
    bets(engine, {1: ("20", "10"), 2: ("20", None)})
    feed(engine, initial_deal("double_attack", {1: "KC 6C", 2: "QC 5C"}, upcard="KS", hole="6H"))
    assert settlements(play(engine, "KD")) == []  # seat 1 busts on 26
    out = play(engine, "QD")  # seat 2 busts on 25: nobody needs the dealer but the bonus
    assert [type(item) for item in out] == [CardDealt, HandCompleted, HoleCardRevealed]
    assert engine.public_view()["round"]["stage"] == "dealer"
    out = play(engine, "7D")  # K + 6 + 7 = 23
    [paid] = settlements(out)
    assert (paid.seat, paid.outcome, paid.won, paid.phase) == (
        1,
        "third_card_seven",
        10_000,
        Phase.DEALER_THIRD_CARD,
    )
    assert out[-1] == RoundEnded(1)


def test_dealer_does_not_draw_when_no_bonus_is_up_and_every_player_busted() -> None:
    engine = da_engine()
    bets(engine, {1: ("20", None)})
    feed(engine, initial_deal("double_attack", {1: "KC 6C"}, upcard="KS", hole="6H"))
    out = play(engine, "KD")
    assert [type(item) for item in out] == [
        CardDealt,
        HandCompleted,
        HoleCardRevealed,
        HandCompleted,
        RoundEnded,
    ]
    assert out[3] == HandCompleted(1, None, None, 16, "not_needed")
    with pytest.raises(CardRejected) as caught:
        engine.apply(cards("7D")[0])
    assert caught.value.reason == "no_round"


def test_26_6_d_dealer_draws_for_the_bonus_when_the_bettor_holds_blackjack() -> None:
    # A player blackjack does not need the dealer, but the bonus does.
    engine = da_engine()
    bets(engine, {1: ("20", "10")})
    out = feed(engine, initial_deal("double_attack", {1: "AC KC"}, upcard="6S", hole="6H"))
    assert isinstance(out[-1], HoleCardRevealed)
    [paid] = settlements(play(engine, "QD"))
    assert (paid.outcome, paid.won) == ("third_card_ten", 3000)


def test_26_6_e_bonus_settlement_does_not_touch_the_initial_wager() -> None:
    engine, _ = bonus_round({1: ("20", "10")}, upcard="6S", hole="6H")
    out = play(engine, "KD")
    assert {s.wager.value for s in settlements(out)} == {"optional_bonus"}
    assert engine.public_view()["round"]["seats"][0]["wagers"] == {
        "initial": "20.00",
        "optional_bonus": "10.00",
    }
