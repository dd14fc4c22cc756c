"""The round engine's play mechanics: deal order, card and action checks, the dealer, voids.

The engine changes nothing when it raises: every rejection below compares a snapshot of the
whole engine (round, shoe counts, burns due, public view) before and after, then shows that
a following valid event still works.
"""

from __future__ import annotations

import copy
import json
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

from rules.errors import ActionRejected, CardRejected, EventError, RoundStateError, WagerRejected
from rules.events import DealCard, Shuffle, VoidRound
from rules.games import Game, WagerKind
from rules.outputs import (
    CardBurned,
    CardDealt,
    HandCompleted,
    HoleCardRevealed,
    Phase,
    PlayerActed,
    Result,
    RoundEnded,
    RoundOpened,
    ShoeShuffled,
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
    of_type,
    play,
    settlements,
    wager,
    withdraw,
)

if TYPE_CHECKING:
    from rules.engine import TableEngine
    from rules.events import TableEvent
    from rules.outputs import Output

_E = TypeVar("_E", bound=EventError)

MAIN = {
    Game.BLACKJACK: "blackjack",
    Game.DOUBLE_ATTACK: "initial",
    Game.TRIPLE_ATTACK: "first_attack",
}


def snapshot(engine: TableEngine) -> tuple[Any, ...]:
    return (
        copy.deepcopy(engine.round),
        None if engine.remaining is None else dict(engine.remaining),
        engine.burns_due,
        engine.shoe,
        engine.next_round_id,
        engine.public_view(),
    )


def rejected(engine: TableEngine, event: TableEvent, error: type[_E]) -> _E:
    """Apply `event`, expect `error`, and prove the engine did not change."""
    before = snapshot(engine)
    with pytest.raises(error) as caught:
        engine.apply(event)
    assert snapshot(engine) == before
    return caught.value


def bj_round(hands: dict[int, str], *, upcard: str, hole: str, **overrides: Any) -> TableEngine:
    """A blackjack table (no 20 point bonus wagers) after the initial deal."""
    engine = make_engine("blackjack", **overrides)
    feed(engine, [wager(seat, "blackjack", "10") for seat in sorted(hands)])
    feed(engine, initial_deal("blackjack", hands, upcard=upcard, hole=hole))
    return engine


def turn(engine: TableEngine) -> object:
    return engine.public_view()["round"]["turn"]


# ------------------------------------------------------------------------------- deal order
@pytest.mark.parametrize(
    ("game", "receivers"),
    [
        # 13:69F-2.6(e): players seat 1 up, upcard, players again, hole card face down.
        (Game.BLACKJACK, [(2, "2S"), (5, "3S"), (None, "4S"), (2, "5S"), (5, "6S"), (None, None)]),
        (
            Game.TRIPLE_ATTACK,
            [(2, "2S"), (5, "3S"), (None, "4S"), (2, "5S"), (5, "6S"), (None, None)],
        ),
        # Double attack: the dealer's upcard is the first card of the round.
        (
            Game.DOUBLE_ATTACK,
            [(None, "2S"), (2, "3S"), (5, "4S"), (2, "5S"), (5, "6S"), (None, None)],
        ),
    ],
)
def test_deal_order_per_game(game: Game, receivers: list[tuple[int | None, str | None]]) -> None:
    engine = make_engine(game)
    feed(engine, [wager(5, MAIN[game], "10"), wager(2, MAIN[game], "10")])
    dealt = of_type(play(engine, "2S 3S 4S 5S 6S 7S"), CardDealt)
    assert [(d.seat, None if d.card is None else str(d.card)) for d in dealt] == receivers
    assert [d.hand for d in dealt] == [None if seat is None else 1 for seat, _ in receivers]
    assert turn(engine) == {"seat": 2, "hand": 1}


