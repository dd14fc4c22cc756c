"""The reference protocol codec under hostile delivery: split, noisy, corrupted, repeated."""

from __future__ import annotations

import binascii
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drivers.codecs import reference
from drivers.codecs.reference import (
    DeviceFrameDecoder,
    HostFrameDecoder,
    encode_device_frame,
    encode_host_frame,
)
from drivers.errors import DriverError, EncodeError
from drivers.events import (
    Acknowledge,
    CardDrawn,
    DeviceIdentity,
    FaultSet,
    Heartbeat,
    StatusRequest,
    frame_number,
)
from tests.drivers.examples import REFERENCE_FRAMES, REFERENCE_MESSAGES
from tests.drivers.helpers import (
    PROPERTY_SETTINGS,
    feed_chunks,
    is_subsequence,
    logged_bytes,
    one_byte_at_a_time,
    reference_device_messages,
    split_at,
    with_seq,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from drivers.codecs.reference import DeviceMessage, HostMessage
    from drivers.events import Rank, Suit

MESSAGES, FRAMES = REFERENCE_MESSAGES, REFERENCE_FRAMES
STREAM = b"".join(FRAMES)


def frame(seq: int, message: DeviceMessage | None = None) -> bytes:
    message = message or Heartbeat()
    return encode_device_frame(with_seq(message, seq), seq=seq)


def beat(next_seq: int) -> Heartbeat:
    return Heartbeat(next_seq=next_seq)


def card(seq: int, rank: Rank = "7", suit: Suit = "D") -> CardDrawn:
    return CardDrawn(rank=rank, suit=suit, seq=seq)


def test_crc_is_ccitt_false() -> None:
    assert reference.crc16(b"123456789") == 0x29B1
    assert binascii.crc_hqx(b"123456789", reference.CRC_INIT) == 0x29B1


# ---------------------------------------------------------------- delivery


def test_a_stream_of_every_message_decodes_whole() -> None:
    decoder = DeviceFrameDecoder()
    assert decoder.feed(STREAM) == MESSAGES
    counters = decoder.counters
    assert counters.frames_ok == len(MESSAGES)
    assert counters.garbage_bytes == counters.bad_checksum == counters.malformed == 0


def test_host_frames_decode_on_the_device_side() -> None:
    frames = encode_host_frame(Acknowledge(acknowledged_seq=65535), seq=7) + encode_host_frame(
        StatusRequest(), seq=8
    )
    assert feed_chunks(HostFrameDecoder(), one_byte_at_a_time(frames)) == [
        Acknowledge(acknowledged_seq=65535),
        StatusRequest(),
    ]


def test_frames_sharing_one_flag_between_them_decode() -> None:
    shared = b"".join(f[:-1] for f in FRAMES) + b"\x7e"
    assert DeviceFrameDecoder().feed(shared) == MESSAGES


# ---------------------------------------------------------------- garbage


def test_joining_mid_frame_skips_to_the_next_flag() -> None:
    decoder = DeviceFrameDecoder()
    tail_of_a_frame = FRAMES[1][4:]
    assert decoder.feed(tail_of_a_frame + FRAMES[2]) == [MESSAGES[2]]
    assert decoder.counters.garbage_bytes == len(tail_of_a_frame) - 1  # its closing FLAG
    assert decoder.counters.frames_ok == 1


@pytest.mark.parametrize(
    "garbage",
    [b"\x00", b"\xff" * 40, b"\x7d", b"\x7d\x7d", b"\x7e\x7e\x7e", b"noise\x7e\x7dnoise\x7e"],
)
def test_garbage_before_between_and_after_frames_costs_no_frame(garbage: bytes) -> None:
    stream = garbage + FRAMES[1] + garbage + FRAMES[2] + garbage
    for chunks in ([stream], one_byte_at_a_time(stream)):
        assert feed_chunks(DeviceFrameDecoder(), chunks) == MESSAGES[1:3]


@pytest.mark.parametrize("garbage", [b"\x00", b"\x7e", b"\x7d", b"\x01\x02\x03"])
@pytest.mark.parametrize("offset", [2, 3, 6, 9])
def test_garbage_inside_a_frame_costs_that_frame_only(garbage: bytes, offset: int) -> None:
    broken = FRAMES[2][:offset] + garbage + FRAMES[2][offset:]
    decoder = DeviceFrameDecoder()
    events = decoder.feed(FRAMES[1] + broken + FRAMES[3])
    assert events == [MESSAGES[1], MESSAGES[3]]  # the loss is the receiver's to judge


def test_an_endless_run_without_a_flag_keeps_the_buffer_bounded() -> None:
    decoder = DeviceFrameDecoder()
    decoder.feed(FRAMES[1])
    for _ in range(100):
        decoder.feed(b"\x55" * 100)
        assert len(decoder._pending) <= reference.MAX_STUFFED_BODY
    assert decoder.feed(b"\x7e" + FRAMES[2]) == [MESSAGES[2]]
    assert decoder.counters.garbage_bytes == 100 * 100


def test_an_over_long_frame_counts_the_same_however_it_arrives() -> None:
    stream = b"\x7e" + b"\x55" * (reference.MAX_STUFFED_BODY + 10) + FRAMES[1]
    whole, byte_wise = DeviceFrameDecoder(), DeviceFrameDecoder()
    assert whole.feed(stream) == feed_chunks(byte_wise, one_byte_at_a_time(stream)) == [MESSAGES[1]]
    assert whole.counters == byte_wise.counters


# ---------------------------------------------------------------- corruption


def test_every_single_bit_flip_of_every_frame_is_dropped() -> None:
    before, after = frame(100, card(100, "Q", "S")), frame(102, card(102, "2", "H"))
    for index, message in enumerate(MESSAGES):
        good = encode_device_frame(with_seq(message, 101), seq=101)
        for bit in range(len(good) * 8):
            flipped = bytearray(good)
            flipped[bit // 8] ^= 1 << (bit % 8)
            events = DeviceFrameDecoder().feed(before + bytes(flipped) + after)
            assert events == [card(100, "Q", "S"), card(102, "2", "H")], (index, bit)


@pytest.mark.parametrize(
    ("body_edit", "counter"),
    [
        (lambda body: body[:-1] + bytes([body[-1] ^ 0x01]), "bad_checksum"),
        (lambda body: bytes([1]) + body[1:], "unknown_message"),  # version 1: no longer read
        (lambda body: bytes([3]) + body[1:], "unknown_message"),  # version 3
        (lambda body: body[:4] + bytes([body[4] + 1]) + body[5:], "malformed"),  # length field
        (lambda body: body[:1] + bytes([0x82]) + body[2:], "unknown_message"),  # host direction
        (lambda body: body[:1] + bytes([0x7F]) + body[2:], "unknown_message"),  # unknown type
        (lambda body: body[:5] + b"\x00" + body[6:], "malformed"),  # card byte 0
        (lambda body: body[:5] + b"\x5a" + body[6:], "malformed"),  # suit 5
        (lambda body: body[:5] + b"\x3e" + body[6:], "malformed"),  # rank 14
        (lambda body: body[:6] + b"\x02" + body[7:], "malformed"),  # reserved flag bit
        (lambda body: body[:4] + b"\x03" + body[5:] + b"\x00", "malformed"),  # payload too long
    ],
)
def test_each_kind_of_bad_frame_is_counted_logged_and_skipped(
    body_edit: Callable[[bytes], bytes], counter: str, driver_logs: list[dict[str, Any]]
) -> None:
    body = reference.unstuff(frame(5, card(5))[1:-1])
    assert body is not None
    edited = body_edit(body[:-2])
    if counter != "bad_checksum":
        edited += reference.crc16(edited).to_bytes(2, "big")
    else:
        edited += body[-2:]
    bad = b"\x7e" + reference.stuff(edited) + b"\x7e"
    decoder = DeviceFrameDecoder()
    events = decoder.feed(frame(4) + bad + frame(6))
    assert events == [beat(4), beat(6)]
    assert getattr(decoder.counters, counter) == 1
    assert decoder.counters.frames_ok == 2
    assert any(bad[1:-1] in logged for logged in logged_bytes(driver_logs))
    assert {line["logger"] for line in driver_logs} == {"drivers.codecs.reference"}


@pytest.mark.parametrize(
    "stuffed",
    [
        b"\x01\x06\x00\x05\x00\x7d\x00\x00",  # ESC then a byte that is never escaped
        b"\x01\x06\x00\x05\x00\x00\x7d",  # ESC right before the closing FLAG
        b"\x7d\x5e\x7d\x5e\x7d\x5e\x7d",  # unstuffs to fewer bytes than a header and CRC
    ],
)
def test_impossible_escapes_are_malformed(stuffed: bytes) -> None:
    decoder = DeviceFrameDecoder()
    assert decoder.feed(frame(1) + b"\x7e" + stuffed + b"\x7e" + frame(2)) == [beat(1), beat(2)]
    assert decoder.counters.malformed == 1


POWER_UP = b"\x00\x00\x00\x07"


@pytest.mark.parametrize(
    "payload",
    [
        b"",
        b"\x04Acme" + POWER_UP,  # ends early
        b"\x00" + b"\x01a" * 3 + POWER_UP,  # empty string
        b"\x21" + b"a" * 33 + b"\x01a" * 3 + POWER_UP,  # too long
        b"\x01\x07" + b"\x01a" * 3 + POWER_UP,  # not printable
        b"\x01a" * 4 + b"\x00" + POWER_UP,  # bytes between the strings and the power-up
        b"\x01a" * 4,  # no power-up number (a version 1 identity)
        b"\x01a" * 4 + b"\x07",  # a power-up number cut short
    ],
)
def test_a_malformed_identity_is_dropped(payload: bytes) -> None:
    identity = reference.MessageType.DEVICE_IDENTITY
    body = bytes([reference.PROTOCOL_VERSION, identity, 0, 0, len(payload)]) + payload
    bad = b"\x7e" + reference.stuff(body + reference.crc16(body).to_bytes(2, "big")) + b"\x7e"
    decoder = DeviceFrameDecoder()
    assert decoder.feed(bad) == []
    assert decoder.counters.malformed == 1


def test_an_unknown_message_type_is_skipped_and_costs_no_other_frame() -> None:
    body = bytes([reference.PROTOCOL_VERSION, 0x3F, 0, 7, 0])
    future = b"\x7e" + body + reference.crc16(body).to_bytes(2, "big") + b"\x7e"
    decoder = DeviceFrameDecoder()
    assert decoder.feed(frame(6) + future + frame(8)) == [beat(6), beat(8)]
    assert decoder.counters.unknown_message == 1


def test_device_frames_on_the_host_decoder_are_unknown_not_commands() -> None:
    decoder = HostFrameDecoder()
    assert decoder.feed(STREAM) == []
    assert decoder.counters.unknown_message == len(FRAMES)


# ---------------------------------------------------------------- sequence numbers


def test_every_copy_of_a_frame_is_handed_up_for_the_receiver_to_judge() -> None:
    """A repeat on a reliable link is a resend the receiver must acknowledge again if it holds
    the frame already: only the receiver knows, so the decoder drops none (decision D3)."""
    decoder = DeviceFrameDecoder()
    assert decoder.feed(frame(5, card(5)) * 3 + frame(6)) == [card(5)] * 3 + [beat(6)]
    assert decoder.counters.frames_ok == 4


def test_every_numbered_message_carries_its_frame_number() -> None:
    decoded = DeviceFrameDecoder().feed(STREAM)
    assert decoded == MESSAGES
    assert [frame_number(m) for m in decoded] == [
        None if isinstance(m, DeviceIdentity | Heartbeat) else seq for seq, m in enumerate(decoded)
    ]


def test_status_messages_say_which_frame_comes_next() -> None:
    identity = DeviceIdentity("v", "m", "s", "f", power_up=2**32 - 1)
    decoded = DeviceFrameDecoder().feed(encode_device_frame(identity, seq=300) + frame(301))
    assert decoded == [
        DeviceIdentity("v", "m", "s", "f", power_up=2**32 - 1, next_seq=300),
        beat(301),
    ]


# ---------------------------------------------------------------- encoder errors


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: encode_device_frame(Heartbeat()), "seq"),
        (lambda: encode_device_frame(Heartbeat(), seq=65536), "seq"),
        (lambda: encode_device_frame(Heartbeat(), seq=-1), "seq"),
        (lambda: encode_device_frame(card(3), seq=4), "seq"),
        (lambda: encode_device_frame(card(70000)), "seq"),
        (lambda: encode_device_frame(CardDrawn(rank="1", suit="S", seq=1)), "rank"),  # type: ignore[arg-type]  # on purpose
        (lambda: encode_device_frame(CardDrawn(rank="A", suit="X", seq=1)), "suit"),  # type: ignore[arg-type]  # on purpose
        (lambda: encode_device_frame(CardDrawn("A", "S", 1, origin="outside_game")), "origin"),
        (lambda: encode_device_frame(FaultSet(kind="fire"), seq=1), "kind"),  # type: ignore[arg-type]  # on purpose
        (lambda: encode_device_frame(FaultSet(kind="jam", code=256), seq=1), "code"),
        (lambda: encode_device_frame(DeviceIdentity("", "m", "s", "f"), seq=1), "vendor"),
        (lambda: encode_device_frame(DeviceIdentity("v", "m" * 33, "s", "f"), seq=1), "model"),
        (lambda: encode_device_frame(DeviceIdentity("v", "m", "Ä", "f"), seq=1), "serial_number"),
        (lambda: encode_device_frame(DeviceIdentity("v", "m", "s", "1\n"), seq=1), "firmware"),
        (lambda: encode_device_frame(DeviceIdentity("v", "m", "s", "f"), seq=1), "power_up"),
        (lambda: encode_device_frame(DeviceIdentity("v", "m", "s", "f", 2**32), seq=1), "power_up"),
        (lambda: encode_device_frame(Heartbeat(next_seq=3), seq=4), "seq"),
        (lambda: encode_host_frame(Acknowledge(acknowledged_seq=65536), seq=1), "seq"),
        (lambda: encode_host_frame(StatusRequest(), seq=65536), "seq"),
    ],
)
def test_encoders_reject_what_the_protocol_cannot_carry(
    call: Callable[[], bytes], field: str
) -> None:
    with pytest.raises(EncodeError) as raised:
        call()
    assert raised.value.field == field
    assert isinstance(raised.value, DriverError)
    assert isinstance(raised.value, ValueError)


