"""Shared by the codec tests: hostile ways to deliver bytes, and hypothesis strategies."""

from __future__ import annotations

import dataclasses
import itertools
from typing import TYPE_CHECKING, Any, TypeVar

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from drivers.codecs import enq
from drivers.events import (
    CARD_ORIGINS,
    FAULT_KINDS,
    NUMBERED_EVENTS,
    RANKS,
    SUITS,
    CardDrawn,
    CardUnreadable,
    CommunicationStarted,
    CutCardReached,
    DeviceIdentity,
    Event,
    FaultCleared,
    FaultSet,
    Heartbeat,
    LockChanged,
    NewShoe,
    Standby,
    VendorMessage,
)
from drivers.logs import WireBytes
from drivers.receiver import FrameReceiver

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from drivers.codecs import reference
    from drivers.codecs.base import Decoder
    from drivers.codecs.sequence import SequencePolicy


_M = TypeVar("_M", bound=Event)


def feed_chunks(decoder: Decoder, chunks: Iterable[bytes]) -> list[Event]:
    events: list[Event] = []
    for chunk in chunks:
        events += decoder.feed(chunk)
    return events


def split_at(data: bytes, cuts: Iterable[int]) -> list[bytes]:
    points = sorted({0, len(data), *(min(max(c, 0), len(data)) for c in cuts)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


def one_byte_at_a_time(data: bytes) -> list[bytes]:
    return [data[i : i + 1] for i in range(len(data))]


def every_split_in_two(data: bytes) -> list[list[bytes]]:
    return [[data[:i], data[i:]] for i in range(len(data) + 1)]


class Receipts:
    """What a host took from a shoe, judged as the daemon judges (decision D3) with the
    terminal, or a list, for its journal: `take` one decoded event, get the frame to
    acknowledge."""

    def __init__(self, policy: SequencePolicy | None) -> None:
        self.receiver = FrameReceiver(policy)
        # Taken: a loss as a SequenceGap, a conflict as a SequenceConflict, before the frame.
        self.events: list[Event] = []
        self.repeats = 0  # frames judged repeats: taken once, acknowledged again

    def take(self, event: Event) -> int | None:
        intake = self.receiver.judge(event)
        if intake.gap is not None:
            self.events.append(intake.gap)
            self.receiver.record(intake.gap)
        if intake.conflict is not None:
            self.events.append(intake.conflict)
            self.receiver.record(intake.conflict)
        if intake.take:
            self.events.append(event)
            self.receiver.record(event)
        else:
            self.repeats += 1
        return intake.acknowledge


def is_subsequence(needle: Sequence[Event], haystack: Sequence[Event]) -> bool:
    remaining = iter(haystack)
    return all(any(item == candidate for candidate in remaining) for item in needle)


def with_seq(message: _M, seq: int) -> _M:
    """The message as sent with `seq`: numbered messages carry their frame's seq inside,
    status messages (identity, heartbeat) the frame's number as `next_seq`."""
    if isinstance(message, NUMBERED_EVENTS):
        return dataclasses.replace(message, seq=seq)
    if isinstance(message, DeviceIdentity | Heartbeat):
        return dataclasses.replace(message, next_seq=seq)
    return message


def logged_bytes(lines: Iterable[Mapping[str, Any]]) -> list[bytes]:
    """The line bytes that captured log lines carry (as `WireBytes` fields), in order."""
    return [value.data for line in lines for value in line.values() if isinstance(value, WireBytes)]


def decode_all(make_decoder: Callable[[], Decoder], data: bytes) -> list[Event]:
    return make_decoder().feed(data)


# ---------------------------------------------------------------- strategies

PROPERTY_SETTINGS = settings(
    deadline=None, max_examples=150, suppress_health_check=[HealthCheck.too_slow]
)

_printable = st.characters(min_codepoint=0x20, max_codepoint=0x7E)
_identity_text = st.text(_printable, min_size=1, max_size=32)

cards = st.builds(
    CardDrawn,
    rank=st.sampled_from(RANKS),
    suit=st.sampled_from(SUITS),
    seq=st.just(0),
    burned=st.booleans(),
)
faults = st.sampled_from(FAULT_KINDS).flatmap(
    lambda kind: (
        st.builds(FaultSet, kind=st.just(kind), code=st.integers(0, 255))
        | st.builds(FaultCleared, kind=st.just(kind), code=st.integers(0, 255))
    )
)

reference_device_messages: st.SearchStrategy[reference.DeviceMessage] = st.one_of(
    cards,
    cards,  # twice: cards are what matters, let them dominate
    st.builds(CardUnreadable, seq=st.just(0), burned=st.booleans()),
    st.builds(
        DeviceIdentity,
        _identity_text,
        _identity_text,
        _identity_text,
        _identity_text,
        power_up=st.integers(0, 2**32 - 1),
    ),
    st.just(NewShoe()),
    st.just(CutCardReached()),
    st.just(Heartbeat()),
    faults,
)

enq_device_messages: st.SearchStrategy[enq.DeviceMessage] = st.one_of(
    st.builds(
        CardDrawn,
        rank=st.sampled_from(RANKS),
        suit=st.sampled_from(SUITS),
        seq=st.just(0),
        burned=st.booleans(),
        origin=st.sampled_from(CARD_ORIGINS),
    ),
    st.builds(CardUnreadable, seq=st.just(0), burned=st.booleans()),
    st.just(CommunicationStarted()),
    st.just(Standby()),
    st.just(CutCardReached()),
    # As the codec decodes them: named where its table names the code.
    st.integers(0, 63).map(lambda c: FaultSet("other", c, name=enq.ERROR_NAMES.get(c))),
    st.integers(0, 63).map(lambda c: FaultCleared("other", c, name=enq.ERROR_NAMES.get(c))),
    st.builds(LockChanged, locked=st.booleans()),
    st.builds(VendorMessage, code=st.just("G"), data=st.binary(min_size=1, max_size=1)),
    st.builds(VendorMessage, code=st.just("M"), data=st.binary(min_size=6, max_size=6)),
)
