"""The ENQ/ETX/BCC "interrupt frame" family of baccarat-era smart shoes.

Known only from two public client implementations, never from a vendor: every constant below
is "as publicly described". They all live in the one table at the top so that a capture from
a real device can correct them without touching the logic.

    shoe -> host   ENQ SEQ CODE DATA... ETX BCC BCC     BCC: XOR of SEQ..ETX, 2 uppercase hex
                   ACK                                  the last command was accepted
                   NAK CODE                             the last command was refused
    host -> shoe   STX 'O' 'P' TYPE TYPE ARG ARG ETX BCC BCC

Decoding strategy (docs/protocol.md, "ENQ/ETX/BCC family", says what it guarantees): frames
are parsed by structure, using each event code's fixed data length, because a data byte may
legitimately equal ETX (target byte 0x03 is player card 3). Whenever a candidate frame fails,
the decoder backs off by one byte and hunts again, so a stray start byte in line noise costs
nothing but itself.
"""

from __future__ import annotations

import enum
import functools
import operator
import re
from abc import abstractmethod
from typing import TYPE_CHECKING, ClassVar, Final, TypeAlias, assert_never

from drivers.codecs.base import Decoder, Drop, Rejected, malformed
from drivers.codecs.base import HostLink as ListeningHost
from drivers.codecs.card_byte import card_byte, card_of
from drivers.codecs.sequence import SequencePolicy, frame_seq
from drivers.errors import EncodeError
from drivers.events import (
    CardDrawn,
    CardOrigin,
    CardUnreadable,
    CommandAccepted,
    CommandRejected,
    CommunicationStarted,
    CutCardReached,
    FaultCleared,
    FaultKind,
    FaultSet,
    LockChanged,
    Standby,
    VendorCommand,
    VendorMessage,
)

if TYPE_CHECKING:
    from drivers.events import Event

# ================================================================ the protocol, as a table
STX: Final = 0x02
ETX: Final = 0x03
ENQ: Final = 0x05
ACK: Final = 0x06
NAK: Final = 0x15
# A host hunts for any of these; a shoe (reading host commands) only for STX.
SHOE_START_BYTES: Final = frozenset({STX, ENQ, ACK, NAK})
HOST_START_BYTES: Final = frozenset({STX})
# The byte after NAK is its code, whatever it is, except these: a NAK before one of them is a
# stray NAK byte, and the start byte begins the next frame. STX is not among them, since 02
# is a public NAK code (BCC error): `15 02` is that NAK, and an echoed host command right
# after a bare NAK, dropped either way, only has its bytes counted as garbage.
NAK_NEVER_CODES: Final = frozenset({ENQ, ACK, NAK})

BUFFER_CAP: Final = 128  # bytes after a start byte with no ETX: it was not a frame
BCC_DIGITS: Final = b"0123456789ABCDEF"  # uppercase only, as described
# One byte, on every event frame. That the shoe counts up by one is not known, so a jump is
# never taken for a loss (no SequenceGap from this family); the receiver judges a repeated
# number by the frame's content (`drivers.receiver`).
SEQUENCE: Final = SequencePolicy(modulus=256, reports_gaps=False)


class EventCode(enum.IntEnum):
    """First DATA byte of a shoe -> host frame."""

    START = ord("S")  # start of communication
    STANDBY = ord("P")
    CARD = ord("D")  # card drawn in a game
    CARD_OUTSIDE_GAME = ord("d")  # drawn in lock, error or setting mode
    CARD_RETRANSMITTED = ord("R")
    CUT_CARD = ord("C")
    GAME_RESULT = ord("G")  # baccarat only: passed on as a VendorMessage
    ERROR_SET = ord("E")
    ERROR_CLEARED = ord("e")
    LOCK = ord("L")
    PRESET_CHANGED = ord("M")  # 2 ASCII address + 4 ASCII value: passed on as a VendorMessage


