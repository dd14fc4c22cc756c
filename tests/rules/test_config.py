"""Table configuration: valid tables load, every bad value is refused naming its field."""

from __future__ import annotations

from typing import Any

import pytest

from rules.cards import DeckKind
from rules.config import (
    EXCLUSIVE_WITH_TWENTY_POINT_BONUS,
    OTHER_WAGERS_ALLOWED,
    TableConfig,
    WagerLimits,
)
from rules.errors import ConfigError
from rules.games import Game, WagerKind
from rules.money import Odds
from rules.paytables import TWENTY_POINT_PAYTABLES, TwentyPointOutcome
from tests.rules.tables import config_mapping, make_config

T = TwentyPointOutcome
PAYTABLE_A = {
    "queen_of_hearts_pair_dealer_blackjack": "1000 to 1",
    "queen_of_hearts_pair": "125 to 1",
    "matched_20": "19 to 1",
    "suited_20": "9 to 1",
    "any_20": "4 to 1",
}


def _error(game: str = "blackjack", /, **overrides: Any) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        make_config(game, **overrides)
    return caught.value


def _error_from(data: dict[str, Any]) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        TableConfig.from_mapping(data)
    return caught.value


# ---------------------------------------------------------------------------- valid tables
def test_blackjack_table_defaults() -> None:
    config = make_config("blackjack")
    assert config.table_id == "bj1"
    assert config.game is Game.BLACKJACK
    assert config.decks == 6
    assert config.deck_kind is DeckKind.STANDARD
    assert config.seats == 7
    assert config.limits == {
        WagerKind.BLACKJACK: WagerLimits(1_000, 100_000),
        WagerKind.TWENTY_POINT_BONUS: WagerLimits(500, 10_000),
    }
    assert config.offers_twenty_point_bonus is True
    assert config.paytable_name == "A"
    assert config.hole_card_reader is True
    assert config.dealer_hits_soft_17 is False
    assert config.burn_cards == 1
    assert config.queen_of_hearts_aggregate_limit is None
    assert config.other_wagers == frozenset()


@pytest.mark.parametrize(
    ("name", "odds"),
    [
        # 13:69F-2.24(f), read off the regulation's table.
        ("A", (1000, 125, 19, 9, 4)),
        ("B", (1000, 200, 25, 10, 4)),
    ],
)
def test_2_24_f_builtin_paytables_match_the_regulation(
    name: str, odds: tuple[int, int, int, int, int]
) -> None:
    config = make_config("blackjack", paytable=name)
    lines = [T.QUEEN_OF_HEARTS_PAIR_DEALER_BLACKJACK, T.QUEEN_OF_HEARTS_PAIR, T.MATCHED_20]
    lines += [T.SUITED_20, T.ANY_20]
    assert config.paytable_name == name
    assert dict(config.paytable) == {
        line: Odds(win, 1) for line, win in zip(lines, odds, strict=True)
    }


def test_2_24_f_a_posted_paytable_paying_more_is_accepted() -> None:
    posted = dict(PAYTABLE_A, matched_20="30 to 1", any_20="9 to 2")
    config = make_config("blackjack", paytable=posted)
    assert config.paytable_name == "custom"
    assert config.paytable[T.MATCHED_20] == Odds(30)
    assert config.paytable[T.ANY_20] == Odds(9, 2)
    assert config.paytable[T.SUITED_20] == Odds(9)


def test_2_24_f_a_posted_paytable_equal_to_b_is_accepted() -> None:
    posted = {line.value: str(odds) for line, odds in TWENTY_POINT_PAYTABLES["B"].items()}
    assert make_config("blackjack", paytable=posted).paytable == TWENTY_POINT_PAYTABLES["B"]


@pytest.mark.parametrize(
    ("line", "odds"),
    [
        ("queen_of_hearts_pair_dealer_blackjack", "999 to 1"),
        ("queen_of_hearts_pair", "124 to 1"),
        ("matched_20", "18 to 1"),
        ("suited_20", "17 to 2"),  # 8.5 to 1
        ("any_20", "7 to 2"),  # 3.5 to 1
        ("any_20", "4 to 2"),
    ],
)
def test_2_24_f_a_posted_paytable_below_the_regulation_is_rejected(line: str, odds: str) -> None:
    error = _error(paytable=dict(PAYTABLE_A, **{line: odds}))
    assert error.field == f"paytable.{line}"
    assert "below the regulation" in error.message