def test_seat_without_the_main_wager_is_not_dealt_in() -> None:
    engine = make_engine("blackjack")
    feed(
        engine, [wager(3, "blackjack", "10"), wager(1, "blackjack", "10"), withdraw(1, "blackjack")]
    )
    dealt = of_type(play(engine, "2S 4S 5S 7S"), CardDealt)
    assert [d.seat for d in dealt] == [3, None, 3, None]


# ------------------------------------------------------------------------------ card checks
def test_card_with_no_round_is_rejected() -> None:
    engine = make_engine("triple_attack")
    error = rejected(engine, DealCard(card("9S")), CardRejected)
    assert error.reason == "no_round"
    assert feed(engine, [wager(1, "first_attack", "10")]) == [
        RoundOpened(1),
        WagerAccepted(1, 1, WagerKind.FIRST_ATTACK, 1000),
    ]


def test_card_when_every_wager_was_withdrawn_is_rejected() -> None:
    engine = make_engine("triple_attack")
    feed(engine, [wager(1, "first_attack", "10"), withdraw(1, "first_attack")])
    error = rejected(engine, DealCard(card("9S")), CardRejected)
    assert error.reason == "no_round"
    feed(engine, [wager(1, "first_attack", "10")])
    assert play(engine, "9S") == [CardDealt(1, 1, 1, card("9S"))]


def test_card_after_the_round_ended_is_rejected() -> None:
    engine = bj_round({1: "KC 9C"}, upcard="9S", hole="KH")
    assert feed(engine, [action("stand", 1)])[-1] == RoundEnded(1)
    error = rejected(engine, DealCard(card("5D")), CardRejected)
    assert error.reason == "no_round"
    assert feed(engine, [wager(1, "blackjack", "10")])[0] == RoundOpened(2)
    assert play(engine, "5D") == [CardDealt(2, 1, 1, card("5D"))]


@pytest.mark.parametrize("text", ["10H", "TH", "10S"])
def test_ten_in_a_spanish_shoe_is_rejected(text: str) -> None:
    engine = make_engine("triple_attack")
    feed(engine, [wager(1, "first_attack", "10"), wager(2, "first_attack", "10")])
    play(engine, "9C")
    error = rejected(engine, DealCard(card(text)), CardRejected)
    assert error.reason == "not_in_deck_kind"
    assert play(engine, "JH") == [CardDealt(1, 2, 1, card("JH"))]


def test_more_copies_of_a_card_than_the_shoe_holds_are_rejected() -> None:
    engine = make_engine("triple_attack", decks=1, burn_cards=0)
    feed(engine, [Shuffle(), wager(1, "first_attack", "10"), wager(2, "first_attack", "10")])
    play(engine, "AS")
    error = rejected(engine, DealCard(card("AS")), CardRejected)
    assert error.reason == "not_in_shoe"
    assert play(engine, "AH") == [CardDealt(1, 2, 1, card("AH"))]


def test_eight_decks_hold_eight_of_each_card() -> None:
    engine = make_engine("triple_attack", burn_cards=0)
    feed(engine, [Shuffle()] + [wager(seat, "first_attack", "10") for seat in range(1, 8)])
    play(engine, " ".join(["8S"] * 7))  # every player's first card
    play(engine, "8S")  # the upcard: the eighth
    error = rejected(engine, DealCard(card("8S")), CardRejected)
    assert error.reason == "not_in_shoe"


def test_a_burned_card_counts_against_the_shoe() -> None:
    engine = make_engine("triple_attack", decks=1, burn_cards=1)
    feed(engine, [Shuffle(), wager(1, "first_attack", "10")])
    assert play(engine, "KS") == [CardBurned(1)]
    error = rejected(engine, DealCard(card("KS")), CardRejected)
    assert error.reason == "not_in_shoe"