# DATA bytes after the event code. A code missing here is unknown: its frame is found by
# scanning for ETX (within BUFFER_CAP), checked, counted as an unknown message and dropped.
EVENT_DATA_LENGTHS: Final[dict[int, int]] = {
    EventCode.START: 0,
    EventCode.STANDBY: 0,
    EventCode.CARD: 2,
    EventCode.CARD_OUTSIDE_GAME: 2,
    EventCode.CARD_RETRANSMITTED: 2,
    EventCode.CUT_CARD: 0,
    EventCode.GAME_RESULT: 1,
    EventCode.ERROR_SET: 1,
    EventCode.ERROR_CLEARED: 1,
    EventCode.LOCK: 1,
    EventCode.PRESET_CHANGED: 6,
}
CARD_ORIGINS: Final[dict[int, CardOrigin]] = {
    EventCode.CARD: "dealt",
    EventCode.CARD_OUTSIDE_GAME: "outside_game",
    EventCode.CARD_RETRANSMITTED: "retransmission",
}
VENDOR_MESSAGE_CODES: Final = frozenset({EventCode.GAME_RESULT, EventCode.PRESET_CHANGED})

# Target byte (second DATA byte of a card): bits 6-4 target, bits 3-0 card index.
TARGET_SHIFT: Final = 4
TARGET_MASK: Final = 0x07
BURN_TARGETS: Final = frozenset({2})  # baccarat targets: 0 player, 1 banker, 2 burn, ...
ENCODED_TARGET_DEALT: Final = 0  # what our device-side encoder sends for a dealt card
ENCODED_TARGET_BURNED: Final = 2

# Card byte (third DATA byte): bits 6-4 suit, bits 3-0 rank, in `drivers.codecs.card_byte`.
# Not described in public: a card byte outside the table decodes as CardUnreadable, and this
# is what our emulator sends to simulate one.
UNREADABLE_CARD_BYTE: Final = 0x00

# Error byte of E / e: bit 6 set while in error mode, bits 5-0 the error code.
ERROR_MODE_BIT: Final = 0x40
ERROR_CODE_MASK: Final = 0x3F
# What the error codes mean, as one client's source names them (its table of system error
# descriptions); described in public, not confirmed by a vendor. The name rides on the
# fault (`FaultSet.name`); a code not here has none.
ERROR_NAMES: Final[dict[int, str]] = {
    1: "can not read",
    2: "overdraw",
    3: "mishandling of button",
    4: "reverse run at exit",
    5: "reverse run midway",
    6: "card code error",
    7: "time-out of drawing",
}
# Which error codes mean which of our fault kinds. None of the names above is a jam, an open
# cover or a sensor fault as a table needs to tell them apart, so every code is "other".
FAULT_KINDS_BY_ERROR_CODE: Final[dict[int, FaultKind]] = {}
# What a NAK's code means, from the same client's table of NAK descriptions (likewise not
# vendor-confirmed); the name rides on the rejection (`CommandRejected.name`).
NAK_NAMES: Final[dict[int, str]] = {
    0x01: "overrun, framing or parity error",
    0x02: "BCC error",
    0x03: "no ETX",
    0x11: "format or length error",
    0x12: "address error",
    0x13: "command error",
    0x14: "type error",
    0x21: "busy",
    0x22: "writing",
    0xFF: "other error",
}

LOCK_BIT: Final = 0x01  # of the L data byte

# Host -> shoe commands.
COMMAND_PREFIX: Final = b"OP"
COMMAND_LENGTH: Final = 10  # STX O P TYPE TYPE ARG ARG ETX BCC BCC
COMMAND_ETX_OFFSET: Final = 7
# The vendor's text and its own example disagree; the example (02 4F 50 4C 4B 30 32 03 ->
# 1B) only works with STX inside the BCC, so we follow the example.
COMMAND_BCC_INCLUDES_STX: Final = True
LOCK: Final = "LK"
LOCK_ON: Final = "02"
LOCK_OFF: Final = "01"
CLEAR_ERROR: Final = "EC"
CONFIRM_GAME_PROCESS: Final = "GP"
# ================================================================ end of the table

