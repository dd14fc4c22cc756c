"""One frame of every message each codec's shoe sends, as the codec tests share them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from drivers.codecs import enq, reference
from drivers.events import (
    CardDrawn,
    CardUnreadable,
    CommunicationStarted,
    CutCardReached,
    DeviceIdentity,
    FaultCleared,
    FaultSet,
    Heartbeat,
    LockChanged,
    NewShoe,
    Standby,
    VendorMessage,
    frame_number,
)
from tests.drivers.helpers import with_seq

if TYPE_CHECKING:
    from drivers.codecs.base import Decoder
    from drivers.events import Event

_REFERENCE: list[reference.DeviceMessage] = [
    DeviceIdentity(
        vendor="Acme", model="Shoe-1", serial_number="SN0001", firmware="1.2.3", power_up=7
    ),
    CardDrawn(rank="10", suit="S", seq=1),
    CardDrawn(rank="A", suit="H", seq=2, burned=True),
    CardUnreadable(seq=3, burned=True),
    NewShoe(),
    CutCardReached(),
    Heartbeat(),
    FaultSet(kind="cover_open"),
    FaultCleared(kind="cover_open"),
    FaultSet(kind="other", code=255),
    CardDrawn(rank="K", suit="C", seq=10),
]
REFERENCE_MESSAGES = [with_seq(m, i) for i, m in enumerate(_REFERENCE)]
REFERENCE_FRAMES = [reference.encode_device_frame(m) for m in REFERENCE_MESSAGES]

# SEQ values chosen so that no SEQ or DATA byte equals a start byte (see test_bit_flips_*).
_ENQ: list[enq.DeviceMessage] = [
    CommunicationStarted(),
    CardDrawn(rank="10", suit="S", seq=0x31),
    CardDrawn(rank="A", suit="H", seq=0x32, burned=True),
    CardDrawn(rank="Q", suit="D", seq=0x33, origin="outside_game"),
    CardDrawn(rank="2", suit="C", seq=0x34, origin="retransmission"),
    CardUnreadable(seq=0x35),
    CutCardReached(),
    FaultSet(kind="other", code=9),
    FaultCleared(kind="other", code=9),
    LockChanged(locked=True),
    LockChanged(locked=False),
    Standby(),
    VendorMessage(code="G", data=b"\x01"),
    VendorMessage(code="M", data=b"010064"),
]
ENQ_MESSAGES = [with_seq(m, 0x30 + i) for i, m in enumerate(_ENQ)]
ENQ_FRAMES = [
    enq.encode_device_frame(m, seq=None if frame_number(m) is not None else 0x30 + i)
    for i, m in enumerate(ENQ_MESSAGES)
]

#: (the host-side decoder, its example frames, what they decode to), per codec.
EXAMPLES: list[tuple[type[Decoder], list[bytes], list[Event]]] = [
    (reference.DeviceFrameDecoder, REFERENCE_FRAMES, list(REFERENCE_MESSAGES)),
    (enq.DeviceFrameDecoder, ENQ_FRAMES, list(ENQ_MESSAGES)),
]