# ------------------------------------------------------------------------------------ burns
@pytest.mark.parametrize("burns", [0, 1, 2, 3])
def test_burn_cards_after_a_shuffle_count_from_the_configuration(burns: int) -> None:
    engine = make_engine("blackjack", burn_cards=burns)
    assert engine.apply(Shuffle()) == [ShoeShuffled(1)]
    feed(engine, [wager(1, "blackjack", "10")])
    burned = ["KS", "QS", "JS"][:burns]
    for text in burned:
        assert play(engine, text) == [CardBurned(1)]
    assert play(engine, "2D") == [CardDealt(1, 1, 1, card("2D"))]
    seen = json.dumps(engine.public_view())
    assert not any(text in seen for text in burned)


def test_a_burn_that_came_before_its_shuffle_was_announced_counts_for_that_shuffle() -> None:
    """A shoe that does not announce its shuffles (the console does, and can be late): the
    burn it flags before the shuffle reaches the table is that shuffle's, and gone from its
    shoe; the round's first card is not taken for a burn."""
    engine = make_engine("blackjack", decks=2, burn_cards=1)
    assert engine.apply(DealCard(card("KS"), burned=True)) == [CardBurned(0)]
    engine.apply(Shuffle())
    assert engine.burns_due == 0
    assert engine.remaining is not None
    assert engine.remaining[card("KS")] == 1
    feed(engine, [wager(1, "blackjack", "10")])
    assert play(engine, "2D") == [CardDealt(1, 1, 1, card("2D"))]


def test_a_burn_before_a_round_card_belongs_to_the_old_shoe() -> None:
    engine = make_engine("blackjack", decks=2, burn_cards=1)
    feed(engine, [Shuffle()])
    play(engine, "QH")  # the shuffle's burn
    engine.apply(DealCard(card("KS"), burned=True))  # one more, none due
    feed(engine, [wager(1, "blackjack", "10")])
    play(engine, "2D")  # a card of a round: the extra burn was this shoe's
    engine.apply(VoidRound("test"))
    engine.apply(Shuffle())
    assert engine.burns_due == 1
    assert engine.remaining is not None
    assert engine.remaining[card("KS")] == 2


def test_burned_card_is_never_shown() -> None:
    engine = make_engine("blackjack", burn_cards=1)
    engine.apply(Shuffle())
    [burned] = play(engine, "QH")  # burned before any wager
    assert burned == CardBurned(1)
    assert burned.to_mapping() == {"type": "card_burned", "shoe": 1}
    assert "QH" not in repr(burned)
    assert engine.public_view()["round"] is None


def test_burned_card_in_the_middle_of_a_round_is_rejected() -> None:
    engine = make_engine("blackjack")
    feed(engine, [wager(1, "blackjack", "10")])
    play(engine, "2D")
    error = rejected(engine, DealCard(card("QH"), burned=True), CardRejected)
    assert error.reason == "burn_mid_round"
    assert play(engine, "QH") == [CardDealt(1, None, None, card("QH"))]


def test_shuffle_mid_round_is_rejected() -> None:
    engine = make_engine("blackjack")
    feed(engine, [wager(1, "blackjack", "10")])
    play(engine, "2D")
    error = rejected(engine, Shuffle(), RoundStateError)
    assert error.reason == "mid_round"
    play(engine, "9S 5D 9H")  # seat 1: 7, dealer 9 up
    assert rejected(engine, Shuffle(), RoundStateError).reason == "mid_round"
    feed(engine, [action("stand", 1)])  # dealer 18 stands; the round is over
    assert engine.apply(Shuffle()) == [ShoeShuffled(1)]


# ---------------------------------------------------------------------------------- actions
def test_action_with_no_hand_in_play_is_rejected() -> None:
    engine = make_engine("blackjack")
    assert rejected(engine, action("stand", 1), ActionRejected).reason == "not_in_play"
    feed(engine, [wager(1, "blackjack", "10")])
    play(engine, "2D 9S")
    assert rejected(engine, action("hit", 1), ActionRejected).reason == "not_in_play"