_ERROR_CODES_BY_FAULT_KIND: Final = {kind: code for code, kind in FAULT_KINDS_BY_ERROR_CODE.items()}
_SHOE_START: Final = re.compile(b"[" + re.escape(bytes(sorted(SHOE_START_BYTES))) + b"]")
_HOST_START: Final = re.compile(b"[" + re.escape(bytes(sorted(HOST_START_BYTES))) + b"]")

# What an event frame (ENQ SEQ CODE ...) carries.
_EventFrameMessage: TypeAlias = (
    CommunicationStarted
    | Standby
    | CardDrawn
    | CardUnreadable
    | CutCardReached
    | FaultSet
    | FaultCleared
    | LockChanged
    | VendorMessage
)
# ACK (CommandAccepted) and NAK (CommandRejected) carry no SEQ.
DeviceMessage: TypeAlias = _EventFrameMessage | CommandAccepted | CommandRejected
HostMessage: TypeAlias = VendorCommand


def bcc(data: bytes) -> int:
    """The block check character: XOR of every byte given."""
    return functools.reduce(operator.xor, data, 0)


def _bcc_text(value: int) -> bytes:
    return b"%02X" % value


def _parse_bcc_text(text: bytes) -> int | None:
    if len(text) != 2 or text[0] not in BCC_DIGITS or text[1] not in BCC_DIGITS:
        return None
    return int(text, 16)


def _check_bcc(frame: bytes, expected: int) -> None:
    """The frame's last two bytes must be `expected` as two uppercase hex digits."""
    check = _parse_bcc_text(frame[-2:])
    if check is None:
        raise malformed("BCC is not 2 uppercase hex digits")
    if check != expected:
        raise Rejected(Drop.BAD_CHECKSUM, "BCC mismatch")


# ---------------------------------------------------------------- encoders


def encode_device_frame(message: DeviceMessage, *, seq: int | None = None) -> bytes:
    """One shoe -> host frame, as a device (or our emulator) sends it.

    Card messages carry their own `seq`; pass `seq` only for the others (or the same value).
    ACK (`CommandAccepted`) and NAK (`CommandRejected`) carry no SEQ: pass none.
    """
    if isinstance(message, CommandAccepted | CommandRejected):
        if seq is not None:
            raise EncodeError("ACK and NAK carry no sequence number", field="seq", value=seq)
        return _reply_frame(message)
    seq = frame_seq(message, seq, SEQUENCE)
    code, data = _device_payload(message)
    body = bytes([seq, code]) + data + bytes([ETX])
    return bytes([ENQ]) + body + _bcc_text(bcc(body))


def encode_host_frame(message: HostMessage) -> bytes:
    """One host -> shoe command frame, e.g. `encode_host_frame(VendorCommand(LOCK, LOCK_ON))`.

    Commands carry no sequence number.
    """
    name, argument = message.name, message.argument
    if len(name) != 2 or not (name.isascii() and name.isalpha() and name.isupper()):
        raise EncodeError(
            "command name must be 2 uppercase ASCII letters", field="name", value=name
        )
    if len(argument) != 2 or not (argument.isascii() and argument.isdigit()):
        raise EncodeError(
            "command argument must be 2 ASCII digits", field="argument", value=argument
        )
    frame = bytes([STX]) + COMMAND_PREFIX + name.encode() + argument.encode() + bytes([ETX])
    return frame + _bcc_text(_command_bcc(frame))


def _reply_frame(message: CommandAccepted | CommandRejected) -> bytes:
    if isinstance(message, CommandAccepted):
        return bytes([ACK])
    code = message.code
    # A code equal to one of these would read as a bare NAK followed by a new frame.
    if not 0 <= code <= 0xFF or code in NAK_NEVER_CODES:
        raise EncodeError(
            "NAK code must be a byte other than ENQ, ACK or NAK", field="code", value=code
        )
    _check_name(message.name, NAK_NAMES.get(code))
    return bytes([NAK, code])


def _check_name(given: str | None, table: str | None) -> None:
    """A message's `name` is the table's for its code, never sent: it must be that or none."""
    if given is not None and given != table:
        raise EncodeError(
            f"the name of this code is {table!r}: give that or none", field="name", value=given
        )