@pytest.mark.parametrize(
    ("paytable", "field"),
    [
        ("C", "paytable"),
        (["A"], "paytable"),
        ({k: v for k, v in PAYTABLE_A.items() if k != "suited_20"}, "paytable.suited_20"),
        (dict(PAYTABLE_A, royal_20="50 to 1"), "paytable.royal_20"),
        (dict(PAYTABLE_A, any_20="four to one"), "paytable.any_20"),
        (dict(PAYTABLE_A, any_20=4), "paytable.any_20"),
        (dict(PAYTABLE_A, any_20="4 to 0"), "paytable.any_20"),
    ],
)
def test_malformed_paytables_name_their_field(paytable: Any, field: str) -> None:
    assert _error(paytable=paytable).field == field


def test_double_attack_and_triple_attack_defaults() -> None:
    double = make_config("double_attack")
    assert (double.deck_kind, double.decks, double.paytable_name) == (
        DeckKind.SPANISH,
        8,
        "regulation",
    )
    assert double.offers_twenty_point_bonus is False
    triple = make_config("triple_attack")
    assert (triple.deck_kind, triple.paytable_name, triple.paytable) == (
        DeckKind.SPANISH,
        "even_money",
        {},
    )
    assert triple.dealer_hits_soft_17 is True
    assert triple.surrender is False


def test_optional_bonus_minimum_of_one_dollar_is_accepted() -> None:
    """13:69F-26.6(b): the optional bonus minimum may be $1.00."""
    limits = config_mapping("double_attack")["limits"]
    limits["optional_bonus"] = {"min": "1.00", "max": "5"}
    config = make_config("double_attack", limits=limits)
    assert config.limits[WagerKind.OPTIONAL_BONUS] == WagerLimits(100, 500)


@pytest.mark.parametrize(
    "overrides",
    [
        {"paytable": "B", "queen_of_hearts_aggregate_limit": "25000"},
        {"paytable": dict(PAYTABLE_A, matched_20="30 to 1")},
        {"twenty_point_bonus": False, "limits": {"blackjack": {"min": "10", "max": "1000"}}},
        {"other_wagers": sorted(OTHER_WAGERS_ALLOWED), "decks": 2, "deck_kind": "standard"},
    ],
)
def test_blackjack_config_round_trips_through_to_mapping(overrides: dict[str, Any]) -> None:
    config = make_config("blackjack", **overrides)
    assert TableConfig.from_mapping(config.to_mapping()) == config


@pytest.mark.parametrize("game", ["double_attack", "triple_attack"])
def test_other_games_round_trip_through_to_mapping(game: str) -> None:
    config = make_config(game)
    assert TableConfig.from_mapping(config.to_mapping()) == config


# ---------------------------------------------------------------------------- 13:69F-2.2(a)2
def test_2_2_a_2_the_20_point_bonus_needs_at_least_two_decks() -> None:
    error = _error(decks=1)
    assert error.field == "decks"
    assert "13:69F-2.2(a)2" in error.message
    assert make_config("blackjack", decks=2).decks == 2


def test_2_2_a_2_a_single_deck_table_without_the_20_point_bonus_is_fine() -> None:
    config = make_config(
        "blackjack",
        decks=1,
        twenty_point_bonus=False,
        limits={"blackjack": {"min": "10", "max": "1000"}},
    )
    assert config.decks == 1
    assert config.offers_twenty_point_bonus is False


# ---------------------------------------------------------------------------- 13:69F-2.24(i)
@pytest.mark.parametrize("other", sorted(EXCLUSIVE_WITH_TWENTY_POINT_BONUS))
def test_2_24_i_forbidden_wagers_beside_the_20_point_bonus(other: str) -> None:
    error = _error(other_wagers=[other])
    assert error.field == "other_wagers"
    assert "13:69F-2.24(i)" in error.message


