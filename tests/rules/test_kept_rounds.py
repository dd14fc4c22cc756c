"""A kept round packed into bytes gives back exactly what it was given (rules.kept_rounds)."""

from __future__ import annotations

import base64
import gc
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rules import kept_rounds

SIXTY_FOUR_BITS = st.integers(min_value=-(2**63), max_value=2**63 - 1)
# Around the narrow layout's edges (a seat in a byte, cents in four), and anywhere in 64 bits.
CENTS = st.one_of(
    st.integers(min_value=-(2**31) - 2, max_value=2**31 + 1),
    st.sampled_from([0, 2**31 - 1, 2**31, -(2**31) + 1, -(2**31)]),
    SIXTY_FOUR_BITS,
)
SEAT = st.one_of(st.integers(min_value=0, max_value=300), SIXTY_FOUR_BITS)
SEATING = st.dictionaries(SEAT, st.tuples(CENTS, CENTS), max_size=9).map(
    lambda seats: tuple(sorted(seats.items()))
)
COUNT = st.integers(min_value=-(2**31), max_value=2**31 - 1)


@given(SIXTY_FOUR_BITS, SIXTY_FOUR_BITS, COUNT, COUNT, COUNT, SEATING)
def test_a_packed_round_gives_back_what_it_was_given(
    round_id: int,
    shoe: int,
    seen: int,
    running: int,
    tens_seen: int,
    seats: tuple[tuple[int, tuple[int, int]], ...],
) -> None:
    packed = kept_rounds.pack(round_id, shoe, seen, running, tens_seen, seats)
    assert kept_rounds.unpack(packed) == (round_id, shoe, seen, running, tens_seen, seats)
    assert kept_rounds.shoe_of(packed) == shoe


def test_a_seven_seat_round_is_a_small_untracked_object() -> None:
    """What a floor holds 153,600 of (docs/performance.md): a seven-seat round with both
    wagers at every seat, under 130 bytes with the object's header; the tuples it replaced
    were about 316."""
    seats = tuple((seat, (2_500, 500)) for seat in range(1, 8))
    packed = kept_rounds.pack(123_456, 4_321, 300, -12, 95, seats)
    assert sys.getsizeof(packed) < 130
    assert len(packed) == 30 + 7 * 9
    assert not gc.is_tracked(packed)


ROUND = st.tuples(SIXTY_FOUR_BITS, SIXTY_FOUR_BITS, COUNT, COUNT, COUNT, SEATING)


@given(st.lists(ROUND, max_size=30))
def test_rounds_joined_for_a_checkpoint_split_back_into_the_same_rounds(
    rounds: list[tuple[int, int, int, int, int, tuple[tuple[int, tuple[int, int]], ...]]],
) -> None:
    packed = [kept_rounds.pack(*row) for row in rounds]
    text = kept_rounds.joined(packed)
    assert text.isascii()
    assert [kept_rounds.unpack(kept) for kept in kept_rounds.split(text)] == rounds


@given(st.lists(ROUND, min_size=1, max_size=5), st.data())
def test_a_damaged_checkpoint_text_is_refused_not_misread(
    rounds: list[tuple[int, int, int, int, int, tuple[tuple[int, tuple[int, int]], ...]]],
    data: st.DataObject,
) -> None:
    """Cut anywhere inside its last round, or not base64: a ValueError, never fewer rounds."""
    whole = b"".join(kept_rounds.pack(*row) for row in rounds)
    last = len(kept_rounds.pack(*rounds[-1]))
    cut = data.draw(st.integers(min_value=len(whole) - last + 1, max_value=len(whole) - 1))
    with pytest.raises(ValueError, match="kept rounds"):
        kept_rounds.split(base64.b64encode(whole[:cut]).decode())
    with pytest.raises(ValueError):  # noqa: PT011 - binascii's own message, any of several
        kept_rounds.split(base64.b64encode(whole).decode() + "*")