def _command_bcc(frame_through_etx: bytes) -> int:
    return bcc(frame_through_etx if COMMAND_BCC_INCLUDES_STX else frame_through_etx[1:])


def _device_payload(message: _EventFrameMessage) -> tuple[int, bytes]:
    match message:
        case CardDrawn(rank=rank, suit=suit, burned=burned, origin=origin):
            code = next(c for c, o in CARD_ORIGINS.items() if o == origin)
            return code, bytes([_target_byte(burned=burned), card_byte(rank, suit)])
        case CardUnreadable(burned=burned):
            return EventCode.CARD, bytes([_target_byte(burned=burned), UNREADABLE_CARD_BYTE])
        case FaultSet() | FaultCleared():
            return _error_data(message)
        case LockChanged(locked=locked):
            return EventCode.LOCK, bytes([LOCK_BIT if locked else 0])
        case VendorMessage():
            return _vendor_message_data(message)
        case CommunicationStarted() | Standby() | CutCardReached():
            return _EMPTY_DEVICE_MESSAGES[type(message)], b""
        case _:
            assert_never(message)


_EMPTY_DEVICE_MESSAGES: Final[dict[type[_EventFrameMessage], EventCode]] = {
    CommunicationStarted: EventCode.START,
    Standby: EventCode.STANDBY,
    CutCardReached: EventCode.CUT_CARD,
}


def _vendor_message_data(message: VendorMessage) -> tuple[int, bytes]:
    code = ord(message.code) if len(message.code) == 1 else -1
    if code not in VENDOR_MESSAGE_CODES:
        raise EncodeError("not a vendor message code", field="code", value=message.code)
    if len(message.data) != EVENT_DATA_LENGTHS[code]:
        raise EncodeError("wrong data length for this code", field="data", value=message.data)
    return code, message.data


def _target_byte(*, burned: bool) -> int:
    return (ENCODED_TARGET_BURNED if burned else ENCODED_TARGET_DEALT) << TARGET_SHIFT


def _error_data(message: FaultSet | FaultCleared) -> tuple[int, bytes]:
    error = _error_code(message.kind, message.code)
    _check_name(message.name, ERROR_NAMES.get(error))
    if isinstance(message, FaultSet):
        return EventCode.ERROR_SET, bytes([ERROR_MODE_BIT | error])
    return EventCode.ERROR_CLEARED, bytes([error])


def _error_code(kind: FaultKind, code: int) -> int:
    if kind == "other":
        if not 0 <= code <= ERROR_CODE_MASK or code in FAULT_KINDS_BY_ERROR_CODE:
            raise EncodeError("not an unmapped error code 0..63", field="code", value=code)
        return code
    if kind not in _ERROR_CODES_BY_FAULT_KIND:
        raise EncodeError("no error code is known for this fault kind", field="kind", value=kind)
    return _ERROR_CODES_BY_FAULT_KIND[kind]


# ---------------------------------------------------------------- the host's part of the link


class HostLink(ListeningHost):
    """The family as described acknowledges no event frame and has no greeting: the host
    only listens, and sends a command only when configured to. So the shoe keeps nothing,
    and a frame the host did not read is gone (docs/protocol.md §2.2). A command is
    answered with ACK or NAK; one of those that answers no command is noise (§2.3)."""

    def awaits_reply(self, frame: bytes) -> bool:
        return frame[:1] == bytes([STX])


# ---------------------------------------------------------------- decoders


