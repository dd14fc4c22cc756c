"""Cards, decks and shoes.

Card text is rank then suit: `AS`, `10H` (or `TH`), `QH`. Ten-value cards are 10, J, Q, K; a
Spanish deck is a standard deck without its four 10s (docs/procedures.md, "Words").
"""

from __future__ import annotations

import enum
from collections import Counter
from dataclasses import dataclass, field
from typing import Final

from rules.errors import CardParseError


class Suit(enum.Enum):
    SPADES = "S"
    HEARTS = "H"
    DIAMONDS = "D"
    CLUBS = "C"

    # Members are singletons compared by identity, so the identity hash keeps Enum's
    # contract; it is computed in C, where Enum's hash of the name is a Python call made
    # for every card counted out of the shoe.
    __hash__ = object.__hash__

    @property
    def colour(self) -> Colour:
        return Colour.RED if self in (Suit.HEARTS, Suit.DIAMONDS) else Colour.BLACK


class Colour(enum.Enum):
    RED = "red"
    BLACK = "black"


class Rank(enum.Enum):
    """Ranks by their card text; `points` is the blackjack value with an ace counted as 1."""

    ACE = "A"
    TWO = "2"
    THREE = "3"
    FOUR = "4"
    FIVE = "5"
    SIX = "6"
    SEVEN = "7"
    EIGHT = "8"
    NINE = "9"
    TEN = "10"
    JACK = "J"
    QUEEN = "Q"
    KING = "K"

    __hash__ = object.__hash__  # as Suit's
    # Set once per member below: a plain attribute, because the engine reads it for every
    # card of every hand total (a property with a dict lookup cost a third of `apply`).
    points: int

    @property
    def is_ten_value(self) -> bool:
        return self.points == 10


for _index, _rank in enumerate(Rank):
    _rank.points = min(_index + 1, 10)
_RANK_ALIASES = {"T": Rank.TEN}


@dataclass(frozen=True, slots=True, order=False)
class Card:
    rank: Rank
    suit: Suit
    # The card's text, made once: every snapshot and settlement names its cards, and each
    # `.value` of an enum member is a descriptor call (two a card, some 24 times a card dealt).
    _text: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_text", f"{self.rank.value}{self.suit.value}")

    @classmethod
    def parse(cls, text: str) -> Card:
        """Parse `QH`, `10S`, `TS` (case-insensitive, surrounding blanks ignored): the one
        instance of that card."""
        cleaned = text.strip().upper()
        if len(cleaned) < 2:
            raise CardParseError(
                text, "a card is a rank (A, 2-10, T, J, Q, K) and a suit (S, H, D, C)"
            )
        rank_text, suit_text = cleaned[:-1], cleaned[-1]
        try:
            suit = Suit(suit_text)
        except ValueError:
            raise CardParseError(text, f"unknown suit {suit_text!r}: use S, H, D or C") from None
        rank = _RANK_ALIASES.get(rank_text)
        if rank is None:
            try:
                rank = Rank(rank_text)
            except ValueError:
                raise CardParseError(
                    text, f"unknown rank {rank_text!r}: use A, 2-10 (or T), J, Q or K"
                ) from None
        return _EVERY_CARD[rank, suit]

    @property
    def points(self) -> int:
        return self.rank.points

    @property
    def colour(self) -> Colour:
        return self.suit.colour

    def __str__(self) -> str:
        return self._text


# One instance of each card, which `Card.parse` gives: a card is a value, and a floor's tables
# hold tens of thousands read from their shoes and journals (hands, seen cards, rounds kept).
# 52 objects where there was one a card read: every object of a class is one more that
# Python's cycle collector walks at each full collection, and on a floor of 256 tables those
# collections held the event loop for well over a hundred milliseconds.
_EVERY_CARD: Final = {(rank, suit): Card(rank, suit) for rank in Rank for suit in Suit}
QUEEN_OF_HEARTS = _EVERY_CARD[Rank.QUEEN, Suit.HEARTS]


class DeckKind(enum.Enum):
    STANDARD = "standard"
    SPANISH = "spanish"

    @property
    def ranks(self) -> tuple[Rank, ...]:
        return _DECK_RANKS[self]

    @property
    def size(self) -> int:
        return len(self.ranks) * len(Suit)


# Computed once: the engine checks every card against its deck kind.
_DECK_RANKS = {
    DeckKind.STANDARD: tuple(Rank),
    DeckKind.SPANISH: tuple(rank for rank in Rank if rank is not Rank.TEN),
}


def deck(kind: DeckKind) -> list[Card]:
    """One deck in a fixed order (suits S, H, D, C; ranks A..K), each card a new object:
    a simulation or a test that follows each physical card tells them apart by identity."""
    return [Card(rank, suit) for suit in Suit for rank in kind.ranks]


def shoe_composition(decks: int, kind: DeckKind) -> Counter[Card]:
    """How many of each card a freshly shuffled shoe of `decks` decks holds."""
    return Counter(dict.fromkeys(deck(kind), decks))
