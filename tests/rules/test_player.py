"""rules.player: the basic strategy chart, legal actions, seeded shoes and whole rounds."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from typing import Any

import pytest

from rules.cards import Card, DeckKind, Rank, Suit, shoe_composition
from rules.config import TableConfig
from rules.engine import TableEngine
from rules.events import DealCard, PlaceWager, PlayerAction, Shuffle, VoidRound
from rules.games import Action, Game, WagerKind
from rules.outputs import RoundEnded, Settlement
from rules.player import (
    CHART,
    Dealer,
    SimulatedRound,
    basic_strategy,
    legal_actions,
    play_round,
    random_policy,
    seeded_shoe,
)

H, S, D, P, R = Action.HIT, Action.STAND, Action.DOUBLE, Action.SPLIT, Action.SURRENDER


def seeded(seed: int) -> random.Random:
    return random.Random(seed)  # noqa: S311 - reproducible test data, not a secret


def cards(text: str) -> list[Card]:
    return [Card.parse(word) for word in text.split()]


def decide(hand: str, upcard: str, *, h17: bool = False, **allowed: bool) -> Action:
    flags = {"can_double": True, "can_split": True, "can_surrender": True} | allowed
    return basic_strategy(cards(hand), Card.parse(upcard), hits_soft_17=h17, **flags)


# The published multi-deck chart (4-8 decks, double after split, late surrender), cell by
# cell where it is easy to get wrong: (hand, upcard, stands on soft 17, hits soft 17).
CHART_CELLS = [
    # hard totals
    ("5S 3H", "6D", H, H),
    ("5S 4H", "2D", H, H),
    ("5S 4H", "3D", D, D),
    ("5S 4H", "7D", H, H),
    ("6S 4H", "9D", D, D),
    ("6S 4H", "10D", H, H),
    ("6S 5H", "10D", D, D),
    ("6S 5H", "AD", H, D),
    ("10S 2H", "3D", H, H),
    ("10S 2H", "4D", S, S),
    ("10S 2H", "7D", H, H),
    ("10S 3H", "2D", S, S),
    ("9S 6H", "10D", R, R),
    ("9S 6H", "9D", H, H),
    ("9S 6H", "AD", H, R),
    ("9S 7H", "6D", S, S),
    ("9S 7H", "7D", H, H),
    ("9S 7H", "9D", R, R),
    ("9S 7H", "KD", R, R),
    ("9S 7H", "AD", R, R),
    ("10S 7H", "AD", S, R),
    ("10S 8H", "AD", S, S),
    # soft totals
    ("AS 2H", "4D", H, H),
    ("AS 2H", "5D", D, D),
    ("AS 4H", "4D", D, D),
    ("AS 6H", "2D", H, H),
    ("AS 6H", "3D", D, D),
    ("AS 6H", "7D", H, H),
    ("AS 7H", "2D", S, D),
    ("AS 7H", "3D", D, D),
    ("AS 7H", "7D", S, S),
    ("AS 7H", "9D", H, H),
    ("AS 7H", "AD", H, H),
    ("AS 8H", "6D", S, D),
    ("AS 8H", "5D", S, S),
    ("AS 9H", "6D", S, S),
    # pairs
    ("AS AH", "AD", P, P),
    ("8S 8H", "10D", P, P),
    ("8S 8H", "AD", P, R),
    ("9S 9H", "7D", S, S),
    ("9S 9H", "8D", P, P),
    ("9S 9H", "10D", S, S),
    ("9S 9H", "AD", S, S),
    ("7S 7H", "7D", P, P),
    ("7S 7H", "8D", H, H),
    ("6S 6H", "2D", P, P),
    ("6S 6H", "7D", H, H),
    ("5S 5H", "9D", D, D),
    ("5S 5H", "10D", H, H),
    ("4S 4H", "4D", H, H),
    ("4S 4H", "5D", P, P),
    ("3S 3H", "3D", P, P),
    ("2S 2H", "7D", P, P),
    ("2S 2H", "8D", H, H),
    ("KS QH", "6D", S, S),
    ("10S JH", "AD", S, S),
]


@pytest.mark.parametrize(("hand", "upcard", "s17", "h17"), CHART_CELLS)
def test_chart_cells(hand: str, upcard: str, s17: Action, h17: Action) -> None:
    assert decide(hand, upcard) is s17
    assert decide(hand, upcard, h17=True) is h17


@pytest.mark.parametrize(
    ("hand", "upcard", "allowed", "expected"),
    [
        ("AS 7H", "3D", {"can_double": False}, S),  # Ds: double, else stand
        ("6S 5H", "5D", {"can_double": False}, H),  # Dh: double, else hit
        ("9S 7H", "10D", {"can_surrender": False}, H),  # Rh
        ("10S 7H", "AD", {"can_surrender": False, "h17": True}, S),  # Rs
        ("8S 8H", "AD", {"can_surrender": False, "h17": True}, P),  # Rp
        ("8S 8H", "10D", {"can_split": False}, R),  # an unsplittable pair plays its total
        ("AS AH", "6D", {"can_split": False}, H),  # soft 12
        ("5S 4H 7D", "10C", {"can_double": False, "can_surrender": False}, H),  # hard 16
        ("AS 2H 4D", "4C", {"can_double": False, "can_surrender": False}, H),  # soft 17
        ("AS 3H 4D", "4C", {"can_double": False, "can_surrender": False}, S),  # soft 18
        ("2S 2H 3D 4C 2D", "6C", {"can_double": False, "can_surrender": False}, S),  # hard 13
    ],
)
def test_chart_falls_back_when_an_action_is_not_allowed(
    hand: str, upcard: str, allowed: dict[str, Any], expected: Action
) -> None:
    assert decide(hand, upcard, **allowed) is expected


def test_chart_is_complete_data() -> None:
    upcards = range(2, 12)
    assert set(CHART["hard"]) == {(row, up) for row in range(4, 22) for up in upcards}
    assert set(CHART["soft"]) == {(row, up) for row in range(12, 22) for up in upcards}
    assert set(CHART["pair"]) == {(row, up) for row in range(2, 12) for up in upcards}
    codes = {code for table in CHART.values() for code in table.values()}
    assert codes <= {"H", "S", "Dh", "Ds", "P", "Rh", "Rs", "Rp", "-"}


def test_only_allowed_actions_come_back() -> None:
    ranks = [Card(rank, Suit.SPADES) for rank in Rank]
    for first, second, up in itertools.product(ranks, ranks, ranks):
        for double, split, surrender, h17 in itertools.product([False, True], repeat=4):
            action = basic_strategy(
                [first, second],
                up,
                can_double=double,
                can_split=split,
                can_surrender=surrender,
                hits_soft_17=h17,
            )
            allowed = {H, S}
            allowed |= {D} if double else set()
            allowed |= {P} if split else set()
            allowed |= {R} if surrender else set()
            assert action in allowed


def test_a_decision_needs_two_cards() -> None:
    with pytest.raises(ValueError, match="two cards"):
        decide("8S", "6D")


# ---------------------------------------------------------------------------- tables
LIMITS = {
    Game.BLACKJACK: ("blackjack", "twenty_point_bonus"),
    Game.DOUBLE_ATTACK: ("initial", "optional_bonus", "double_attack"),
    Game.TRIPLE_ATTACK: ("first_attack", "second_attack", "third_attack"),
}


def config(game: Game, **settings: Any) -> TableConfig:
    limits = {kind: {"min": "1", "max": "500"} for kind in LIMITS[game]}
    return TableConfig.from_mapping({"id": "t1", "game": game.value, "limits": limits} | settings)


def full_plan(game: Game, seats: int = 7) -> dict[int, dict[WagerKind, int]]:
    wagers = {WagerKind(kind): 2500 for kind in LIMITS[game]}
    if game is Game.BLACKJACK:
        wagers[WagerKind.TWENTY_POINT_BONUS] = 500
    return dict.fromkeys(range(1, seats + 1), wagers)


@pytest.mark.parametrize(
    ("game", "hand", "settings", "from_split", "expected"),
    [
        (Game.BLACKJACK, "8S 8H", {}, False, {H, S, D, P, R}),
        (Game.BLACKJACK, "8S 8H", {}, True, {H, S, D, P}),
        (Game.BLACKJACK, "8S 8H", {"double_after_split": False}, True, {H, S, P}),
        (Game.BLACKJACK, "AS AH", {}, True, {H, S, D}),
        (Game.BLACKJACK, "AS AH", {"split_aces_one_card": False}, True, {H, S, D, P}),
        (Game.BLACKJACK, "9S 7H 2D", {}, False, {H, S}),
        (Game.BLACKJACK, "9S 7H", {"surrender": False}, False, {H, S, D}),
        (Game.TRIPLE_ATTACK, "9S 7H", {"surrender": True}, False, {H, S, D}),
        (Game.DOUBLE_ATTACK, "KS QH", {}, False, {H, S, D, P, R}),
    ],
)
def test_legal_actions(
    game: Game,
    hand: str,
    settings: dict[str, Any],
    from_split: bool,  # noqa: FBT001 - parametrized
    expected: set[Action],
) -> None:
    table = config(game, **settings)
    assert legal_actions(table, cards(hand), from_split=from_split) == expected


def test_seeded_shoe_is_a_full_shoe_of_distinct_objects_in_a_seeded_order() -> None:
    shoe = seeded_shoe(8, DeckKind.SPANISH, seeded(7))
    assert Counter(shoe) == shoe_composition(8, DeckKind.SPANISH)
    assert len({id(card) for card in shoe}) == len(shoe) == 384
    assert shoe == seeded_shoe(8, DeckKind.SPANISH, seeded(7))
    assert shoe != seeded_shoe(8, DeckKind.SPANISH, seeded(8))


# ---------------------------------------------------------------------------- rounds
def fresh_table(table: TableConfig, seed: int) -> tuple[TableEngine, list[Card]]:
    engine = TableEngine(table)
    engine.apply(Shuffle())
    shoe = seeded_shoe(table.decks, table.deck_kind, seeded(seed))
    for card in shoe[: table.burn_cards]:
        engine.apply(DealCard(card, burned=True))
    return engine, shoe[table.burn_cards :]


@pytest.mark.parametrize("game", list(Game))
def test_play_round_plays_a_seven_seat_round_to_its_end(game: Game) -> None:
    table = config(game)
    engine, shoe = fresh_table(table, seed=3)
    played = play_round(engine, iter(shoe), full_plan(game), seeded(3))
    assert played.outputs[-1] == RoundEnded(1)
    wagers = [e for e in played.events if isinstance(e, PlaceWager)]
    assert len(wagers) == 7 * len(LIMITS[game])  # later windows included
    settled = [o for o in played.outputs if isinstance(o, Settlement)]
    if game is Game.TRIPLE_ATTACK:
        assert len(settled) >= 7 * 3
    else:
        assert len(settled) == 7
    # Every hit and double is followed by its card.
    for event, following in itertools.pairwise(played.events):
        if isinstance(event, PlayerAction) and event.action in (H, D):
            assert isinstance(following, DealCard)


@pytest.mark.parametrize("game", list(Game))
def test_play_round_is_deterministic_for_a_seed(game: Game) -> None:
    def events(seed: int) -> list[Any]:
        engine, shoe = fresh_table(config(game), seed)
        return play_round(engine, iter(shoe), full_plan(game), seeded(seed), random_policy).events

    assert events(11) == events(11)


def test_an_empty_shoe_voids_the_round() -> None:
    table = config(Game.BLACKJACK)
    engine, shoe = fresh_table(table, seed=1)
    played = play_round(engine, iter(shoe[:5]), full_plan(Game.BLACKJACK, 3), seeded(1))
    assert played.events[-1] == VoidRound("the shoe ran out of cards")
    assert played.outputs[-1] == RoundEnded(1, voided=True, reason="the shoe ran out of cards")


def test_no_wagers_no_round() -> None:
    table = config(Game.BLACKJACK)
    engine = TableEngine(table)
    simulated = SimulatedRound(table, iter([]), {}, seeded(1))
    assert simulated.next_event(engine.public_view()) is None


def test_dealer_shuffles_and_burns_then_reshuffles_when_the_shoe_runs_low() -> None:
    table = config(Game.DOUBLE_ATTACK, decks=1, burn_cards=2)
    dealer = Dealer(TableEngine(table), seeded(5), reshuffle_at=0.5)
    first = dealer.play(full_plan(Game.DOUBLE_ATTACK, 2))
    assert first.events[:3] == [
        Shuffle(),
        DealCard(first.events[1].card, burned=True),  # type: ignore[union-attr]
        DealCard(first.events[2].card, burned=True),  # type: ignore[union-attr]
    ]
    shuffles = 1
    for _ in range(20):
        played = dealer.play(full_plan(Game.DOUBLE_ATTACK, 2))
        shuffles += sum(isinstance(event, Shuffle) for event in played.events)
        assert isinstance(played.outputs[-1], RoundEnded)
    assert shuffles > 2
    assert dealer.engine.shoe == shuffles
