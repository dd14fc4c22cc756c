"""The shoe2mqtt reference protocol, version 2: our own, documented in docs/protocol.md.

A vendor or an adapter board can implement it from that document alone; this module is the
host's implementation of both ends (the emulated shoe and the tests use the device side).

Wire format, in one line: FLAG, byte-stuffed(VERSION TYPE SEQ(2) LEN PAYLOAD CRC(2)), FLAG.
Every number that defines the protocol is in the table below and nowhere else.

Version 2 makes the link reliable: the device keeps every frame that changes the table until
the host acknowledges it, and sends it again until it is (docs/protocol.md §1.4). The
decoders judge no sequence number: a repeat must reach the receiver, which acknowledges it
again if it already has the frame, and only the receiver knows that (`drivers.receiver`).
"""

from __future__ import annotations

import binascii
import enum
from abc import abstractmethod
from typing import TYPE_CHECKING, ClassVar, Final, TypeAlias, assert_never

from drivers.codecs.base import Decoder, Drop, Rejected, malformed
from drivers.codecs.base import HostLink as ListeningHost
from drivers.codecs.card_byte import card_byte, card_of
from drivers.codecs.sequence import SequencePolicy, frame_seq
from drivers.errors import EncodeError
from drivers.events import (
    FAULT_KINDS,
    Acknowledge,
    CardDrawn,
    CardUnreadable,
    CutCardReached,
    DeviceIdentity,
    FaultCleared,
    FaultKind,
    FaultSet,
    Heartbeat,
    NewShoe,
    StatusRequest,
)

if TYPE_CHECKING:
    from drivers.events import Event, Rank, Suit

# ================================================================ the protocol, as a table
# Framing (RFC 1662 style asynchronous byte stuffing): FLAG never occurs inside a frame, so a
# receiver that lost its place is back in step at the very next FLAG byte.
FLAG: Final = 0x7E
ESCAPE: Final = 0x7D
ESCAPE_XOR: Final = 0x20  # an escaped byte is sent as ESCAPE, byte ^ ESCAPE_XOR

PROTOCOL_VERSION: Final = 0x02
HEADER_SIZE: Final = 5  # version, type, seq (2 bytes, big-endian), payload length
CRC_SIZE: Final = 2  # big-endian
MAX_PAYLOAD: Final = 255  # what the one-byte length field can say
MIN_BODY: Final = HEADER_SIZE + CRC_SIZE
MAX_BODY: Final = HEADER_SIZE + MAX_PAYLOAD + CRC_SIZE
MAX_STUFFED_BODY: Final = 2 * MAX_BODY  # every byte escaped

# CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, no reflection, no final XOR; check value
# 0x29B1 for b"123456789". binascii.crc_hqx computes exactly this when seeded with 0xFFFF.
CRC_INIT: Final = 0xFFFF

# 16-bit, wraps 65535 -> 0; every new numbered frame is the previous plus one, so a jump is
# a loss; the device keeps each until acknowledged, so an absent host loses nothing.
SEQUENCE: Final = SequencePolicy(modulus=1 << 16, reports_gaps=True, reliable=True)

# The link's duties (docs/protocol.md §1.4), in frames and seconds.
KEPT_FRAMES_MIN: Final = 256  # the device keeps at least this many unacknowledged frames
RESEND_AFTER: Final = 0.25  # the device resends its oldest unacknowledged frame after this
RESEND_AFTER_MAX: Final = 2.0  # ... doubling the wait for each further resend, up to this
HEARTBEAT_AFTER: Final = 1.0  # a device that sent nothing for this long sends a HEARTBEAT
# (A host repeats STATUS_REQUEST until DEVICE_IDENTITY answers: drivers.session.GREETING_REPEAT.)

HOST_TO_DEVICE: Final = 0x80  # bit 7 of the type byte: set on frames the host sends