def test_action_out_of_turn_is_rejected() -> None:
    engine = bj_round({1: "KC 6C", 3: "9D 8D"}, upcard="9S", hole="7H")
    error = rejected(engine, action("stand", 3), ActionRejected)
    assert error.reason == "out_of_turn"
    assert error.action == "stand"
    assert rejected(engine, action("stand", 1, 2), ActionRejected).reason == "out_of_turn"
    assert feed(engine, [action("stand", 1, 1)])[:2] == [
        PlayerActed(1, 1, 1, "stand"),
        HandCompleted(1, 1, 1, 16, "stand"),
    ]
    assert turn(engine) == {"seat": 3, "hand": 1}


def test_stand_on_a_one_card_split_hand_is_rejected() -> None:
    engine = bj_round({1: "8C 8D"}, upcard="9S", hole="7H")
    feed(engine, [action("split", 1)])
    assert rejected(engine, action("stand", 1), ActionRejected).reason == "needs_a_card"
    assert play(engine, "2H") == [CardDealt(1, 1, 1, card("2H"))]
    assert feed(engine, [action("stand", 1)])[1] == HandCompleted(1, 1, 1, 10, "stand")
    assert turn(engine) == {"seat": 1, "hand": 2}


def test_double_on_three_cards_is_rejected() -> None:
    engine = bj_round({1: "2C 3C"}, upcard="9S", hole="7H")
    play(engine, "4D")
    assert rejected(engine, action("double", 1), ActionRejected).reason == "two_cards_only"
    assert feed(engine, [action("stand", 1)])[1] == HandCompleted(1, 1, 1, 9, "stand")


def test_double_after_split_only_where_the_table_allows_it() -> None:
    engine = bj_round({1: "8C 8D"}, upcard="9S", hole="7H", double_after_split=False)
    feed(engine, [action("split", 1)])
    play(engine, "3H")
    error = rejected(engine, action("double", 1), ActionRejected)
    assert error.reason == "no_double_after_split"
    engine = bj_round({1: "8C 8D"}, upcard="9S", hole="7H", double_after_split=True)
    feed(engine, [action("split", 1)])
    play(engine, "3H")
    assert feed(engine, [action("double", 1)]) == [PlayerActed(1, 1, 1, "double")]
    assert play(engine, "KH")[1] == HandCompleted(1, 1, 1, 21, "twenty_one")


@pytest.mark.parametrize("pair", ["8C 9C", "2C 3C", "AC KC"])
def test_split_of_a_non_pair_is_rejected(pair: str) -> None:
    engine = bj_round({1: pair, 2: "9D 8D"}, upcard="9S", hole="7H")
    if pair == "AC KC":  # a blackjack: the hand is over before anyone acts
        assert turn(engine) == {"seat": 2, "hand": 1}
        assert rejected(engine, action("split", 1), ActionRejected).reason == "out_of_turn"
        return
    assert rejected(engine, action("split", 1), ActionRejected).reason == "not_a_pair"


def test_split_aces_get_one_card_each() -> None:
    engine = bj_round({1: "AC AD", 2: "9D 8D"}, upcard="9S", hole="7H")
    out = feed(engine, [action("split", 1)])
    assert out == [PlayerActed(1, 1, 1, "split")]
    assert play(engine, "5H") == [
        CardDealt(1, 1, 1, card("5H")),
        HandCompleted(1, 1, 1, 16, "split_ace"),
    ]
    assert turn(engine) == {"seat": 1, "hand": 2}
    assert play(engine, "9H") == [
        CardDealt(1, 1, 2, card("9H")),
        HandCompleted(1, 1, 2, 20, "split_ace"),
    ]
    assert turn(engine) == {"seat": 2, "hand": 1}


def test_split_aces_may_draw_on_where_the_table_allows_it() -> None:
    engine = bj_round({1: "AC AD"}, upcard="9S", hole="7H", split_aces_one_card=False)
    feed(engine, [action("split", 1)])
    assert play(engine, "2H") == [CardDealt(1, 1, 1, card("2H"))]  # soft 13, still in play
    assert turn(engine) == {"seat": 1, "hand": 1}


