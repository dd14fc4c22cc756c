"""Exact money: integer cents, decimal strings at the edges, odds as exact fractions."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction

Cents = int

# Both matched whole (fullmatch): `$` would also accept a trailing newline. Odds have at most
# six digits a side: the regulations' longest line is 1,000 to 1, and a longer number is a typo.
_AMOUNT = re.compile(r"\d+(\.\d{1,2})?", re.ASCII)
_ODDS = re.compile(r"\s*(\d{1,6})\s*(?:to|:)\s*(\d{1,6})\s*", re.IGNORECASE | re.ASCII)


class AmountError(ValueError):
    """Text that is not a non-negative amount of dollars with at most two decimals."""


def parse_amount(text: str | int) -> Cents:
    """`"25"`, `"25.5"`, `"25.50"` → 2550 cents. Floats are refused: money is never binary."""
    if isinstance(text, bool) or not isinstance(text, str | int):
        raise AmountError(f"an amount is a decimal string such as '25.00', not {text!r}")
    raw = str(text).strip()
    if not _AMOUNT.fullmatch(raw):
        raise AmountError(
            f"{raw!r} is not an amount: use dollars with at most two decimals, e.g. '25.00'"
        )
    try:
        value = Decimal(raw)
    except InvalidOperation:  # pragma: no cover - the pattern already guarantees a decimal
        raise AmountError(f"{raw!r} is not an amount") from None
    return int(value * 100)


def format_dollars(cents: Cents) -> str:
    """Exact cents as dollars with thousands separators, for people: -1234567 -> '-12,345.67'
    (`format_amount` is the wire's form, without separators)."""
    whole, part = divmod(abs(cents), 100)
    return f"{'-' if cents < 0 else ''}{whole:,}.{part:02d}"


def format_amount(cents: Cents) -> str:
    """2550 → `"25.50"`: the decimal string every payload carries."""
    sign = "-" if cents < 0 else ""
    whole, part = divmod(abs(cents), 100)
    return f"{sign}{whole}.{part:02d}"


@dataclass(frozen=True, slots=True)
class Odds:
    """Payout odds `win to stake`, e.g. 1,000 to 1; exact, never a float."""

    win: int
    stake: int = 1

    def __post_init__(self) -> None:
        if self.win < 0 or self.stake <= 0:
            raise ValueError(f"odds must be 'N to M' with N >= 0 and M >= 1, not {self}")

    @classmethod
    def parse(cls, text: str) -> Odds:
        match = _ODDS.fullmatch(text)
        if not match:
            raise ValueError(
                f"{text[:40]!r} is not odds: write them as '25 to 1' or '25:1', "
                "at most six digits a side"
            )
        return cls(int(match.group(1)), int(match.group(2)))

    @property
    def ratio(self) -> Fraction:
        return Fraction(self.win, self.stake)

    def winnings(self, stake: Cents) -> Cents:
        """What a winning stake is paid on top of its return, rounded down to the cent.

        Rounding down is the casino's rule for odds that do not divide the stake (a patron is
        never paid a fraction of a cent); every built-in paytable is `N to 1`, exact.
        """
        return stake * self.win // self.stake

    def __str__(self) -> str:
        return f"{self.win} to {self.stake}"


def share_proportionally(limit: Cents, stakes: list[Cents]) -> list[Cents]:
    """Split `limit` among winners in proportion to their stakes, to the cent.

    The documented deterministic rule (13:69F-2.24(h), docs/rules.md): every winner gets
    the floor of `limit * stake / total`; the cents left over go one each to the winners
    with the largest fractional remainders, ties going to the earlier winner in settlement
    order (the caller lists winners in that order). The shares always sum to `limit`.
    """
    if not stakes:
        return []
    total = sum(stakes)
    if total <= 0:
        raise ValueError("proportional sharing needs positive stakes")
    exact = [Fraction(limit * stake, total) for stake in stakes]
    shares = [int(value) for value in exact]  # floor: values are non-negative
    leftover = limit - sum(shares)
    by_remainder = sorted(range(len(stakes)), key=lambda i: (-(exact[i] - shares[i]), i))
    for index in by_remainder[:leftover]:
        shares[index] += 1
    return shares