class MessageType(enum.IntEnum):
    # device -> host
    DEVICE_IDENTITY = 0x01
    CARD_DRAWN = 0x02
    CARD_UNREADABLE = 0x03
    NEW_SHOE = 0x04
    CUT_CARD_REACHED = 0x05
    HEARTBEAT = 0x06
    FAULT_SET = 0x07
    FAULT_CLEARED = 0x08
    # host -> device
    ACKNOWLEDGE = 0x81
    STATUS_REQUEST = 0x82


# Card byte: the ENQ family's layout (drivers.codecs.card_byte), so an adapter board can
# pass that family's card byte through unchanged.
CARD_FLAG_BURNED: Final = 0x01  # card flags byte; the other bits are reserved and zero

FAULT_KIND_CODES: Final[dict[FaultKind, int]] = {
    "jam": 1,
    "cover_open": 2,
    "sensor": 3,
    "other": 4,
}

IDENTITY_FIELD_MAX: Final = 32  # bytes of printable ASCII per identity string
PRINTABLE_ASCII: Final = range(0x20, 0x7F)
POWER_UP_SIZE: Final = 4  # the identity's power-up number, big-endian, after the strings
# ================================================================ end of the table

FAULT_KIND_BY_CODE: Final[dict[int, FaultKind]] = {v: k for k, v in FAULT_KIND_CODES.items()}
assert set(FAULT_KIND_CODES) == set(FAULT_KINDS)

_FLAG_BYTE: Final = bytes([FLAG])
_ESCAPE_BYTE: Final = bytes([ESCAPE])
_ESCAPED_FLAG: Final = bytes([ESCAPE, FLAG ^ ESCAPE_XOR])
_ESCAPED_ESCAPE: Final = bytes([ESCAPE, ESCAPE ^ ESCAPE_XOR])

DeviceMessage: TypeAlias = (
    DeviceIdentity
    | CardDrawn
    | CardUnreadable
    | NewShoe
    | CutCardReached
    | Heartbeat
    | FaultSet
    | FaultCleared
)
HostMessage: TypeAlias = Acknowledge | StatusRequest


# ---------------------------------------------------------------- framing


def crc16(data: bytes) -> int:
    return binascii.crc_hqx(data, CRC_INIT)


def stuff(body: bytes) -> bytes:
    # ESCAPE first, or the escapes added for FLAG would be escaped again.
    return body.replace(_ESCAPE_BYTE, _ESCAPED_ESCAPE).replace(_FLAG_BYTE, _ESCAPED_FLAG)


def unstuff(stuffed: bytes) -> bytes | None:
    """The body inside the flags, or None when an escape is not one the sender can produce."""
    if ESCAPE not in stuffed:
        return stuffed
    first, *escaped = stuffed.split(_ESCAPE_BYTE)
    body = bytearray(first)
    for part in escaped:
        # Only FLAG and ESCAPE are ever escaped; anything else after ESCAPE is corruption.
        if not part or part[0] not in {FLAG ^ ESCAPE_XOR, ESCAPE ^ ESCAPE_XOR}:
            return None
        body.append(part[0] ^ ESCAPE_XOR)
        body += part[1:]
    return bytes(body)


def _frame(message_type: int, seq: int, payload: bytes) -> bytes:
    SEQUENCE.check(seq)
    if len(payload) > MAX_PAYLOAD:  # the callers' own limits keep this unreachable
        raise EncodeError("payload too long", field="payload", value=payload)
    body = bytes([PROTOCOL_VERSION, message_type]) + seq.to_bytes(2, "big")
    body += bytes([len(payload)]) + payload
    body += crc16(body).to_bytes(CRC_SIZE, "big")
    return _FLAG_BYTE + stuff(body) + _FLAG_BYTE


# ---------------------------------------------------------------- encoders


def encode_device_frame(message: DeviceMessage, *, seq: int | None = None) -> bytes:
    """One frame as the device sends it.

    Card messages carry their own `seq`; pass `seq` only for the others (or the same value).
    """
    seq = frame_seq(message, seq, SEQUENCE)
    message_type, payload = _device_payload(message)
    return _frame(message_type, seq, payload)