def test_resplit_of_aces_is_rejected() -> None:
    engine = bj_round({1: "AC AD"}, upcard="9S", hole="7H")
    feed(engine, [action("split", 1)])
    assert play(engine, "AH")[1] == HandCompleted(1, 1, 1, 12, "split_ace")  # A + A: no resplit
    error = rejected(engine, action("split", 1, 1), ActionRejected)
    assert error.reason == "out_of_turn"  # the pair of aces is already a finished hand
    error = rejected(engine, action("split", 1), ActionRejected)
    assert error.reason == "not_a_pair"  # hand 2 holds one ace
    assert play(engine, "KH")[1] == HandCompleted(1, 1, 2, 21, "twenty_one")
    assert len(engine.public_view()["round"]["seats"][0]["hands"]) == 2


def test_too_many_hands_is_rejected() -> None:
    engine = bj_round({1: "8C 8D"}, upcard="9S", hole="7H", max_hands_per_seat=2)
    feed(engine, [action("split", 1)])
    play(engine, "8H")  # hand 1: 8, 8 again
    assert rejected(engine, action("split", 1), ActionRejected).reason == "too_many_hands"
    engine = bj_round({1: "8C 8D"}, upcard="9S", hole="7H", max_hands_per_seat=3)
    feed(engine, [action("split", 1)])
    play(engine, "8H")
    feed(engine, [action("split", 1)])
    hands = engine.public_view()["round"]["seats"][0]["hands"]
    assert [hand["cards"] for hand in hands] == [["8C"], ["8H"], ["8D"]]


def test_surrender_after_hitting_is_rejected() -> None:
    engine = bj_round({1: "2C 3C"}, upcard="9S", hole="7H")
    play(engine, "4D")
    assert rejected(engine, action("surrender", 1), ActionRejected).reason == "too_late"
    assert feed(engine, [action("stand", 1)])[1] == HandCompleted(1, 1, 1, 9, "stand")


def test_surrender_after_a_hit_decision_before_its_card_is_rejected() -> None:
    engine = bj_round({1: "KC 6C"}, upcard="9S", hole="7H")
    assert feed(engine, [action("hit", 1)]) == [PlayerActed(1, 1, 1, "hit")]
    assert rejected(engine, action("surrender", 1), ActionRejected).reason == "hit_pending"
    assert play(engine, "2D") == [CardDealt(1, 1, 1, card("2D"))]


def test_surrender_of_a_split_hand_is_rejected() -> None:
    engine = bj_round({1: "8C 8D"}, upcard="9S", hole="7H")
    feed(engine, [action("split", 1)])
    play(engine, "3H")  # hand 1: 11
    assert rejected(engine, action("surrender", 1), ActionRejected).reason == "too_late"
    feed(engine, [action("stand", 1)])
    play(engine, "2H")  # hand 2 (no decision taken on it yet): 10
    assert rejected(engine, action("surrender", 1, 2), ActionRejected).reason == "too_late"


def test_surrender_as_first_decision_where_offered() -> None:
    engine = bj_round({1: "KC 6C"}, upcard="9S", hole="7H", surrender=False)
    assert rejected(engine, action("surrender", 1), ActionRejected).reason == "not_offered"
    engine = bj_round({1: "KC 6C"}, upcard="9S", hole="7H")
    out = feed(engine, [action("surrender", 1)])
    assert out[:2] == [PlayerActed(1, 1, 1, "surrender"), HandCompleted(1, 1, 1, 16, "surrender")]
    assert out[-1] == RoundEnded(1)  # nobody needs the dealer


# ----------------------------------------------------------------------------------- dealer
def test_dealer_stands_on_soft_17_by_configuration() -> None:
    engine = bj_round({1: "KC 8C"}, upcard="AS", hole="6H", dealer_hits_soft_17=False)
    out = feed(engine, [action("stand", 1)])
    assert out[2:] == [
        HoleCardRevealed(1, card("6H"), 17),
        HandCompleted(1, None, None, 17, "stand"),
        RoundEnded(1),
    ]


