"""The frames a device keeps until the host acknowledges them: the reference protocol's
reliable link, seen from the device (docs/protocol.md §1.4). Sans-I/O: no clock, no line.

The device numbers every frame that changes the table and keeps it here, oldest first, in a
bounded buffer. It sends only the oldest (stop and wait): the next goes out when the host
acknowledges the one before, so the frame awaiting an acknowledgement is always the oldest,
and the host never sees one out of order. When the buffer is full, a new frame is numbered
and discarded: the frames kept are the ones the host is missing first, every one of them
certain, and the host sees the loss as a jump in the numbers after them.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class KeptFrame:
    seq: int
    frame: bytes  # the frame as first encoded: every resend is the same bytes


class KeptFrames:
    """A bounded, ordered store of unacknowledged frames."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._frames: collections.deque[KeptFrame] = collections.deque()

    def __len__(self) -> int:
        return len(self._frames)

    @property
    def oldest(self) -> KeptFrame | None:
        return self._frames[0] if self._frames else None

    def keep(self, seq: int, frame: bytes) -> bool:
        """Keep frame `seq` after the others; False when the buffer is full (discarded)."""
        if len(self._frames) >= self.capacity:
            return False
        self._frames.append(KeptFrame(seq, frame))
        return True

    def acknowledge(self, seq: int) -> int:
        """The host holds frame `seq` and every one before it: release them; returns how many.

        An acknowledgement that names no kept frame (a stale one, repeated after a resend)
        releases nothing.
        """
        kept = [frame.seq for frame in self._frames]
        if seq not in kept:
            return 0
        released = kept.index(seq) + 1
        for _ in range(released):
            self._frames.popleft()
        return released

    def next_seq(self, unassigned: int) -> int:
        """What a status frame says comes next: the oldest kept frame's number, or when
        nothing is kept, `unassigned`, the number the next new frame will get."""
        oldest = self.oldest
        return unassigned if oldest is None else oldest.seq
