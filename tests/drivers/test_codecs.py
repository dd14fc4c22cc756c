"""What every codec promises, whichever protocol it speaks, in both directions."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drivers.codecs import enq, reference
from drivers.codecs.base import DecoderCounters
from tests.drivers.examples import EXAMPLES
from tests.drivers.helpers import (
    PROPERTY_SETTINGS,
    every_split_in_two,
    feed_chunks,
    one_byte_at_a_time,
    split_at,
)

if TYPE_CHECKING:
    from drivers.codecs.base import Decoder
    from drivers.events import Event

DECODERS: list[type[Decoder]] = [
    reference.DeviceFrameDecoder,
    reference.HostFrameDecoder,
    enq.DeviceFrameDecoder,
    enq.HostFrameDecoder,
]


@pytest.mark.parametrize("make", DECODERS, ids=lambda d: f"{d.codec_name}.{d.__name__}")
@PROPERTY_SETTINGS
@given(noise=st.binary(max_size=600), data=st.data())
def test_arbitrary_bytes_never_raise_and_chunking_never_matters(
    make: type[Decoder], noise: bytes, data: st.DataObject
) -> None:
    cuts = data.draw(st.lists(st.integers(0, len(noise)), max_size=20))
    whole, chunked = make(), make()
    assert whole.feed(noise) == feed_chunks(chunked, split_at(noise, cuts))
    assert whole.counters == chunked.counters


@pytest.mark.parametrize("make", DECODERS, ids=lambda d: f"{d.codec_name}.{d.__name__}")
def test_counters_are_a_copy_the_caller_cannot_corrupt(make: type[Decoder]) -> None:
    decoder = make()
    decoder.feed(b"\x00\x01\x7e")
    snapshot = decoder.counters
    counted = snapshot.garbage_bytes
    snapshot.garbage_bytes = 999
    assert decoder.counters.garbage_bytes == counted > 0


@pytest.mark.parametrize("make", DECODERS, ids=lambda d: f"{d.codec_name}.{d.__name__}")
def test_the_copy_of_the_counters_carries_every_counter(make: type[Decoder]) -> None:
    """The copy is made field by field: a counter added later must be in it too."""
    decoder = make()
    for value, counter in enumerate(dataclasses.fields(DecoderCounters), start=1):
        setattr(decoder._counters, counter.name, value)
    assert dataclasses.asdict(decoder.counters) == {
        counter.name: value
        for value, counter in enumerate(dataclasses.fields(DecoderCounters), start=1)
    }


@pytest.mark.parametrize(
    ("make", "frame", "message"),
    [
        (make, f, m)
        for make, frames, messages in EXAMPLES
        for f, m in zip(frames, messages, strict=True)
    ],
)
def test_each_frame_decodes_split_at_every_byte_boundary(
    make: type[Decoder], frame: bytes, message: Event
) -> None:
    for chunks in every_split_in_two(frame):
        assert feed_chunks(make(), chunks) == [message]


@pytest.mark.parametrize(("make", "frames", "messages"), EXAMPLES)
def test_a_stream_fed_one_byte_at_a_time_decodes_the_same(
    make: type[Decoder], frames: list[bytes], messages: list[Event]
) -> None:
    assert feed_chunks(make(), one_byte_at_a_time(b"".join(frames))) == messages