def test_dealer_hits_soft_17_by_configuration() -> None:
    engine = bj_round({1: "KC 8C"}, upcard="AS", hole="6H", dealer_hits_soft_17=True)
    out = feed(engine, [action("stand", 1)])
    assert out[2:] == [HoleCardRevealed(1, card("6H"), 17)]
    assert engine.public_view()["round"]["stage"] == "dealer"
    assert play(engine, "2D") == [
        CardDealt(1, None, None, card("2D")),
        HandCompleted(1, None, None, 19, "stand"),
        RoundEnded(1),
    ]


def test_dealer_stands_on_hard_17_even_where_it_hits_soft_17() -> None:
    engine = bj_round({1: "KC 8C"}, upcard="KS", hole="7H", dealer_hits_soft_17=True)
    assert feed(engine, [action("stand", 1)])[-1] == RoundEnded(1)


# ------------------------------------------------------------------------------------- void
def test_void_before_the_deal_returns_the_regulated_wagers() -> None:
    engine = make_engine("triple_attack")
    feed(engine, [wager(1, "first_attack", "10"), wager(4, "first_attack", "25")])
    out = engine.apply(VoidRound("misdeal"))
    assert [(s.seat, s.hand, s.wager, s.stake, s.order) for s in settlements(out)] == [
        (4, 1, WagerKind.FIRST_ATTACK, 2500, 1),
        (1, 1, WagerKind.FIRST_ATTACK, 1000, 2),
    ]
    assert out[-1] == RoundEnded(1, voided=True, reason="misdeal")


def test_void_mid_round_returns_only_unsettled_attack_wagers() -> None:
    engine = make_engine("triple_attack")
    feed(engine, [wager(seat, "first_attack", "10") for seat in (1, 2, 3)])
    play(engine, "KC 9D 8H")
    feed(engine, [wager(3, "second_attack", "10")])
    play(engine, "7S")
    feed(engine, [wager(2, "third_attack", "10")])
    play(engine, "6C 8D 9H 5S")
    play(engine, "QC")  # seat 1 busts on 26: collected at once
    out = engine.apply(VoidRound("shoe fault"))
    returned = settlements(out)
    assert [(s.seat, s.hand, s.wager, s.stake) for s in returned] == [
        (3, 1, WagerKind.FIRST_ATTACK, 1000),
        (3, 1, WagerKind.SECOND_ATTACK, 1000),
        (2, 1, WagerKind.FIRST_ATTACK, 1000),
        (2, 1, WagerKind.THIRD_ATTACK, 1000),
    ]
    for each in returned:
        assert (each.result, each.won, each.odds, each.phase) == (Result.VOID, 0, None, Phase.VOID)
        assert each.outcome == "round_voided"
    assert [s.order for s in returned] == [1, 2, 3, 4]
    assert out[-1] == RoundEnded(1, voided=True, reason="shoe fault")
    assert engine.public_view()["round"]["stage"] == "over"
    assert rejected(engine, DealCard(card("2H")), CardRejected).reason == "no_round"
    assert rejected(engine, VoidRound(), RoundStateError).reason == "no_round"


def test_void_at_double_attack_returns_an_unsettled_bonus_only() -> None:
    engine = make_engine("double_attack")
    feed(engine, [wager(1, "initial", "20"), wager(1, "optional_bonus", "5")])
    feed(engine, [wager(2, "initial", "20")])
    feed(engine, initial_deal("double_attack", {1: "9C 8C", 2: "9D 8D"}, upcard="6S", hole="6H"))
    out = engine.apply(VoidRound("misdeal"))
    [returned] = settlements(out)
    assert (returned.seat, returned.hand, returned.wager, returned.stake) == (
        1,
        None,
        WagerKind.OPTIONAL_BONUS,
        500,
    )
    assert (returned.result, returned.phase, returned.won) == (Result.VOID, Phase.VOID, 0)
    # A bonus already lost at the reveal is not returned by a later void.
    engine = make_engine("double_attack", dealer_hits_soft_17=True)
    feed(engine, [wager(1, "initial", "20"), wager(1, "optional_bonus", "5")])
    feed(engine, initial_deal("double_attack", {1: "9C 8C"}, upcard="6S", hole="AH"))
    assert settlements(feed(engine, [action("stand", 1)]))[0].result is Result.LOSE
    out = engine.apply(VoidRound("dealer misdraw"))
    assert settlements(out) == []
    assert out == [RoundEnded(1, voided=True, reason="dealer misdraw")]


