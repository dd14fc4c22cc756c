"""Money is exact: integer cents, decimal text at the edges, odds as fractions."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from rules.money import AmountError, Odds, format_amount, parse_amount, share_proportionally


@pytest.mark.parametrize(
    ("text", "cents"),
    [
        ("25", 2500),
        ("25.5", 2550),
        ("25.50", 2550),
        ("0.01", 1),
        ("0", 0),
        (" 7.05 ", 705),
        ("25000.00", 2_500_000),
        (25, 2500),  # whole dollars as an integer (TOML configuration)
    ],
)
def test_parse_amount(text: str | int, cents: int) -> None:
    assert parse_amount(text) == cents


@pytest.mark.parametrize(
    "text", ["", "abc", "-5", "5.001", "1e3", "5.", ".5", "$5", "5,00", "1 000", "NaN"]
)
def test_parse_amount_rejects_malformed_text(text: str) -> None:
    with pytest.raises(AmountError):
        parse_amount(text)


@pytest.mark.parametrize("value", [25.0, 0.1, True, None, [25]])
def test_parse_amount_refuses_floats_and_non_amounts(value: Any) -> None:
    """Money is never binary floating point (docs/procedures.md, "What every game shares")."""
    with pytest.raises(AmountError):
        parse_amount(value)


@pytest.mark.parametrize(
    ("cents", "text"),
    [
        (0, "0.00"),
        (1, "0.01"),
        (705, "7.05"),
        (2550, "25.50"),
        (2_500_000, "25000.00"),
        (-5, "-0.05"),
    ],
)
def test_format_amount(cents: int, text: str) -> None:
    assert format_amount(cents) == text


@pytest.mark.parametrize("cents", [0, 1, 99, 100, 101, 123_456_789])
def test_format_then_parse_is_the_identity(cents: int) -> None:
    assert parse_amount(format_amount(cents)) == cents


@pytest.mark.parametrize(
    ("text", "odds"),
    [
        ("25 to 1", Odds(25, 1)),
        ("25:1", Odds(25, 1)),
        (" 1000  TO 1 ", Odds(1000, 1)),
        ("3 to 2", Odds(3, 2)),
        ("0 to 1", Odds(0, 1)),
    ],
)
def test_odds_parse(text: str, odds: Odds) -> None:
    assert Odds.parse(text) == odds


@pytest.mark.parametrize("text", ["", "25", "25 to", "to 1", "2.5 to 1", "-1 to 1", "25/1", "x"])
def test_odds_parse_rejects_malformed_text(text: str) -> None:
    with pytest.raises(ValueError, match="is not odds"):
        Odds.parse(text)


def test_odds_with_a_zero_stake_side_are_refused() -> None:
    with pytest.raises(ValueError, match="N to M"):
        Odds.parse("5 to 0")
    with pytest.raises(ValueError, match="N to M"):
        Odds(-1)


def test_odds_ratio_is_an_exact_fraction_and_prints_as_n_to_m() -> None:
    assert Odds(3, 2).ratio == Fraction(3, 2)
    assert Odds(1000).ratio == 1000
    assert str(Odds(1000)) == "1000 to 1"
    assert str(Odds(9, 2)) == "9 to 2"


@pytest.mark.parametrize(
    ("odds", "stake", "won"),
    [
        (Odds(1000), 500, 500_000),  # $5 at 1,000 to 1 is $5,000.00
        (Odds(125), 2_500, 312_500),  # $25 at 125 to 1 is $3,125.00
        (Odds(4), 1, 4),
        (Odds(3, 2), 500, 750),  # $5 at 3 to 2 is $7.50 exactly
        (Odds(3, 2), 505, 757),  # $5.05 at 3 to 2 is $7.575: rounded down to $7.57
        (Odds(9, 2), 1, 4),  # 4.5 cents: rounded down
        (Odds(7, 3), 100, 233),  # 233.33... cents
        (Odds(0), 10_000, 0),
    ],
)
def test_winnings_are_rounded_down_to_the_cent(odds: Odds, stake: int, won: int) -> None:
    assert odds.winnings(stake) == won


def test_share_proportionally_awkward_cents_largest_remainder() -> None:
    """13:69F-2.24(h): $25,000.00 shared by stakes $7, $11, $13 (total $31).

    By hand: 2,500,000 x 7/31 = 564,516.129..., x 11/31 = 887,096.774..., x 13/31 =
    1,048,387.096...; the floors sum to 2,499,999, so the one cent left goes to the largest
    remainder (.774, the $11 stake).
    """
    shares = share_proportionally(2_500_000, [700, 1_100, 1_300])
    assert shares == [564_516, 887_097, 1_048_387]
    assert sum(shares) == 2_500_000


def test_share_proportionally_ties_go_to_the_earlier_winner() -> None:
    """Equal stakes: 2,500,000 / 3 = 833,333.33 each; the spare cent goes to the first listed."""
    assert share_proportionally(2_500_000, [1_000, 1_000, 1_000]) == [833_334, 833_333, 833_333]
    # Two cents spare among three equal remainders: the first two get one each.
    assert share_proportionally(2_500_001, [1_000, 1_000, 1_000]) == [833_334, 833_334, 833_333]


def test_share_proportionally_larger_remainder_beats_earlier_position() -> None:
    # 100 cents for stakes 1, 2: exact 33.33 and 66.67; the spare cent goes to the second.
    assert share_proportionally(100, [1, 2]) == [33, 67]


@pytest.mark.parametrize(
    "stakes",
    [[1], [1, 1], [3, 7], [700, 1_100, 1_300], [1, 1, 1, 1, 1, 1, 1], [9_999, 1, 3_333, 10_000]],
)
def test_shares_are_within_a_cent_of_exact_and_sum_to_the_limit(stakes: list[int]) -> None:
    limit = 2_500_000
    shares = share_proportionally(limit, stakes)
    assert sum(shares) == limit
    for stake, share in zip(stakes, shares, strict=True):
        exact = Fraction(limit * stake, sum(stakes))
        assert abs(share - exact) < 1


def test_share_proportionally_edge_cases() -> None:
    assert share_proportionally(2_500_000, []) == []
    assert share_proportionally(2_500_000, [123]) == [2_500_000]
    with pytest.raises(ValueError, match="positive stakes"):
        share_proportionally(100, [0, 0])


# Written as escapes: the look-alike digits are the point of the test.
@pytest.mark.parametrize("text", ["\u0662\u0665", "\uff12\uff15.\uff10\uff10", "25.\u0660\u0660"])
def test_amounts_are_ascii_digits_only(text: str) -> None:
    """A display keyboard's Arabic-Indic or full-width digits are refused, not read as $25."""
    with pytest.raises(AmountError):
        parse_amount(text)


def test_odds_are_ascii_digits_only() -> None:
    with pytest.raises(ValueError, match="not odds"):
        Odds.parse("\u0662\u0665 to 1")
