"""A round the surveillance keeps, packed into one `bytes` (rules.advantage keeps 600 a table).

A floor's daemon holds 600 rounds of each of its 256 tables: 153,600 rounds. As tuples of
whole numbers with a tuple of seats (each seat's entry and pair of wagers shared within the
table), a round cost about 316 bytes, and a floor at its tables' bounds about 48 MiB that
grew through the first hours of every run. Packed, a seven-seat round is 30 bytes of counts
and 9 of each seat, 126 bytes with the object's header (docs/performance.md, "The
surveillance's rounds packed"). `bytes` is also an object Python's cycle collector never
tracks, as the tuples it replaces were not.

The layout, little-endian: round id and shoe (8 bytes each), cards seen, running count and
ten-value cards seen (4 each), the number of seats that played (1) and whether the round is
wide (1); then the seats' numbers, their main wagers and their 20 point bonus wagers (0 when
none), each as an array. Narrow: a seat in a byte and a wager in 4 (cents up to
$21,474,836.47); a round with any value beyond those is wide, every one of its seats and
wagers in 8 bytes. So every value a table's counts and wagers can take is kept as it was;
only one beyond 64 bits, which none comes near, would raise `struct.error`.
"""

from __future__ import annotations

import base64
import struct
from functools import cache
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Iterable

# The seats that played a round, each with its (main wager, 20 point bonus or 0) in cents,
# by seat.
Seating = tuple[tuple[int, tuple[int, int]], ...]
# A round as the table keeps it: its packed bytes (`pack`, `unpack`).
KeptRound = bytes

_HEAD: Final = struct.Struct("<qqiiiB?")
_SHOE: Final = struct.Struct("<q")  # at offset 8
_NARROW_SEAT: Final = 0xFF
_NARROW_CENTS: Final = 2**31 - 1


@cache
def _seats(count: int, *, wide: bool) -> struct.Struct:
    """The seats' part of a round of `count` seats (one layout per count and width: a
    table's rounds use a handful, a damaged checkpoint at most 512)."""
    seat, cents = ("q", "q") if wide else ("B", "i")
    return struct.Struct(f"<{count}{seat}{count}{cents}{count}{cents}")


def _is_wide(seats: Seating) -> bool:
    return any(
        not 0 <= seat <= _NARROW_SEAT
        or not -_NARROW_CENTS <= main <= _NARROW_CENTS
        or not -_NARROW_CENTS <= bonus <= _NARROW_CENTS
        for seat, (main, bonus) in seats
    )


def pack(
    round_id: int, shoe: int, seen: int, running: int, tens_seen: int, seats: Seating
) -> KeptRound:
    """The round as one `bytes`; `seats` in the order given (by seat, as `seating` makes)."""
    wide = _is_wide(seats)
    head = _HEAD.pack(round_id, shoe, seen, running, tens_seen, len(seats), wide)
    numbers = [seat for seat, _ in seats]
    mains = [main for _, (main, _) in seats]
    bonuses = [bonus for _, (_, bonus) in seats]
    return head + _seats(len(seats), wide=wide).pack(*numbers, *mains, *bonuses)


def unpack(kept: KeptRound) -> tuple[int, int, int, int, int, Seating]:
    """(round_id, shoe, seen, running, tens_seen, seats): what `pack` was given."""
    round_id, shoe, seen, running, tens_seen, count, wide = _HEAD.unpack_from(kept)
    values = _seats(count, wide=wide).unpack_from(kept, _HEAD.size)
    # Three slices of `count` each: zip's strictness would only cost.
    wagers = zip(values[count : 2 * count], values[2 * count :], strict=False)
    seats = tuple(zip(values[:count], wagers, strict=False))
    return round_id, shoe, seen, running, tens_seen, seats


def shoe_of(kept: KeptRound) -> int:
    """The round's shoe, read without unpacking the rest."""
    shoe: int = _SHOE.unpack_from(kept, 8)[0]
    return shoe


def joined(rounds: Iterable[KeptRound]) -> str:
    """`rounds` as one text for a checkpoint: their bytes one after the other, in base64.
    A table's 600 rounds are joined in a tenth of a millisecond, where writing each as
    JSON's lists took 3 (docs/performance.md), at every round's end."""
    return base64.b64encode(b"".join(rounds)).decode("ascii")


def split(text: str) -> list[KeptRound]:
    """The rounds `joined` made; ValueError when `text` is not such rounds."""
    data = base64.b64decode(text, validate=True)
    rounds: list[KeptRound] = []
    at = 0
    while at < len(data):
        if len(data) - at < _HEAD.size:
            raise ValueError(f"kept rounds: {len(data) - at} bytes left at {at}, no round's head")
        count, wide = _HEAD.unpack_from(data, at)[5:]
        end = at + _HEAD.size + _seats(count, wide=wide).size
        if end > len(data):
            raise ValueError(f"kept rounds: the round at {at} runs past the end ({len(data)})")
        rounds.append(data[at:end])
        at = end
    return rounds