def encode_host_frame(message: HostMessage, *, seq: int) -> bytes:
    """One frame as the host sends it; `seq` is the host's own frame counter."""
    match message:
        case Acknowledge(acknowledged_seq=acked):
            payload = SEQUENCE.check(acked).to_bytes(2, "big")
            return _frame(MessageType.ACKNOWLEDGE, seq, payload)
        case StatusRequest():
            return _frame(MessageType.STATUS_REQUEST, seq, b"")
        case _:
            assert_never(message)


def _device_payload(message: DeviceMessage) -> tuple[MessageType, bytes]:
    match message:
        case DeviceIdentity():
            return MessageType.DEVICE_IDENTITY, _identity_payload(message)
        case CardDrawn(rank=rank, suit=suit, burned=burned, origin=origin):
            if origin != "dealt":
                raise EncodeError("only dealt cards exist here", field="origin", value=origin)
            card = bytes([card_byte(rank, suit), _card_flags(burned=burned)])
            return MessageType.CARD_DRAWN, card
        case CardUnreadable(burned=burned):
            return MessageType.CARD_UNREADABLE, bytes([_card_flags(burned=burned)])
        case FaultSet(kind=kind, code=code):
            return MessageType.FAULT_SET, _fault_payload(kind, code)
        case FaultCleared(kind=kind, code=code):
            return MessageType.FAULT_CLEARED, _fault_payload(kind, code)
        case NewShoe() | CutCardReached() | Heartbeat():
            return _EMPTY_DEVICE_MESSAGES[type(message)], b""
        case _:
            assert_never(message)


_EMPTY_DEVICE_MESSAGES: Final[dict[type[DeviceMessage], MessageType]] = {
    NewShoe: MessageType.NEW_SHOE,
    CutCardReached: MessageType.CUT_CARD_REACHED,
    Heartbeat: MessageType.HEARTBEAT,
}


def _identity_payload(identity: DeviceIdentity) -> bytes:
    payload = bytearray()
    fields = {
        "vendor": identity.vendor,
        "model": identity.model,
        "serial_number": identity.serial_number,
        "firmware": identity.firmware,
    }
    for field, text in fields.items():
        raw = text.encode("ascii") if text.isascii() else b""
        if not 1 <= len(raw) <= IDENTITY_FIELD_MAX or any(b not in PRINTABLE_ASCII for b in raw):
            raise EncodeError("must be 1-32 printable ASCII characters", field=field, value=text)
        payload += bytes([len(raw)]) + raw
    power_up = identity.power_up
    if power_up is None or not 0 <= power_up < 1 << (8 * POWER_UP_SIZE):
        raise EncodeError(
            f"an identity carries a power-up number of {POWER_UP_SIZE} bytes",
            field="power_up",
            value=power_up,
        )
    return bytes(payload) + power_up.to_bytes(POWER_UP_SIZE, "big")


def _card_flags(*, burned: bool) -> int:
    return CARD_FLAG_BURNED if burned else 0


def _fault_payload(kind: FaultKind, code: int) -> bytes:
    if kind not in FAULT_KIND_CODES:
        raise EncodeError("not a fault kind", field="kind", value=kind)
    if not 0 <= code <= 0xFF:
        raise EncodeError("fault code out of range 0..255", field="code", value=code)
    return bytes([FAULT_KIND_CODES[kind], code])


# ---------------------------------------------------------------- the host's part of the link


class HostLink(ListeningHost):
    """What a host says on the line (docs/protocol.md §1.4): STATUS_REQUEST whenever it opens
    the line, ACKNOWLEDGE for every numbered frame once it holds it durably. Its own frames
    are numbered too, from 0 per driver; a device never judges those numbers."""

    greets: ClassVar[bool] = True

    def __init__(self) -> None:
        self._seq = 0

    def greeting(self) -> bytes:
        return self._next(StatusRequest())

    def answers_greeting(self, event: Event) -> bool:
        return isinstance(event, DeviceIdentity)

    def acknowledgement(self, seq: int) -> bytes:
        return self._next(Acknowledge(acknowledged_seq=seq))

    def _next(self, message: HostMessage) -> bytes:
        frame = encode_host_frame(message, seq=self._seq)
        self._seq = SEQUENCE.successor(self._seq)
        return frame


