"""The device side of each protocol: how the emulated shoe puts a message on the wire.

A personality knows its codec's encoder and decoder, its sequence numbers, where its check
value is (to corrupt it on purpose) and how it answers the host. It holds no state of the
shoe: `ShoeEmulator` passes in what it needs.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Final, Literal, TypeAlias

from drivers.codecs import enq, reference
from drivers.emulator.errors import EmulatorError
from drivers.events import (
    CommandAccepted,
    CommandRejected,
    CommunicationStarted,
    DeviceIdentity,
    FaultCleared,
    FaultSet,
    Heartbeat,
    LockChanged,
    NewShoe,
    StatusRequest,
    VendorCommand,
)

if TYPE_CHECKING:
    from drivers.codecs.base import Decoder
    from drivers.codecs.sequence import SequencePolicy
    from drivers.events import Event

ProtocolName: TypeAlias = Literal["reference", "enq"]
PROTOCOLS: Final[tuple[ProtocolName, ...]] = ("reference", "enq")

# Everything the emulator ever frames: the reference protocol's messages and the ENQ
# family's start and lock frames; a personality says None for what its protocol lacks.
DeviceMessage: TypeAlias = reference.DeviceMessage | CommunicationStarted | LockChanged


@dataclass(frozen=True, slots=True)
class DeviceState:
    """What a personality may consult when answering the host."""

    identity: DeviceIdentity
    active_faults: tuple[FaultSet, ...]
    locked: bool


@dataclass(slots=True)
class Answer:
    """A personality's answer to a host command: raw bytes first, then framed messages."""

    raw: bytes = b""
    messages: list[DeviceMessage] = field(default_factory=list)
    locked: bool | None = None  # the new lock state, when the command changed it
    clear_faults: bool = False  # the command cleared every active fault
    resend_kept: bool = False  # a host (re)appeared: send it the oldest kept frame now


class Personality(ABC):
    name: ClassVar[ProtocolName]
    sequence: ClassVar[SequencePolicy]  # the codec's: how the device numbers its frames
    #: Bytes line noise is drawn from: none that starts a frame, so a burst between frames
    #: is skipped by a correct decoder and costs no frame (hostile noise is the fuzzer's job).
    noise_alphabet: ClassVar[bytes]

    @abstractmethod
    def encode(self, message: DeviceMessage, seq: int) -> bytes | None:
        """The frame for `message`, or None when this protocol has no way to say it."""

    @abstractmethod
    def corrupt_checksum(self, frame: bytes, bit: int) -> bytes:
        """`frame` with bit `bit` of its check value flipped; the framing stays intact."""

    @property
    @abstractmethod
    def checksum_bits(self) -> int: ...

    @abstractmethod
    def power_up(self, identity: DeviceIdentity) -> list[DeviceMessage]:
        """What the device says first after power-up or when a host opens the line."""

    @abstractmethod
    def host_decoder(self) -> Decoder:
        """A decoder for what the host sends to the device."""

    @abstractmethod
    def answer(self, command: Event, state: DeviceState) -> Answer:
        """How the device reacts to one decoded host command."""

    def check_fault(self, fault: FaultSet | FaultCleared) -> None:  # noqa: B027 - optional hook
        """Raise `EmulatorError` for a fault this protocol cannot report."""

    def card_origin_while(self, *, locked: bool, faulted: bool) -> Literal["dealt", "outside_game"]:  # noqa: ARG002 - only some protocols tell cards apart
        return "dealt"


def _all_bytes_except(*excluded: int) -> bytes:
    return bytes(b for b in range(256) if b not in excluded)