def test_2_24_i_the_six_forbidden_wagers_are_those_the_regulation_lists() -> None:
    cited = " ".join(EXCLUSIVE_WITH_TWENTY_POINT_BONUS.values())
    for section in ("13:69E-2.18", "13:69F-2.19", "2.20", "2.22", "2.25", "2.26"):
        assert section in cited
    assert len(EXCLUSIVE_WITH_TWENTY_POINT_BONUS) == 6


@pytest.mark.parametrize("other", sorted(EXCLUSIVE_WITH_TWENTY_POINT_BONUS))
def test_2_24_i_those_wagers_are_allowed_when_the_table_has_no_20_point_bonus(other: str) -> None:
    config = make_config(
        "blackjack",
        twenty_point_bonus=False,
        other_wagers=[other],
        limits={"blackjack": {"min": "10", "max": "1000"}},
    )
    assert config.other_wagers == {other}


@pytest.mark.parametrize("other", sorted(OTHER_WAGERS_ALLOWED))
def test_2_24_i_other_wagers_are_allowed_beside_the_20_point_bonus(other: str) -> None:
    assert make_config("blackjack", other_wagers=[other]).other_wagers == {other}


# ---------------------------------------------------------------------------- 13:69F-2.24(h)
@pytest.mark.parametrize(
    ("limit", "cents"), [("25000", 2_500_000), ("25000.00", 2_500_000), ("100000", 10_000_000)]
)
def test_2_24_h_aggregate_limit_of_at_least_25000(limit: str, cents: int) -> None:
    config = make_config("blackjack", queen_of_hearts_aggregate_limit=limit)
    assert config.queen_of_hearts_aggregate_limit == cents


@pytest.mark.parametrize("limit", ["24999.99", "10000", "0"])
def test_2_24_h_aggregate_limit_below_25000_is_rejected(limit: str) -> None:
    error = _error(queen_of_hearts_aggregate_limit=limit)
    assert error.field == "queen_of_hearts_aggregate_limit"
    assert "25000.00" in error.message


def test_2_24_h_aggregate_limit_at_least_what_one_minimum_wager_could_win() -> None:
    """Minimum 20PB $30: one patron can win $30 x 1,000 = $30,000, more than $25,000."""
    limits = {
        "blackjack": {"min": "10", "max": "1000"},
        "twenty_point_bonus": {"min": "30", "max": "100"},
    }
    error = _error(limits=limits, queen_of_hearts_aggregate_limit="29999.99")
    assert error.field == "queen_of_hearts_aggregate_limit"
    assert "30000.00" in error.message
    config = make_config("blackjack", limits=limits, queen_of_hearts_aggregate_limit="30000")
    assert config.queen_of_hearts_aggregate_limit == 3_000_000


def test_2_24_h_aggregate_limit_floor_follows_a_posted_top_line() -> None:
    """A posted 2,000 to 1 top line with a $20 minimum: one patron can win $40,000."""
    limits = {
        "blackjack": {"min": "20", "max": "1000"},
        "twenty_point_bonus": {"min": "20", "max": "100"},
    }
    posted = dict(PAYTABLE_A, queen_of_hearts_pair_dealer_blackjack="2000 to 1")
    error = _error(limits=limits, paytable=posted, queen_of_hearts_aggregate_limit="39999.99")
    assert error.field == "queen_of_hearts_aggregate_limit"
    config = make_config(
        "blackjack", limits=limits, paytable=posted, queen_of_hearts_aggregate_limit="40000"
    )
    assert config.queen_of_hearts_aggregate_limit == 4_000_000


@pytest.mark.parametrize(
    ("game", "overrides"),
    [
        ("double_attack", {}),
        ("triple_attack", {}),
        (
            "blackjack",
            {"twenty_point_bonus": False, "limits": {"blackjack": {"min": "10", "max": "1000"}}},
        ),
    ],
)
def test_2_24_h_aggregate_limit_only_where_the_20_point_bonus_is_offered(
    game: str, overrides: dict[str, Any]
) -> None:
    error = _error(game, queen_of_hearts_aggregate_limit="25000", **overrides)
    assert error.field == "queen_of_hearts_aggregate_limit"


@pytest.mark.parametrize("limit", [25000.0, "25,000", "-25000", True])
def test_2_24_h_aggregate_limit_malformed(limit: Any) -> None:
    assert _error(queen_of_hearts_aggregate_limit=limit).field == "queen_of_hearts_aggregate_limit"