class _EnqDecoder(Decoder):
    """Hunts for a start byte, delimits the frame it may begin, then judges that frame.

    A frame that fails a check is dropped and the hunt resumes one byte after its start
    byte, not after its end (docs/protocol.md §2.3, rule 6): a start byte in line noise then
    costs only itself, and the real frame behind it is found.
    """

    codec_name: ClassVar[str] = "enq"
    _start: ClassVar[re.Pattern[bytes]]

    def __init__(self) -> None:
        super().__init__()
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[Event]:
        events: list[Event] = []
        buffer = self._buffer
        buffer += data
        pos = 0
        while pos < len(buffer):
            start = self._start.search(buffer, pos)
            if start is None:
                self._skip_garbage(bytes(buffer[pos:]))
                pos = len(buffer)
                break
            if start.start() > pos:
                self._skip_garbage(bytes(buffer[pos : start.start()]))
            pos = start.start()
            end = self._frame_end(buffer, pos)
            if end is None:  # not all of it is here yet
                break
            frame = bytes(buffer[pos:end])
            try:
                self._on_frame(frame, events)
            except Rejected as rejected:
                self._drop(rejected.reason, rejected.detail, frame)
                end = pos + 1
            pos = end
        del buffer[:pos]
        return events

    @abstractmethod
    def _frame_end(self, buffer: bytearray, pos: int) -> int | None:
        """Where the frame starting at `pos` ends, or None until enough bytes are here.

        It ends early, before all its bytes arrived, when the bytes present already
        contradict its layout: it is judged, and rejected, at once.
        """

    @abstractmethod
    def _on_frame(self, frame: bytes, events: list[Event]) -> None:
        """Judge one delimited frame: append its event, or raise `Rejected`."""


class DeviceFrameDecoder(_EnqDecoder):
    """Decodes what the shoe sends (events, ACK, NAK); the host runs this one."""

    sequence: ClassVar[SequencePolicy | None] = SEQUENCE
    host_link: ClassVar[type[ListeningHost]] = HostLink
    _start: ClassVar[re.Pattern[bytes]] = _SHOE_START

    def _frame_end(self, buffer: bytearray, pos: int) -> int | None:
        start = buffer[pos]
        if start == ENQ:
            return _event_frame_end(buffer, pos)
        if start == ACK:
            return pos + 1
        if start == NAK:
            return pos + 2 if len(buffer) >= pos + 2 else None
        return _command_frame_end(buffer, pos)

    def _on_frame(self, frame: bytes, events: list[Event]) -> None:
        start = frame[0]
        if start == ENQ:
            self._on_event_frame(frame, events)
            return
        if start == STX:
            # A host command on the shoe's line (an echo): checked, then skipped whole.
            _parse_command(frame)
            self._drop(Drop.UNKNOWN_MESSAGE, "host command on the shoe's line", frame)
            return
        if start == ACK:
            events.append(CommandAccepted())
        elif frame[1] in NAK_NEVER_CODES:
            # More likely a stray NAK byte before a real frame than a code that would make
            # the NAK unreadable; never let it swallow the frame's start byte.
            raise malformed("bare NAK")
        else:
            code = frame[1]
            events.append(CommandRejected(code=code, name=NAK_NAMES.get(code)))
        self._counters.frames_ok += 1

    def _on_event_frame(self, frame: bytes, events: list[Event]) -> None:
        code = frame[2]
        data_length = EVENT_DATA_LENGTHS.get(code)
        if data_length is None:
            if frame[-3] != ETX:
                raise malformed(f"no ETX in {BUFFER_CAP} bytes")
        elif len(frame) != 3 + data_length + 3:
            raise malformed(f"no ETX after {chr(code)!r} data")
        _check_bcc(frame, bcc(frame[1:-2]))
        if data_length is None:
            # Its length was a guess (the first ETX), so this may be noise that happened to
            # check out, lying over a real frame: back off rather than skip it whole.
            raise Rejected(Drop.UNKNOWN_MESSAGE, f"event code 0x{code:02X}")
        # Every intact frame goes up, a repeat too: the receiver judges it (by its number and
        # its content), since only the receiver knows what it holds.
        events.append(_device_message(code, frame[1], frame[3:-3]))
        self._counters.frames_ok += 1


class HostFrameDecoder(_EnqDecoder):
    """Decodes what the host sends (commands); a shoe, or our emulator, runs this one."""

    _start: ClassVar[re.Pattern[bytes]] = _HOST_START

    def _frame_end(self, buffer: bytearray, pos: int) -> int | None:
        return _command_frame_end(buffer, pos)

    def _on_frame(self, frame: bytes, events: list[Event]) -> None:
        events.append(_parse_command(frame))
        self._counters.frames_ok += 1