def test_void_with_no_round_is_rejected() -> None:
    engine = make_engine("blackjack")
    assert rejected(engine, VoidRound(), RoundStateError).reason == "no_round"


# -------------------------------------------------------------------------------- hole card
def _mentions(text: str, hole: str) -> bool:
    return hole in text or repr(card(hole)) in text


@pytest.mark.parametrize(
    ("game", "reader", "upcard"),
    [
        (Game.BLACKJACK, False, "9S"),
        (Game.BLACKJACK, True, "KS"),  # the reader peeks (no blackjack) and shows nothing
        (Game.DOUBLE_ATTACK, True, "AS"),
        (Game.TRIPLE_ATTACK, True, "9S"),
    ],
)
def test_hole_card_never_shown_before_its_reveal(game: Game, *, reader: bool, upcard: str) -> None:
    hole = "2H"
    engine = make_engine(game, hole_card_reader=reader)
    feed(engine, [wager(1, MAIN[game], "10"), wager(2, MAIN[game], "10")])
    before: list[Output] = feed(
        engine, initial_deal(game, {1: "KC 6C", 2: "9D 7D"}, upcard=upcard, hole=hole)
    )
    before += play(engine, "5C")  # seat 1: 16 + 5 = 21, over by itself
    before += feed(engine, [action("stand", 2)])
    reveal = next(i for i, item in enumerate(before) if isinstance(item, HoleCardRevealed))
    for item in before[:reveal]:
        assert not _mentions(json.dumps(item.to_mapping()), hole)
        assert not _mentions(repr(item), hole)
    revealed = before[reveal]
    assert isinstance(revealed, HoleCardRevealed)
    assert revealed.card == card(hole)


def test_hole_card_not_in_public_view_nor_in_error_messages() -> None:
    hole = "QH"
    engine = make_engine("triple_attack", decks=1, burn_cards=0, hole_card_reader=False)
    feed(engine, [Shuffle(), wager(1, "first_attack", "10")])
    play(engine, "KC 9S 6C")
    # A hole card the shoe cannot hold is rejected without naming it.
    for bad in ("10H", "KC"):
        error = rejected(engine, DealCard(card(bad)), CardRejected)
        assert not _mentions(error.message, bad)
        assert not _mentions(str(error), bad)
    play(engine, hole)
    view = json.dumps(engine.public_view())
    assert not _mentions(view, hole)
    assert engine.public_view()["round"]["dealer"] == {
        "cards": ["9S", None],
        "total": 9,
        "hole_revealed": False,
    }
    probes: list[tuple[TableEvent, type[EventError]]] = [
        (action("stand", 2), ActionRejected),
        (action("split", 1), ActionRejected),
        (action("surrender", 1), ActionRejected),
        (Shuffle(), RoundStateError),
        (wager(1, "second_attack", "10"), WagerRejected),
        (wager(2, "first_attack", "10"), WagerRejected),
        (DealCard(card("10S")), CardRejected),
        (DealCard(card(hole)), CardRejected),  # the one-deck shoe has no second QH
        (DealCard(card("JH"), burned=True), CardRejected),
    ]
    for event, error_type in probes:
        message = str(rejected(engine, event, error_type))
        assert not _mentions(message, hole), message
    out = feed(engine, [action("stand", 1)])
    assert out[2] == HoleCardRevealed(1, card(hole), 19)


