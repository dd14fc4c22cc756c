"""The ENQ/ETX/BCC codec: structure-aware hunting, de-duplication, and its weaker guarantees."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drivers.codecs import enq
from drivers.codecs.enq import (
    DeviceFrameDecoder,
    HostFrameDecoder,
    encode_device_frame,
    encode_host_frame,
)
from drivers.errors import EncodeError
from drivers.events import (
    CardDrawn,
    CardUnreadable,
    CommandAccepted,
    CommandRejected,
    FaultCleared,
    FaultSet,
    Standby,
    VendorCommand,
    VendorMessage,
)
from tests.drivers.examples import ENQ_FRAMES, ENQ_MESSAGES
from tests.drivers.helpers import (
    PROPERTY_SETTINGS,
    enq_device_messages,
    every_split_in_two,
    feed_chunks,
    is_subsequence,
    logged_bytes,
    one_byte_at_a_time,
    split_at,
    with_seq,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from drivers.codecs.enq import DeviceMessage
    from drivers.events import Event, Rank, Suit

MESSAGES, FRAMES = ENQ_MESSAGES, ENQ_FRAMES
STREAM = b"".join(FRAMES)


def card(seq: int, rank: Rank = "7", suit: Suit = "D") -> CardDrawn:
    return CardDrawn(rank=rank, suit=suit, seq=seq)


def card_frame(seq: int, rank: Rank = "7", suit: Suit = "D") -> bytes:
    return encode_device_frame(card(seq, rank, suit))


def raw_frame(seq: int, code: bytes, data: bytes) -> bytes:
    body = bytes([seq]) + code + data + b"\x03"
    return b"\x05" + body + b"%02X" % enq.bcc(body)


# ---------------------------------------------------------------- delivery


def test_a_stream_of_every_message_decodes_whole() -> None:
    decoder = DeviceFrameDecoder()
    assert decoder.feed(STREAM) == MESSAGES
    assert decoder.counters.frames_ok == len(MESSAGES)
    assert decoder.counters.garbage_bytes == decoder.counters.malformed == 0


def test_ack_and_nak_between_event_frames() -> None:
    stream = (
        FRAMES[1]
        + encode_device_frame(CommandAccepted())
        + encode_device_frame(CommandRejected(0x31))
        + FRAMES[2]
    )
    expected = [MESSAGES[1], CommandAccepted(), CommandRejected(code=0x31), MESSAGES[2]]
    assert feed_chunks(DeviceFrameDecoder(), one_byte_at_a_time(stream)) == expected


def test_commands_decode_on_the_shoe_side_in_any_chunking() -> None:
    stream = encode_host_frame(VendorCommand(enq.LOCK, enq.LOCK_ON)) + encode_host_frame(
        VendorCommand(enq.CLEAR_ERROR, "00")
    )
    expected = [VendorCommand(name="LK", argument="02"), VendorCommand(name="EC", argument="00")]
    for chunks in [[stream], one_byte_at_a_time(stream), *every_split_in_two(stream)]:
        assert feed_chunks(HostFrameDecoder(), chunks) == expected


# ---------------------------------------------------------------- the frame format


def test_the_public_command_example_bcc_includes_stx() -> None:
    assert enq.bcc(bytes.fromhex("02 4F 50 4C 4B 30 32 03")) == 0x1B
    assert (
        encode_host_frame(VendorCommand("LK", "02"))
        == bytes.fromhex("02 4F 50 4C 4B 30 32 03") + b"1B"
    )


def test_event_bcc_is_xor_after_enq_through_etx_in_uppercase_hex() -> None:
    frame = card_frame(0x4A, "K", "H")  # 05 4A 44 00 4D 03 ...
    assert frame[:6] == bytes.fromhex("05 4A 44 00 4D 03")
    assert frame[6:] == b"%02X" % (0x4A ^ 0x44 ^ 0x00 ^ 0x4D ^ 0x03)


@pytest.mark.parametrize(
    ("target", "burned"), [(0x00, False), (0x13, False), (0x20, True), (0x2F, True), (0x40, False)]
)
def test_only_the_burn_target_marks_a_card_burned(target: int, burned: bool) -> None:  # noqa: FBT001 - parametrized
    events = DeviceFrameDecoder().feed(raw_frame(0x31, b"D", bytes([target, 0x3A])))
    assert events == [CardDrawn(rank="10", suit="S", seq=0x31, burned=burned)]


def test_a_data_byte_equal_to_etx_does_not_end_the_frame() -> None:
    # Target 0x03 (player, card 3) puts ETX inside DATA: fixed lengths per code handle it.
    frame = raw_frame(0x31, b"D", b"\x03\x11")
    assert DeviceFrameDecoder().feed(frame) == [CardDrawn(rank="A", suit="D", seq=0x31)]


@pytest.mark.parametrize("card_byte", [0x00, 0x0E, 0x10, 0x50, 0x5A, 0x3F, 0xB1])
def test_a_card_byte_outside_the_table_is_an_unreadable_card(card_byte: int) -> None:
    events = DeviceFrameDecoder().feed(raw_frame(0x31, b"D", bytes([0x20, card_byte])))
    assert events == [CardUnreadable(seq=0x31, burned=True)]


def test_error_bytes_keep_the_code_and_ignore_the_error_mode_bit() -> None:
    stream = raw_frame(0x31, b"E", b"\x7f") + raw_frame(0x32, b"e", b"\x3f")  # 63: unnamed
    assert DeviceFrameDecoder().feed(stream) == [
        FaultSet(kind="other", code=0x3F, seq=0x31),
        FaultCleared(kind="other", code=0x3F, seq=0x32),
    ]


def test_lowercase_bcc_digits_are_rejected() -> None:
    frame = raw_frame(0x31, b"D", b"\x00\x4d")
    lowered = frame[:-2] + frame[-2:].lower()
    assert lowered != frame
    decoder = DeviceFrameDecoder()
    assert decoder.feed(lowered) == []
    assert decoder.counters.malformed == 1


# ---------------------------------------------------------------- repeats


def test_every_copy_of_a_frame_is_handed_up_for_the_receiver_to_judge() -> None:
    """The receiver is the one judge of repeats, by number and content (drivers/receiver.py);
    the decoder drops no intact frame."""
    decoder = DeviceFrameDecoder()
    stream = card_frame(0x31) * 3 + card_frame(0x32)
    assert decoder.feed(stream) == [card(0x31)] * 3 + [card(0x32)]
    assert decoder.counters.frames_ok == 4


def test_two_frames_with_one_number_both_come_up() -> None:
    stream = card_frame(0x31, "5", "C") + card_frame(0x31, "K", "H")
    assert DeviceFrameDecoder().feed(stream) == [card(0x31, "5", "C"), card(0x31, "K", "H")]


# ---------------------------------------------------------------- hunting and garbage


@pytest.mark.parametrize("stray", [b"\x05", b"\x02", b"\x15", b"\x05\x05", b"\x02O", b"\x05\x41D"])
def test_a_stray_start_byte_before_a_frame_costs_only_itself(stray: bytes) -> None:
    for chunks in ([stray + FRAMES[1]], one_byte_at_a_time(stray + FRAMES[1])):
        assert feed_chunks(DeviceFrameDecoder(), chunks) == [MESSAGES[1]]


def test_a_stray_ack_byte_is_an_acknowledgement() -> None:
    assert DeviceFrameDecoder().feed(b"\x06" + FRAMES[1]) == [CommandAccepted(), MESSAGES[1]]


@pytest.mark.parametrize("start", [enq.ENQ, enq.ACK, enq.NAK])
def test_a_nak_never_takes_enq_ack_or_nak_as_its_code(start: int) -> None:
    frame = {enq.ENQ: FRAMES[1], enq.ACK: b"\x06", enq.NAK: b"\x15\x31"}[start]
    decoded = DeviceFrameDecoder().feed(frame)
    decoder = DeviceFrameDecoder()
    assert decoder.feed(b"\x15" + frame) == decoded
    assert decoder.counters.malformed == 1


@pytest.mark.parametrize(
    ("code", "name"),
    [(0x01, "overrun, framing or parity error"), (0x02, "BCC error"), (0x03, "no ETX")],
)
def test_the_public_nak_codes_below_etx_are_naks_with_their_names(code: int, name: str) -> None:
    """02 is a start byte on the shoe's side (an echoed command), and a public NAK code: a
    NAK takes it, at once, without waiting for bytes that may never come."""
    for chunks in ([b"\x15" + bytes([code])], [b"\x15", bytes([code])]):
        decoder = DeviceFrameDecoder()
        assert feed_chunks(decoder, chunks) == [CommandRejected(code=code, name=name)]
        assert decoder.counters.malformed == decoder.counters.garbage_bytes == 0


def test_a_nak_02_before_an_echoed_command_costs_the_echo_only_its_count() -> None:
    """The echo is dropped either way; its bytes hold no start byte, so they pass as garbage
    and the frame after them is found."""
    echo = encode_host_frame(VendorCommand("LK", "02"))
    assert not set(echo[1:]) & enq.SHOE_START_BYTES
    decoder = DeviceFrameDecoder()
    assert decoder.feed(b"\x15\x02" + echo[1:] + FRAMES[1]) == [
        CommandRejected(code=2, name="BCC error"),
        MESSAGES[1],
    ]
    assert decoder.counters.garbage_bytes == len(echo) - 1


def test_every_named_code_decodes_with_its_name() -> None:
    for code, name in enq.NAK_NAMES.items():
        frame = encode_device_frame(CommandRejected(code))
        assert DeviceFrameDecoder().feed(frame) == [CommandRejected(code, name=name)]
    for code, name in enq.ERROR_NAMES.items():
        stream = raw_frame(0x31, b"E", bytes([0x40 | code])) + raw_frame(0x32, b"e", bytes([code]))
        assert DeviceFrameDecoder().feed(stream) == [
            FaultSet("other", code, seq=0x31, name=name),
            FaultCleared("other", code, seq=0x32, name=name),
        ]
    assert DeviceFrameDecoder().feed(b"\x15\x31") == [CommandRejected(0x31, name=None)]


@pytest.mark.parametrize("garbage", [b"\x00", b"\xff" * 50, b"\x03\x03", b"OP12\x03AB"])
def test_garbage_before_between_and_after_frames_is_counted_and_skipped(
    garbage: bytes, driver_logs: list[dict[str, Any]]
) -> None:
    stream = garbage + FRAMES[1] + garbage + FRAMES[2] + garbage
    decoder = DeviceFrameDecoder()
    assert decoder.feed(stream) == MESSAGES[1:3]
    assert decoder.counters.garbage_bytes == 3 * len(garbage)
    assert any(garbage in logged for logged in logged_bytes(driver_logs))
    assert {line["logger"] for line in driver_logs} == {"drivers.codecs.enq"}


@pytest.mark.parametrize("garbage", [b"\x00", b"\x41\x42", b"\x03", b"\xff" * 20])
@pytest.mark.parametrize("offset", [1, 2, 3, 4, 5, 6, 7])
def test_garbage_inside_a_frame_costs_that_frame_only(garbage: bytes, offset: int) -> None:
    broken = FRAMES[2][:offset] + garbage + FRAMES[2][offset:]
    assert DeviceFrameDecoder().feed(FRAMES[1] + broken + FRAMES[3]) == [MESSAGES[1], MESSAGES[3]]


def test_a_bad_bcc_is_counted_logged_and_skipped(driver_logs: list[dict[str, Any]]) -> None:
    bad = bytearray(FRAMES[2])
    bad[-1] = ord("0") if bad[-1] != ord("0") else ord("1")
    decoder = DeviceFrameDecoder()
    assert decoder.feed(FRAMES[1] + bytes(bad) + FRAMES[3]) == [MESSAGES[1], MESSAGES[3]]
    assert decoder.counters.bad_checksum == 1
    assert any(bytes(bad) in logged for logged in logged_bytes(driver_logs))


def test_an_unknown_code_with_a_good_bcc_is_counted_and_skipped() -> None:
    decoder = DeviceFrameDecoder()
    unknown = raw_frame(0x31, b"Z", b"abc")
    assert decoder.feed(unknown + FRAMES[2]) == [MESSAGES[2]]
    assert decoder.counters.unknown_message == 1
    assert decoder.counters.garbage_bytes == len(unknown) - 1  # hunted over after backing off


def test_a_checked_out_unknown_code_does_not_swallow_the_frame_under_it() -> None:
    # 05 05 | 05 31 44 ...: the first ENQ reads as SEQ 05, unknown code 05, and its BCC
    # matches (the extra 05 05 cancels out). Its length was only a guess, so back off.
    assert DeviceFrameDecoder().feed(b"\x05\x05" + FRAMES[1]) == [MESSAGES[1]]


def test_an_unknown_code_without_etx_gives_up_after_128_bytes() -> None:
    decoder = DeviceFrameDecoder()
    decoder.feed(b"\x05\x31Z" + b"\x41" * 200)
    assert len(decoder._buffer) == 0
    assert decoder.counters.malformed == 1
    assert decoder.feed(FRAMES[1]) == [MESSAGES[1]]


def test_the_buffer_stays_bounded_while_waiting_for_etx() -> None:
    decoder = DeviceFrameDecoder()
    for _ in range(300):
        decoder.feed(b"\x05\x31Z\x41")
        assert len(decoder._buffer) <= enq.BUFFER_CAP + 4


def test_a_host_command_echoed_on_the_shoe_line_is_an_unknown_message() -> None:
    decoder = DeviceFrameDecoder()
    assert decoder.feed(encode_host_frame(VendorCommand("LK", "02")) + FRAMES[1]) == [MESSAGES[1]]
    assert decoder.counters.unknown_message == 1


@pytest.mark.parametrize(
    "bad",
    [
        b"\x02OP",  # incomplete, then a real frame
        b"\x02OPLK02\x03\x31\x43",  # BCC mismatch
        b"\x02OPLK02\x03\x31b",  # BCC not uppercase hex
        b"\x02OX",  # not the layout
        b"\x02OPLK02\x04",  # no ETX where it belongs
    ],
)
def test_a_bad_command_frame_costs_only_itself(bad: bytes) -> None:
    good = encode_host_frame(VendorCommand("GP", "01"))
    for chunks in ([bad + good], one_byte_at_a_time(bad + good)):
        decoder = HostFrameDecoder()
        assert feed_chunks(decoder, chunks) == [VendorCommand(name="GP", argument="01")]


def test_the_shoe_side_skips_everything_but_commands() -> None:
    decoder = HostFrameDecoder()
    assert decoder.feed(STREAM + encode_host_frame(VendorCommand("LK", "01"))) == [
        VendorCommand("LK", "01")
    ]
    assert decoder.counters.garbage_bytes == len(STREAM)


# ---------------------------------------------------------------- bit flips


def _flips(frame: bytes) -> list[bytes]:
    return [
        bytes(b ^ (1 << bit) if i == index else b for i, b in enumerate(frame))
        for index in range(len(frame))
        for bit in range(8)
    ]


def test_the_example_frames_hold_no_start_byte_after_their_first() -> None:
    # What the bit-flip guarantee below is conditioned on (docs/protocol.md §2.4).
    for frame in FRAMES:
        assert not set(frame[1:]) & enq.SHOE_START_BYTES, frame.hex(" ")


@pytest.mark.parametrize("index", range(len(FRAMES)))
def test_every_single_bit_flip_drops_the_frame_and_spares_its_neighbours(index: int) -> None:
    before, after = card_frame(0x20, "Q", "S"), card_frame(0x21, "2", "H")
    for flipped in _flips(FRAMES[index]):
        events = DeviceFrameDecoder().feed(before + flipped + after)
        # The one thing allowed through: a flip that turns a byte into ACK or NAK (ENQ 05
        # flipped in bit 4 is NAK 15) is read as one when the hunt passes over it.
        shoe_events = [e for e in events if not isinstance(e, CommandAccepted | CommandRejected)]
        assert shoe_events == [card(0x20, "Q", "S"), card(0x21, "2", "H")], flipped.hex(" ")


def test_what_can_slip_through_a_flip_creating_an_ack_byte() -> None:
    # Documented limitation: BCC digit 'F' (0x46) flipped in bit 6 is ACK (0x06). The frame
    # is dropped, but the hunt that resumes inside it finds an ACK: a spurious
    # CommandAccepted, never a card.
    frame = next(f for f in (card_frame(s) for s in range(0x40, 0x80)) if f[-1] == ord("F"))
    flipped = frame[:-1] + b"\x06"
    assert DeviceFrameDecoder().feed(flipped) == [CommandAccepted()]


def test_what_can_slip_through_noise_that_checks_out_over_a_frame() -> None:
    # Documented limitation: four noise bytes 05 X 4D Z with X ^ Z == 0x48 open an 'M'
    # candidate whose six DATA bytes end exactly at the card frame's ETX, and whose BCC
    # matches. The card is lost (not replaced by a wrong card).
    noise = bytes([0x05, 0x00, 0x4D, 0x48])
    events = DeviceFrameDecoder().feed(noise + FRAMES[1])
    assert events == [VendorMessage(code="M", data=bytes([0x48]) + FRAMES[1][:5], seq=0x00)]


# ---------------------------------------------------------------- encoder errors


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: encode_device_frame(Standby()), "seq"),
        (lambda: encode_device_frame(Standby(), seq=256), "seq"),
        (lambda: encode_device_frame(card(3), seq=4), "seq"),
        (lambda: encode_device_frame(card(300)), "seq"),
        (lambda: encode_device_frame(CardDrawn(rank="0", suit="S", seq=1)), "rank"),  # type: ignore[arg-type]  # on purpose
        (lambda: encode_device_frame(FaultSet(kind="jam"), seq=1), "kind"),
        (lambda: encode_device_frame(FaultSet(kind="other", code=64), seq=1), "code"),
        (lambda: encode_device_frame(VendorMessage(code="Z", data=b""), seq=1), "code"),
        (lambda: encode_device_frame(VendorMessage(code="GG", data=b""), seq=1), "code"),
        (lambda: encode_device_frame(VendorMessage(code="M", data=b"1"), seq=1), "data"),
        (lambda: encode_device_frame(CommandRejected(0x05)), "code"),
        (lambda: encode_device_frame(CommandRejected(0x15)), "code"),
        (lambda: encode_device_frame(CommandRejected(0x02, name="busy")), "name"),
        (lambda: encode_device_frame(FaultSet("other", 1, name="jam"), seq=1), "name"),
        (lambda: encode_device_frame(FaultSet("other", 9, name="jam"), seq=1), "name"),
        (lambda: encode_device_frame(CommandRejected(256)), "code"),
        (lambda: encode_host_frame(VendorCommand("lk", "02")), "name"),
        (lambda: encode_host_frame(VendorCommand("L", "02")), "name"),
        (lambda: encode_host_frame(VendorCommand("LK", "2")), "argument"),
        (lambda: encode_host_frame(VendorCommand("LK", "0x")), "argument"),
        (
            lambda: encode_host_frame(VendorCommand("LK", "٠٢")),
            "argument",
        ),  # Arabic-Indic digits: not ASCII
    ],
)
def test_encoders_reject_what_the_protocol_cannot_carry(
    call: Callable[[], bytes], field: str
) -> None:
    with pytest.raises(EncodeError) as raised:
        call()
    assert raised.value.field == field


# ---------------------------------------------------------------- properties

# Noise that can never open a frame overlapping the next one (docs/protocol.md §2.4).
_quiet_noise = st.binary(max_size=40).map(lambda b: b.replace(b"\x05", b"").replace(b"\x02", b""))


def numbered(
    messages: list[DeviceMessage], seqs: list[int]
) -> tuple[list[DeviceMessage], list[bytes]]:
    sent = [with_seq(m, s) for m, s in zip(messages, seqs, strict=True)]
    return sent, [encode_device_frame(m, seq=s) for m, s in zip(sent, seqs, strict=True)]


@st.composite
def message_streams(draw: st.DrawFn, min_size: int = 0) -> list[DeviceMessage]:
    return draw(st.lists(enq_device_messages, min_size=min_size, max_size=10))


def any_seqs(count: int) -> st.SearchStrategy[list[int]]:
    """Any SEQs, repeats included: the decoder hands every frame up whatever its number."""
    return st.lists(st.integers(0, 255), min_size=count, max_size=count)


@PROPERTY_SETTINGS
@given(messages=message_streams(), data=st.data())
def test_round_trip_over_any_chunking(messages: list[DeviceMessage], data: st.DataObject) -> None:
    seqs = data.draw(any_seqs(len(messages)))
    sent, frames = numbered(messages, seqs)
    wire = b"".join(frames)
    cuts = data.draw(st.lists(st.integers(0, len(wire)), max_size=30))
    decoder = DeviceFrameDecoder()
    assert feed_chunks(decoder, split_at(wire, cuts)) == sent
    assert decoder.counters.frames_ok == len(sent)


@PROPERTY_SETTINGS
@given(
    messages=message_streams(min_size=1),
    noises=st.lists(_quiet_noise, min_size=11, max_size=11),
    data=st.data(),
)
def test_noise_without_enq_or_stx_between_frames_never_loses_a_frame(
    messages: list[DeviceMessage], noises: list[bytes], data: st.DataObject
) -> None:
    sent, frames = numbered(messages, data.draw(any_seqs(len(messages))))
    wire = noises[0] + b"".join(f + n for f, n in zip(frames, noises[1:], strict=False))
    cuts = data.draw(st.lists(st.integers(0, len(wire)), max_size=10))
    events: list[Event] = feed_chunks(DeviceFrameDecoder(), split_at(wire, cuts))
    assert is_subsequence(sent, events)
    assert [e for e in events if isinstance(e, CardDrawn)] == [
        e for e in sent if isinstance(e, CardDrawn)
    ]


@PROPERTY_SETTINGS
@given(messages=message_streams(min_size=1), noise=st.binary(max_size=200), data=st.data())
def test_arbitrary_noise_never_costs_a_frame_before_it(
    messages: list[DeviceMessage], noise: bytes, data: st.DataObject
) -> None:
    sent, frames = numbered(messages, data.draw(any_seqs(len(messages))))
    events = DeviceFrameDecoder().feed(b"".join(frames) + noise)
    assert events[: len(sent)] == sent