class ReferencePersonality(Personality):
    name: ClassVar[ProtocolName] = "reference"
    sequence: ClassVar[SequencePolicy] = reference.SEQUENCE
    noise_alphabet: ClassVar[bytes] = _all_bytes_except(reference.FLAG)

    def encode(self, message: DeviceMessage, seq: int) -> bytes | None:
        if isinstance(message, CommunicationStarted | LockChanged):
            return None
        return reference.encode_device_frame(message, seq=seq)

    @property
    def checksum_bits(self) -> int:
        return 8 * reference.CRC_SIZE

    def corrupt_checksum(self, frame: bytes, bit: int) -> bytes:
        # Flip the bit in the unstuffed body and stuff again, so the flip can never turn a
        # byte into FLAG or ESC: the frame stays a frame and fails only its CRC.
        body = reference.unstuff(frame[1:-1])
        assert body is not None, "our own encoder stuffs correctly"
        crc = int.from_bytes(body[-reference.CRC_SIZE :], "big") ^ (1 << bit)
        flipped = body[: -reference.CRC_SIZE] + crc.to_bytes(reference.CRC_SIZE, "big")
        return bytes([reference.FLAG]) + reference.stuff(flipped) + bytes([reference.FLAG])

    def power_up(self, identity: DeviceIdentity) -> list[DeviceMessage]:
        return [identity]

    def host_decoder(self) -> Decoder:
        return reference.HostFrameDecoder()

    def answer(self, command: Event, state: DeviceState) -> Answer:
        if isinstance(command, StatusRequest):
            # docs/protocol.md §1.5: who it is (and which frame comes next), then what it
            # kept for the host, from the oldest; faults it reported are among those frames.
            return Answer(messages=[state.identity], resend_kept=True)
        return Answer()  # the core handles Acknowledge: it releases kept frames


# What our emulated ENQ shoe answers to a command it does not know: NAK "command error", as
# one client names the code (docs/protocol.md §2.2).
ENQ_NAK_UNKNOWN_COMMAND: Final = 0x13


class EnqPersonality(Personality):
    """The ENQ/ETX/BCC family. It has no identity, heartbeat or new-shoe frame in public
    descriptions, so the emulated shoe sends nothing for those; only numbered errors exist.
    """

    name: ClassVar[ProtocolName] = "enq"
    sequence: ClassVar[SequencePolicy] = enq.SEQUENCE
    noise_alphabet: ClassVar[bytes] = _all_bytes_except(*enq.SHOE_START_BYTES)

    def encode(self, message: DeviceMessage, seq: int) -> bytes | None:
        if isinstance(message, DeviceIdentity | NewShoe | Heartbeat):
            return None
        return enq.encode_device_frame(message, seq=seq)

    @property
    def checksum_bits(self) -> int:
        return 8

    def corrupt_checksum(self, frame: bytes, bit: int) -> bytes:
        # Flip a bit of the BCC's value, not of its text: the digits stay uppercase hex, so
        # the host counts a checksum mismatch rather than a malformed frame.
        value = int(frame[-2:], 16) ^ (1 << bit)
        return frame[:-2] + b"%02X" % value

    def power_up(self, identity: DeviceIdentity) -> list[DeviceMessage]:  # noqa: ARG002 - no identity frame in this family
        return [CommunicationStarted()]

    def host_decoder(self) -> Decoder:
        return enq.HostFrameDecoder()

    def answer(self, command: Event, state: DeviceState) -> Answer:
        if not isinstance(command, VendorCommand):
            return Answer()
        ack = enq.encode_device_frame(CommandAccepted())
        match command.name, command.argument:
            case enq.LOCK, (enq.LOCK_ON | enq.LOCK_OFF) as argument:
                locked = argument == enq.LOCK_ON
                return Answer(raw=ack, messages=[LockChanged(locked=locked)], locked=locked)
            case enq.CLEAR_ERROR, _:
                cleared: list[DeviceMessage] = [
                    FaultCleared(kind=fault.kind, code=fault.code) for fault in state.active_faults
                ]
                return Answer(raw=ack, messages=cleared, clear_faults=True)
            case enq.CONFIRM_GAME_PROCESS, _:
                return Answer(raw=ack)
            case _:
                code = ENQ_NAK_UNKNOWN_COMMAND
                rejected = CommandRejected(code=code, name=enq.NAK_NAMES[code])
                return Answer(raw=enq.encode_device_frame(rejected))

    def check_fault(self, fault: FaultSet | FaultCleared) -> None:
        if fault.kind != "other" or not 0 <= fault.code <= enq.ERROR_CODE_MASK:
            raise EmulatorError(
                "the enq family only has numbered errors: use kind 'other' with a code 0-63",
                field="fault",
                value=fault,
            )

    def card_origin_while(self, *, locked: bool, faulted: bool) -> Literal["dealt", "outside_game"]:
        # `d`: a card drawn in lock or error mode, as the family describes it.
        return "outside_game" if locked or faulted else "dealt"


def personality(name: ProtocolName) -> Personality:
    if name == "reference":
        return ReferencePersonality()
    if name == "enq":
        return EnqPersonality()
    raise EmulatorError(
        f"not an emulated protocol; choose from {', '.join(PROTOCOLS)}",
        field="protocol",
        value=name,
    )