# ---------------------------------------------------------------- decoders


class _ReferenceDecoder(Decoder):
    codec_name: ClassVar[str] = "reference"
    sequence: ClassVar[SequencePolicy | None] = SEQUENCE
    _direction: ClassVar[int]  # the HOST_TO_DEVICE bit of the frames this decoder accepts

    def __init__(self) -> None:
        super().__init__()
        self._pending = bytearray()  # bytes after the last FLAG
        self._scanned = 0  # how much of _pending is known to hold no FLAG
        # Until the first FLAG we may have joined mid-frame; after an over-long run we are
        # inside something that is not a frame. Either way: drop up to the next FLAG.
        self._discarding = True

    def feed(self, data: bytes) -> list[Event]:
        events: list[Event] = []
        pending = self._pending
        pending += data
        start = 0
        flag_at = pending.find(FLAG, self._scanned)
        while flag_at >= 0:
            self._on_delimited(bytes(pending[start:flag_at]), events)
            start = flag_at + 1
            flag_at = pending.find(FLAG, start)
        del pending[:start]
        if len(pending) > MAX_STUFFED_BODY:
            # No FLAG for longer than any frame: not a frame, and the buffer must stay bounded.
            self._skip_garbage(bytes(pending))
            pending.clear()
            self._discarding = True
        self._scanned = len(pending)
        return events

    def _on_delimited(self, stuffed: bytes, events: list[Event]) -> None:
        if self._discarding:
            self._discarding = False
            if stuffed:
                self._skip_garbage(stuffed)
        elif len(stuffed) < MIN_BODY or len(stuffed) > MAX_STUFFED_BODY:
            # Empty is inter-frame fill (back-to-back flags); a runt is line noise; over-long
            # counts the same whether it came in one chunk or tripped the buffer cap in feed.
            if stuffed:
                self._skip_garbage(stuffed)
        else:
            try:
                self._on_frame(stuffed, events)
            except Rejected as rejected:
                self._drop(rejected.reason, rejected.detail, stuffed)

    def _on_frame(self, stuffed: bytes, events: list[Event]) -> None:
        message_type, seq, payload = self._open(stuffed)
        events.append(self._message(message_type, seq, payload))
        self._counters.frames_ok += 1

    def _open(self, stuffed: bytes) -> tuple[int, int, bytes]:
        """Type, seq and payload of a frame that is intact, of this version and meant for us.

        The order of checks matters: nothing in a frame is trusted before its CRC.
        """
        body = unstuff(stuffed)
        if body is None:
            raise malformed("invalid escape sequence")
        if len(body) < MIN_BODY:
            raise malformed("shorter than a header and CRC")
        if crc16(body[:-CRC_SIZE]) != int.from_bytes(body[-CRC_SIZE:], "big"):
            raise Rejected(Drop.BAD_CHECKSUM, "CRC mismatch")
        version, message_type, seq_hi, seq_lo, length = body[:HEADER_SIZE]
        payload = body[HEADER_SIZE:-CRC_SIZE]
        if version != PROTOCOL_VERSION:
            raise Rejected(Drop.UNKNOWN_MESSAGE, f"protocol version {version}")
        if length != len(payload):
            raise malformed(f"length field {length}, payload {len(payload)}")
        if message_type & HOST_TO_DEVICE != self._direction:
            raise Rejected(Drop.UNKNOWN_MESSAGE, "frame from the other direction")
        return message_type, (seq_hi << 8) | seq_lo, payload

    @abstractmethod
    def _message(self, message_type: int, seq: int, payload: bytes) -> Event:
        """The event for an intact frame of this direction; raises Rejected otherwise."""


