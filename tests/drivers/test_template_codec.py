"""The template protocol (drivers/codecs/template.py, docs/writing-a-protocol.md): how the
bytes are split never matters, every line it encodes decodes to its event, and a bad line
costs only itself. Installed as a plugin it is a protocol like the built-in ones to the
registry, a capture and `shoe2mqtt listen`: tests/test_writing_a_protocol.py, as the page
shows it."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drivers.codecs import template
from drivers.errors import EncodeError
from drivers.events import (
    RANKS,
    SUITS,
    CardDrawn,
    CardUnreadable,
    CutCardReached,
    DeviceIdentity,
    NewShoe,
    StatusRequest,
)
from tests.drivers.helpers import PROPERTY_SETTINGS, feed_chunks, split_at

if TYPE_CHECKING:
    from drivers.codecs.base import Decoder
    from drivers.events import Event

# Worked out by hand, not by the codec: XOR of "CARD 10S 7" is 0x71, and so on.
GOLDEN: list[tuple[bytes, template.DeviceMessage]] = [
    (b"CARD 10S 7*71\n", CardDrawn(rank="10", suit="S", seq=7)),
    (b"BURN QH 8*2A\r\n", CardDrawn(rank="Q", suit="H", seq=8, burned=True)),
    (b"NOREAD 9*0A\n", CardUnreadable(seq=9)),
    (b"SHUFFLE 10*66\n", NewShoe(seq=10)),
    (b"CUT 11*62\n", CutCardReached(seq=11)),
    (b"SHOE Acme S1 0042 1.0 7*67\n", DeviceIdentity("Acme", "S1", "0042", "1.0", next_seq=7)),
]


@pytest.mark.parametrize(("line", "event"), GOLDEN, ids=[str(e) for _, e in GOLDEN])
def test_each_line_the_page_shows_decodes_to_its_event(
    line: bytes, event: template.DeviceMessage
) -> None:
    decoder = template.DeviceFrameDecoder()
    assert decoder.feed(line) == [event]
    assert decoder.counters.frames_ok == 1
    assert template.encode_device_frame(event) == line.replace(b"\r", b"")


_SEQ = st.integers(min_value=0, max_value=template.SEQUENCE.modulus - 1)
_WORDS = st.text(alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1).filter(
    lambda w: "*" not in w
)
_MESSAGES = st.one_of(
    st.builds(CardDrawn, rank=st.sampled_from(RANKS), suit=st.sampled_from(SUITS), seq=_SEQ,
              burned=st.booleans()),
    st.builds(CardUnreadable, seq=_SEQ),
    st.builds(NewShoe, seq=_SEQ),
    st.builds(CutCardReached, seq=_SEQ),
    st.builds(DeviceIdentity, vendor=_WORDS, model=_WORDS, serial_number=_WORDS,
              firmware=_WORDS, next_seq=_SEQ),
)  # fmt: skip


@PROPERTY_SETTINGS
@given(st.lists(_MESSAGES, max_size=20), st.lists(st.integers(min_value=0), max_size=30))
def test_every_encoded_line_decodes_to_its_event_however_the_bytes_are_split(
    messages: list[template.DeviceMessage], cuts: list[int]
) -> None:
    stream = b"".join(template.encode_device_frame(m) for m in messages)
    decoder = template.DeviceFrameDecoder()
    # A line over MAX_LINE is no line: identities of long words are refused by the decoder.
    fits = [m for m in messages if len(template.encode_device_frame(m)) - 1 <= template.MAX_LINE]
    assert feed_chunks(decoder, split_at(stream, cuts)) == fits
    assert decoder.counters.frames_ok == len(fits)


def _noisy_streams() -> st.SearchStrategy[bytes]:
    """Lines of the protocol, whole or torn, among bytes of every kind."""
    pieces = st.one_of(
        _MESSAGES.map(template.encode_device_frame),
        _MESSAGES.map(lambda m: template.encode_device_frame(m)[:-3]),  # its end torn off
        st.binary(max_size=40),
        st.sampled_from([b"\n", b"\r\n", b"*", b"*ZZ\n", b"x" * 90, b"STATUS*14\n"]),
    )
    return st.lists(pieces, max_size=15).map(b"".join)


@PROPERTY_SETTINGS
@given(_noisy_streams(), st.lists(st.integers(min_value=0), max_size=40))
def test_how_the_bytes_are_split_never_matters_and_nothing_raises(
    stream: bytes, cuts: list[int]
) -> None:
    whole = template.DeviceFrameDecoder()
    split = template.DeviceFrameDecoder()
    assert feed_chunks(split, split_at(stream, cuts)) == whole.feed(stream)
    assert split.counters == whole.counters


def _decoded(decoder: Decoder, data: bytes) -> tuple[list[Event], dict[str, int]]:
    """The events of `data`, and the counters it moved."""
    events = decoder.feed(data)
    return events, {name: n for name, n in dataclasses.asdict(decoder.counters).items() if n}


@pytest.mark.parametrize(
    ("data", "counted"),
    [
        (b"CARD 10S 7*70\n", {"bad_checksum": 1}),  # one bit of the check flipped
        (b"CARD 10S 7\n", {"malformed": 1}),  # no check value
        (b"CARD 10S 7*7l\n", {"malformed": 1}),  # not two uppercase hex digits
        (b"CARD 1S 7*41\n", {"malformed": 1}),  # no such rank
        (b"CARD 10S 07*41\n", {"malformed": 1}),  # a number with a leading zero
        (b"CARD 10S*66\n", {"malformed": 1}),  # its number missing
        (b"HELLO 3*51\n", {"unknown_message": 1}),  # a word this protocol does not have
        (b"\n\r\n", {"garbage_bytes": 3}),  # blank lines
        (b"x" * 81 + b"\nCUT 11*62\n", {"malformed": 1, "frames_ok": 1}),  # too long; then one
    ],
)
def test_a_bad_line_costs_itself_and_is_counted_by_what_is_wrong(
    data: bytes, counted: dict[str, int]
) -> None:
    events, counters = _decoded(template.DeviceFrameDecoder(), data)
    assert counters == counted
    assert events == ([CutCardReached(seq=11)] if counted.get("frames_ok") else [])


def test_the_host_asks_status_and_the_shoe_reads_it() -> None:
    line = template.encode_host_frame(StatusRequest())
    assert line == b"STATUS*14\n"
    assert template.HostFrameDecoder().feed(line) == [StatusRequest()]
    link = template.HostLink()
    assert (link.greets, link.greeting(), link.acknowledgement(7)) == (True, line, b"")
    assert link.answers_greeting(GOLDEN[-1][1])
    assert not link.answers_greeting(GOLDEN[0][1])


@pytest.mark.parametrize(
    ("message", "field"),
    [
        (CardDrawn(rank="A", suit="S", seq=1, origin="outside_game"), "origin"),
        (CardUnreadable(seq=1, burned=True), "burned"),
        (DeviceIdentity("Acme Shoes", "S1", "1", "1.0", next_seq=0), "word"),
        (DeviceIdentity("Acme", "S1", "1", "1.0", power_up=3, next_seq=0), "power_up"),
        (DeviceIdentity("Acme", "S1", "1", "1.0"), "seq"),
        (NewShoe(seq=1000), "seq"),
    ],
)
def test_what_the_protocol_cannot_say_is_refused_when_encoding(
    message: template.DeviceMessage, field: str
) -> None:
    with pytest.raises(EncodeError) as caught:
        template.encode_device_frame(message)
    assert caught.value.field == field