def _event_frame_end(buffer: bytearray, pos: int) -> int | None:
    """ENQ SEQ CODE DATA... ETX BCC BCC: a known code fixes where ETX is; for an unknown
    one, the first ETX within BUFFER_CAP bytes is taken (DATA may hold 03 for a known one)."""
    if len(buffer) < pos + 3:
        return None
    data_length = EVENT_DATA_LENGTHS.get(buffer[pos + 2])
    if data_length is not None:
        etx_at = pos + 3 + data_length
        if len(buffer) <= etx_at:
            return None
        if buffer[etx_at] != ETX:
            return etx_at + 1
    else:
        etx_at = buffer.find(ETX, pos + 3, pos + BUFFER_CAP)
        if etx_at < 0:
            return pos + BUFFER_CAP if len(buffer) - pos >= BUFFER_CAP else None
    end = etx_at + 3  # ETX and two BCC digits
    return end if len(buffer) >= end else None


def _command_frame_end(buffer: bytearray, pos: int) -> int | None:
    present = bytes(buffer[pos : pos + COMMAND_LENGTH])
    if not _command_layout_so_far(present):
        return pos + len(present)
    return pos + COMMAND_LENGTH if len(present) == COMMAND_LENGTH else None


def _command_layout_so_far(frame: bytes) -> bool:
    """Whether the bytes present fit STX 'O' 'P' TYPE TYPE ARG ARG ETX, so far."""
    prefix_end = 1 + len(COMMAND_PREFIX)
    return COMMAND_PREFIX.startswith(frame[1:prefix_end]) and (
        len(frame) <= COMMAND_ETX_OFFSET or frame[COMMAND_ETX_OFFSET] == ETX
    )


def _parse_command(frame: bytes) -> VendorCommand:
    if len(frame) != COMMAND_LENGTH or not _command_layout_so_far(frame):
        raise malformed("not a command frame layout")
    _check_bcc(frame, _command_bcc(frame[:-2]))
    prefix_end = 1 + len(COMMAND_PREFIX)
    name = frame[prefix_end : prefix_end + 2].decode("latin-1")
    argument = frame[prefix_end + 2 : COMMAND_ETX_OFFSET].decode("latin-1")
    return VendorCommand(name=name, argument=argument)


def _device_message(code: int, seq: int, data: bytes) -> Event:  # noqa: PLR0911 - one return per event code reads best
    """The event for a checked frame of a known code; `data` has that code's length."""
    match code:
        case EventCode.CARD | EventCode.CARD_OUTSIDE_GAME | EventCode.CARD_RETRANSMITTED:
            target, card = data
            burned = (target >> TARGET_SHIFT) & TARGET_MASK in BURN_TARGETS
            rank_suit = card_of(card)
            if rank_suit is None:
                return CardUnreadable(seq=seq, burned=burned)
            rank, suit = rank_suit
            return CardDrawn(
                rank=rank, suit=suit, seq=seq, burned=burned, origin=CARD_ORIGINS[code]
            )
        case EventCode.ERROR_SET | EventCode.ERROR_CLEARED:
            error = data[0] & ERROR_CODE_MASK
            kind = FAULT_KINDS_BY_ERROR_CODE.get(error, "other")
            fault = FaultSet if code == EventCode.ERROR_SET else FaultCleared
            return fault(kind=kind, code=error, seq=seq, name=ERROR_NAMES.get(error))
        case EventCode.LOCK:
            return LockChanged(locked=bool(data[0] & LOCK_BIT), seq=seq)
        case EventCode.START:
            return CommunicationStarted(seq=seq)
        case EventCode.STANDBY:
            return Standby(seq=seq)
        case EventCode.CUT_CARD:
            return CutCardReached(seq=seq)
        case _:  # GAME_RESULT, PRESET_CHANGED: the only codes left in EVENT_DATA_LENGTHS
            return VendorMessage(code=chr(code), data=data, seq=seq)