# ---------------------------------------------------------------------------- new settings
def test_new_settings_between_rounds_keep_the_shoe_as_it_is() -> None:
    """A reload's new settings take effect between rounds without a shuffle: the cards dealt
    since the shuffle stay out, the burn still due stays due, the round numbers go on."""
    engine = make_engine(paytable="A")
    feed(engine, [Shuffle(), *cards("2C"), wager(1, "blackjack", "25")])  # 2C: the burn
    play(engine, "10S 9H 7D 10C")  # seat 1 holds 17 against the dealer's 19
    feed(engine, [action("stand", 1)])
    assert not engine.round_open
    remaining, round_id = dict(engine.remaining or {}), engine.round_id
    fresh = engine.reconfigured(make_config(paytable="B"))
    assert fresh.config.paytable_name == "B"
    assert (fresh.shoe, fresh.burns_due, fresh.next_round_id) == (1, 0, engine.next_round_id)
    assert dict(fresh.remaining or {}) == remaining
    feed(fresh, [wager(1, "blackjack", "25")])
    assert fresh.round_id == (round_id or 0) + 1


def test_new_settings_for_another_shoe_forget_its_composition() -> None:
    engine = make_engine()
    feed(engine, [Shuffle()])
    fresh = engine.reconfigured(make_config(decks=8))
    assert fresh.remaining is None  # unknown until the 8-deck shoe is shuffled
    assert fresh.burns_due == engine.burns_due


def test_settings_never_change_in_the_middle_of_a_round() -> None:
    engine = make_engine()
    feed(engine, [Shuffle(), *cards("2C"), wager(1, "blackjack", "25")])
    with pytest.raises(RoundStateError):
        engine.reconfigured(make_config(paytable="B"))


def test_a_burn_gone_by_unread_between_rounds_is_no_longer_due() -> None:
    """The shoe burned a card it could not read: the burn is done, so the round's first card
    is dealt, not taken for the burn; the shoe's count keeps the unknown card."""
    engine = make_engine("blackjack", decks=2, burn_cards=2)
    feed(engine, [Shuffle()])
    remaining = copy.copy(engine.remaining)
    engine.burned_unread()
    assert engine.burns_due == 1
    engine.burned_unread()
    engine.burned_unread()  # none due any more: nothing to take
    assert engine.burns_due == 0
    assert engine.remaining == remaining
    feed(engine, [wager(1, "blackjack", "10")])
    assert play(engine, "2D") == [CardDealt(1, 1, 1, card("2D"))]


def test_a_burn_gone_by_unread_in_a_round_changes_nothing() -> None:
    """A burn comes before the deal, never in it: in a round being dealt nothing is due."""
    engine = make_engine("blackjack", decks=2, burn_cards=1)
    feed(engine, [Shuffle(), wager(1, "blackjack", "10")])
    play(engine, "QH")  # the burn
    play(engine, "2D")  # the round's first card
    engine.burns_due = 1  # as a restored state could hold it
    engine.burned_unread()
    assert engine.burns_due == 1


def test_burns_the_dealer_dealt_unheard_are_no_longer_due() -> None:
    engine = make_engine("blackjack", decks=2, burn_cards=3)
    feed(engine, [Shuffle()])
    engine.burned_unheard(0)
    assert engine.burns_due == 3
    engine.burned_unheard(2)
    assert engine.burns_due == 1
    feed(engine, [wager(1, "blackjack", "10")])
    assert play(engine, "QH") == [CardBurned(1)]
    assert play(engine, "2D") == [CardDealt(1, 1, 1, card("2D"))]


@pytest.mark.parametrize("count", [-1, 2])
def test_more_burns_unheard_than_are_due_is_refused_and_changes_nothing(count: int) -> None:
    engine = make_engine("blackjack", decks=2, burn_cards=1)
    feed(engine, [Shuffle()])
    with pytest.raises(RoundStateError) as raised:
        engine.burned_unheard(count)
    assert raised.value.reason == "burns_not_due"
    assert engine.burns_due == 1