# ---------------------------------------------------------------- properties


def numbered(messages: list[DeviceMessage], first_seq: int) -> tuple[list[DeviceMessage], bytes]:
    sent: list[DeviceMessage] = []
    wire = b""
    for offset, message in enumerate(messages):
        seq = (first_seq + offset) % reference.SEQUENCE.modulus
        stamped = with_seq(message, seq)
        sent.append(stamped)
        wire += encode_device_frame(stamped, seq=seq)
    return sent, wire


@PROPERTY_SETTINGS
@given(
    messages=st.lists(reference_device_messages, max_size=12),
    first_seq=st.integers(0, 65535),
    data=st.data(),
)
def test_round_trip_over_any_chunking(
    messages: list[DeviceMessage], first_seq: int, data: st.DataObject
) -> None:
    sent, wire = numbered(messages, first_seq)
    cuts = data.draw(st.lists(st.integers(0, len(wire)), max_size=30))
    decoder = DeviceFrameDecoder()
    assert feed_chunks(decoder, split_at(wire, cuts)) == sent
    assert decoder.counters.frames_ok == len(sent)


@PROPERTY_SETTINGS
@given(acked=st.lists(st.integers(0, 65535), max_size=10), data=st.data())
def test_host_round_trip_over_any_chunking(acked: list[int], data: st.DataObject) -> None:
    sent: list[HostMessage] = [*(Acknowledge(acknowledged_seq=a) for a in acked), StatusRequest()]
    wire = b"".join(encode_host_frame(m, seq=i) for i, m in enumerate(sent))
    cuts = data.draw(st.lists(st.integers(0, len(wire)), max_size=30))
    assert feed_chunks(HostFrameDecoder(), split_at(wire, cuts)) == sent