class DeviceFrameDecoder(_ReferenceDecoder):
    """Decodes what a device sends; the host runs this one."""

    _direction: ClassVar[int] = 0
    host_link: ClassVar[type[ListeningHost]] = HostLink

    def _message(self, message_type: int, seq: int, payload: bytes) -> Event:  # noqa: PLR0911 - a dispatch, one return per message type
        match message_type:
            case MessageType.DEVICE_IDENTITY:
                return _parse_identity(payload, next_seq=seq)
            case MessageType.HEARTBEAT:
                _expect_length(payload, 0)
                return Heartbeat(next_seq=seq)
            case MessageType.CARD_DRAWN:
                _expect_length(payload, 2)
                rank, suit = _parse_card_byte(payload[0])
                return CardDrawn(rank=rank, suit=suit, seq=seq, burned=_parse_flags(payload[1]))
            case MessageType.CARD_UNREADABLE:
                _expect_length(payload, 1)
                return CardUnreadable(seq=seq, burned=_parse_flags(payload[0]))
            case MessageType.FAULT_SET:
                return FaultSet(*_parse_fault(payload), seq=seq)
            case MessageType.FAULT_CLEARED:
                return FaultCleared(*_parse_fault(payload), seq=seq)
            case MessageType.NEW_SHOE:
                _expect_length(payload, 0)
                return NewShoe(seq=seq)
            case MessageType.CUT_CARD_REACHED:
                _expect_length(payload, 0)
                return CutCardReached(seq=seq)
            case _:
                raise Rejected(Drop.UNKNOWN_MESSAGE, f"message type 0x{message_type:02X}")


class HostFrameDecoder(_ReferenceDecoder):
    """Decodes what the host sends; a device (or the emulated shoe) runs this one."""

    _direction: ClassVar[int] = HOST_TO_DEVICE

    def _message(self, message_type: int, seq: int, payload: bytes) -> Event:  # noqa: ARG002 - no host message depends on its seq
        match message_type:
            case MessageType.ACKNOWLEDGE:
                _expect_length(payload, 2)
                return Acknowledge(acknowledged_seq=int.from_bytes(payload, "big"))
            case MessageType.STATUS_REQUEST:
                _expect_length(payload, 0)
                return StatusRequest()
            case _:
                raise Rejected(Drop.UNKNOWN_MESSAGE, f"message type 0x{message_type:02X}")


def _expect_length(payload: bytes, length: int) -> None:
    if len(payload) != length:
        raise malformed(f"payload of {len(payload)} bytes, expected {length}")


def _parse_card_byte(card: int) -> tuple[Rank, Suit]:
    rank_suit = card_of(card)
    if rank_suit is None:
        raise malformed(f"card byte 0x{card:02X}")
    return rank_suit


def _parse_flags(flags: int) -> bool:
    if flags & ~CARD_FLAG_BURNED:
        raise malformed(f"reserved card flag bits set: 0x{flags:02X}")
    return bool(flags & CARD_FLAG_BURNED)


def _parse_fault(payload: bytes) -> tuple[FaultKind, int]:
    _expect_length(payload, 2)
    kind = FAULT_KIND_BY_CODE.get(payload[0])
    if kind is None:
        raise malformed(f"fault kind 0x{payload[0]:02X}")
    return kind, payload[1]


def _parse_identity(payload: bytes, *, next_seq: int) -> DeviceIdentity:
    fields: list[str] = []
    offset = 0
    strings, power_up = payload[:-POWER_UP_SIZE], payload[-POWER_UP_SIZE:]
    if len(power_up) != POWER_UP_SIZE:
        raise malformed("identity payload ends early")
    payload = strings
    for _ in range(4):
        if offset >= len(payload):
            raise malformed("identity payload ends early")
        size = payload[offset]
        raw = payload[offset + 1 : offset + 1 + size]
        if not 1 <= size <= IDENTITY_FIELD_MAX or len(raw) != size:
            raise malformed(f"identity string of length {size}")
        if any(b not in PRINTABLE_ASCII for b in raw):
            raise malformed("identity string is not printable ASCII")
        fields.append(raw.decode("ascii"))
        offset += 1 + size
    if offset != len(payload):
        raise malformed("bytes between the identity strings and the power-up number")
    vendor, model, serial, firmware = fields
    return DeviceIdentity(
        vendor=vendor,
        model=model,
        serial_number=serial,
        firmware=firmware,
        power_up=int.from_bytes(power_up, "big"),
        next_seq=next_seq,
    )