# ---------------------------------------------------------------------------- fields
def _limits(**entries: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "blackjack": {"min": "10", "max": "1000"},
        "twenty_point_bonus": {"min": "5", "max": "100"},
    }
    base.update(entries)
    return {k: v for k, v in base.items() if v is not None}


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"colour": "green"}, "colour"),
        ({"id": None}, "id"),
        ({"id": ""}, "id"),
        ({"id": "Table 1"}, "id"),
        ({"id": 7}, "id"),
        ({"id": "x" * 33}, "id"),
        ({"game": None}, "game"),
        ({"game": "baccarat"}, "game"),
        ({"decks": 0}, "decks"),
        ({"decks": 9}, "decks"),
        ({"decks": "6"}, "decks"),
        ({"decks": 6.0}, "decks"),
        ({"decks": True}, "decks"),
        ({"deck_kind": "tarot"}, "deck_kind"),
        ({"seats": 0}, "seats"),
        ({"seats": 8}, "seats"),
        ({"seats": -1}, "seats"),
        ({"seats": "7"}, "seats"),
        ({"limits": None}, "limits"),
        ({"limits": []}, "limits"),
        ({"limits": _limits(twenty_point_bonus=None)}, "limits.twenty_point_bonus"),
        ({"limits": _limits(blackjack=None)}, "limits.blackjack"),
        ({"limits": _limits(blackjack={"min": "-5", "max": "1000"})}, "limits.blackjack.min"),
        ({"limits": _limits(blackjack={"min": "0", "max": "1000"})}, "limits.blackjack.min"),
        ({"limits": _limits(blackjack={"min": 10.0, "max": "1000"})}, "limits.blackjack.min"),
        ({"limits": _limits(blackjack={"min": "10", "max": "-1"})}, "limits.blackjack.max"),
        ({"limits": _limits(blackjack={"min": "10", "max": "9.99"})}, "limits.blackjack.max"),
        ({"limits": _limits(blackjack={"min": "10"})}, "limits.blackjack.max"),
        ({"limits": _limits(blackjack={"max": "10"})}, "limits.blackjack.min"),
        (
            {"limits": _limits(blackjack={"min": "10", "max": "20", "step": "5"})},
            "limits.blackjack.step",
        ),
        ({"limits": _limits(blackjack="10-1000")}, "limits.blackjack"),
        (
            {"limits": _limits(twenty_point_bonus={"min": "10", "max": "5"})},
            "limits.twenty_point_bonus.max",
        ),
        ({"limits": _limits(poker={"min": "10", "max": "20"})}, "limits.poker"),
        ({"limits": _limits(initial={"min": "10", "max": "20"})}, "limits.initial"),
        ({"twenty_point_bonus": "yes"}, "twenty_point_bonus"),
        ({"hole_card_reader": 1}, "hole_card_reader"),
        ({"dealer_hits_soft_17": "false"}, "dealer_hits_soft_17"),
        ({"split_aces_one_card": "y"}, "split_aces_one_card"),
        ({"double_after_split": 0}, "double_after_split"),
        ({"burn_cards": -1}, "burn_cards"),
        ({"burn_cards": 11}, "burn_cards"),
        ({"max_hands_per_seat": 0}, "max_hands_per_seat"),
        ({"max_hands_per_seat": 5}, "max_hands_per_seat"),
        ({"other_wagers": "insurance"}, "other_wagers"),
        ({"other_wagers": ["insurance", 3]}, "other_wagers"),
        ({"other_wagers": ["keno"]}, "other_wagers"),
    ],
)
def test_blackjack_config_errors_name_their_field(overrides: dict[str, Any], field: str) -> None:
    error = _error("blackjack", **overrides)
    assert error.field == field
    assert error.code == "invalid_config"
    assert str(error).startswith(f"{field}: ")


def test_twenty_point_limits_on_a_table_without_the_wager_are_rejected() -> None:
    assert _error(twenty_point_bonus=False).field == "limits.twenty_point_bonus"


def _da_limits(**entries: Any) -> dict[str, Any]:
    base: dict[str, Any] = dict(config_mapping("double_attack")["limits"])
    base.update(entries)
    return {k: v for k, v in base.items() if v is not None}


