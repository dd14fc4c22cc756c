"""The card byte both codecs carry: bits 6-4 suit, bits 3-0 rank, bit 7 zero.

This is the ENQ family's card byte as publicly described; the reference protocol uses the
same layout on purpose, so an adapter board can pass that family's byte through unchanged
(docs/protocol.md §1.5 and §2.2). One table, so a capture from a real device corrects both.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from drivers.errors import EncodeError

if TYPE_CHECKING:
    from drivers.events import Rank, Suit

# ================================================================ the layout, as a table
SUIT_SHIFT: Final = 4
RANK_MASK: Final = 0x0F
SUIT_CODES: Final[dict[Suit, int]] = {"D": 1, "C": 2, "S": 3, "H": 4}
RANK_CODES: Final[dict[Rank, int]] = {
    "A": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7,
    "8": 8, "9": 9, "10": 10, "J": 11, "Q": 12, "K": 13,
}  # fmt: skip
# ================================================================ end of the table

CARD_BY_BYTE: Final[dict[int, tuple[Rank, Suit]]] = {
    (suit_code << SUIT_SHIFT) | rank_code: (rank, suit)
    for suit, suit_code in SUIT_CODES.items()
    for rank, rank_code in RANK_CODES.items()
}


def card_byte(rank: Rank, suit: Suit) -> int:
    """The byte for a card; raises `EncodeError` for a rank or suit that is not one."""
    if rank not in RANK_CODES:
        raise EncodeError("not a rank", field="rank", value=rank)
    if suit not in SUIT_CODES:
        raise EncodeError("not a suit", field="suit", value=suit)
    return (SUIT_CODES[suit] << SUIT_SHIFT) | RANK_CODES[rank]


def card_of(byte: int) -> tuple[Rank, Suit] | None:
    """The rank and suit a byte stands for; None for a byte that is no card."""
    return CARD_BY_BYTE.get(byte)
