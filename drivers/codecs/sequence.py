"""Frame sequence numbers: how a codec counts its frames, and what a jump in the count means.

A codec states its numbering once, as a `SequencePolicy`: the encoder checks the numbers it
is given against it, and whoever receives the frames judges them by it (`judge`): the
daemon's table against the last number its journal holds, `listen` against the last it
printed. The judgement is the receiver's, not the decoder's, because only the receiver knows
what it has made durable, and on a reliable link that is what it acknowledges (decision D3).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from drivers.errors import EncodeError
from drivers.events import NUMBERED_EVENTS, DeviceIdentity, Heartbeat


@dataclass(frozen=True, slots=True)
class SequencePolicy:
    """How a codec numbers its frames."""

    modulus: int  # numbers run 0 .. modulus - 1, then wrap to 0
    #: The sender gives every new frame the previous number plus one, so any other jump
    #: means frames were lost. False where that is not known (the ENQ family): then only a
    #: repeated number means something (a repeat, or a conflict when the content differs:
    #: `drivers.receiver`), and a jump is never a gap.
    reports_gaps: bool
    #: The device keeps every numbered frame until the host acknowledges it and sends it
    #: again to a host that (re)appears, so an absent host loses nothing (the reference
    #: protocol, docs/protocol.md §1.4). False where the device keeps nothing (ENQ).
    reliable: bool = False

    def successor(self, seq: int) -> int:
        return (seq + 1) % self.modulus

    def predecessor(self, seq: int) -> int:
        return (seq - 1) % self.modulus

    def is_gap(self, last: int, seq: int) -> bool:
        """Whether `seq` coming after `last` means frames went missing in between."""
        return self.reports_gaps and seq not in {last, self.successor(last)}

    def judge(self, last: int | None, seq: int) -> SequenceVerdict:
        """What frame `seq` is to a receiver whose latest frame was `last` (None: none)."""
        if last is None:
            return SequenceVerdict.FIRST
        if seq == last:
            return SequenceVerdict.DUPLICATE
        if self.is_gap(last, seq):
            return SequenceVerdict.GAP
        return SequenceVerdict.NEXT

    def check(self, seq: int) -> int:
        """`seq` if a frame can carry it; raises `EncodeError` otherwise."""
        if not 0 <= seq < self.modulus:
            raise EncodeError(
                f"sequence number out of range 0..{self.modulus - 1}", field="seq", value=seq
            )
        return seq


def frame_seq(message: object, seq: int | None, policy: SequencePolicy) -> int:
    """The sequence number of the frame an encoder is asked for, checked.

    A message that carries its own number (a card's `seq`, a status message's `next_seq`)
    is framed with it; the caller passes `seq` only for a message that carries none, or
    the message's own value again.
    """
    own: int | None = None
    if isinstance(message, NUMBERED_EVENTS):
        own = message.seq
    elif isinstance(message, DeviceIdentity | Heartbeat):
        own = message.next_seq
    if own is not None:
        if seq is not None and seq != own:
            raise EncodeError("seq differs from the message's own number", field="seq", value=seq)
        seq = own
    elif seq is None:
        raise EncodeError("this message needs a frame sequence number", field="seq", value=seq)
    return policy.check(seq)


class SequenceVerdict(enum.Enum):
    FIRST = "first"  # nothing to compare with yet
    NEXT = "next"
    DUPLICATE = "duplicate"  # the number of the frame before: a repeat if the content is too
    GAP = "gap"