@pytest.mark.parametrize(
    ("game", "overrides", "field"),
    [
        # 13:69F-26.6(b): the optional bonus minimum is at least $1.00.
        (
            "double_attack",
            {"limits": _da_limits(optional_bonus={"min": "0.99", "max": "100"})},
            "limits.optional_bonus.min",
        ),
        (
            "double_attack",
            {"limits": _da_limits(optional_bonus={"min": "0.50", "max": "0.75"})},
            "limits.optional_bonus.min",
        ),
        ("double_attack", {"limits": _da_limits(double_attack=None)}, "limits.double_attack"),
        (
            "double_attack",
            {"limits": _da_limits(blackjack={"min": "10", "max": "20"})},
            "limits.blackjack",
        ),
        ("double_attack", {"twenty_point_bonus": True}, "twenty_point_bonus"),
        ("double_attack", {"other_wagers": ["insurance"]}, "other_wagers"),
        ("double_attack", {"paytable": "A"}, "paytable"),
        (
            "double_attack",
            {"paytable": {"third_card_six": "15 to 1"}},
            "paytable.three_eights_suited",
        ),
        # 13:69F-36.5(g): triple attack pays 1 to 1, no paytable.
        ("triple_attack", {"paytable": "A"}, "paytable"),
        ("triple_attack", {"paytable": "regulation"}, "paytable"),
        ("triple_attack", {"twenty_point_bonus": False}, "twenty_point_bonus"),
        ("triple_attack", {"seats": 8}, "seats"),
    ],
)
def test_other_game_config_errors_name_their_field(
    game: str, overrides: dict[str, Any], field: str
) -> None:
    assert _error(game, **overrides).field == field


def test_config_errors_on_a_plain_mapping() -> None:
    assert _error_from({}).field == "id"
    assert _error_from({"id": "t1"}).field == "game"
    assert _error_from({"id": "t1", "game": "blackjack"}).field == "limits"


def test_every_wrong_field_is_reported_at_once() -> None:
    """Seats, paytable and a bonus minimum above its maximum are three problems, and
    an unknown key (a typo) hides none of them."""
    error = _error(
        seats=9,
        paytable="C",
        decsk=6,
        limits=_limits(twenty_point_bonus={"min": "500", "max": "100"}),
    )
    assert [(p.field, p.detail) for p in error.problems] == [
        ("decsk", "unknown setting; did you mean 'decks'?"),
        ("seats", "must be from 1 to 7, not 9"),
        ("limits.twenty_point_bonus.max", "must not be below the minimum, 500.00; not 100.00"),
        (
            "paytable",
            "unknown paytable 'C': name one of ['A', 'B'] or give the odds of every line",
        ),
    ]
    assert (error.field, error.detail) == (error.problems[0].field, error.problems[0].detail)


@pytest.mark.parametrize(
    ("overrides", "field", "says"),
    [
        ({"id": "bj-1\n"}, "id", "not a string ('bj-1\\n')"),
        ({"seats": "7"}, "seats", "must be a whole number, not a string ('7')"),
        ({"surrender": "yes"}, "surrender", "must be true or false, not a string ('yes')"),
        ({"game": 3}, "game", "not a whole number (3)"),
        (
            {"limits": _limits(blackjack={"min": "10", "max": "1" + "0" * 50})},
            "limits.blackjack.max",
            "at most 10000000.00",
        ),
        (
            {"limits": _limits(blackjack={"min": "10", "max": 10**50})},
            "limits.blackjack.max",
            "at most 10000000.00, not a whole number (more than 15 digits)",
        ),
        (
            {"limits": _limits(blackjack={"min": 10.5, "max": "20"})},
            "limits.blackjack.min",
            "not a decimal number (10.5)",
        ),
        ({"paytable": {"any_20": "1" * 7 + " to 1"}}, "paytable.any_20", "at most six digits"),
    ],
)
def test_values_are_typed_and_bounded(overrides: dict[str, Any], field: str, says: str) -> None:
    """A type mistake is named as one; amounts stop at $10,000,000.00; ids match whole."""
    problems = {p.field: p.detail for p in _error(**overrides).problems}
    assert says in problems[field], problems