@PROPERTY_SETTINGS
@given(
    messages=st.lists(reference_device_messages, min_size=1, max_size=8),
    noises=st.lists(st.binary(max_size=60), min_size=9, max_size=9),
    data=st.data(),
)
def test_noise_between_frames_never_loses_a_frame(
    messages: list[DeviceMessage], noises: list[bytes], data: st.DataObject
) -> None:
    sent, _ = numbered(messages, 0)
    wire = noises[0] + b"".join(
        encode_device_frame(m, seq=i) + noises[i + 1] for i, m in enumerate(sent)
    )
    cuts = data.draw(st.lists(st.integers(0, len(wire)), max_size=10))
    events = feed_chunks(DeviceFrameDecoder(), split_at(wire, cuts))
    assert is_subsequence(sent, events)
    assert [e for e in events if isinstance(e, CardDrawn)] == [
        e for e in sent if isinstance(e, CardDrawn)
    ]


@PROPERTY_SETTINGS
@given(message=reference_device_messages, seq=st.integers(1, 65534), data=st.data())
def test_a_single_bit_flip_never_yields_a_wrong_card(
    message: DeviceMessage, seq: int, data: st.DataObject
) -> None:
    sent = with_seq(message, seq)
    good = encode_device_frame(sent, seq=seq)
    bit = data.draw(st.integers(0, len(good) * 8 - 1))
    flipped = bytearray(good)
    flipped[bit // 8] ^= 1 << (bit % 8)
    before, after = frame(seq - 1), frame(seq + 1)
    events = DeviceFrameDecoder().feed(before + bytes(flipped) + after)
    assert events == [beat(seq - 1), beat(seq + 1)]
