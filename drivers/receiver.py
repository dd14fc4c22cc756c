"""The receiving end's judgement of what a shoe sends: new, a repeat, or after a loss.

Sans-I/O, and the same for every receiver: the daemon's table judges against what its journal
holds (and rebuilds a `FrameReceiver` by replaying it), `listen` against what it printed.
The judgement comes first, before anything is made durable (decision D3):

    intake = receiver.judge(event)
    if intake.gap:            make the gap durable first (the round must hear of it)
    if intake.take:           make the event durable, then receiver.record(event)
    if intake.acknowledge:    driver.acknowledge(intake.acknowledge)

A repeat of a frame already held is not taken, and acknowledged again: the device did not
hear the first acknowledgement, or the receiver restarted before it went out. A jump in the
numbers is judged by the shoe's own `SequencePolicy`: only where the shoe is known to count
up by one is it a loss.

The memory it keeps is what decision D3 asks of the journal, per table: the last numbered
frame held (`last`), and who the device is and since which power-up (`device`), so that a
first contact after a restart tells "the same device, going on" from "a gap" and from "the
device restarted": a `DeviceIdentity` that names another device or power-up is recorded as
such (`record` returns True) and its numbering taken as new.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from drivers.codecs.sequence import SequenceVerdict
from drivers.events import DeviceIdentity, Heartbeat, SequenceGap, frame_number

if TYPE_CHECKING:
    from drivers.codecs.sequence import SequencePolicy


@dataclass(frozen=True, slots=True)
class Intake:
    """What to do with one event from the shoe."""

    take: bool  # False: a repeat of a frame already held; apply nothing
    gap: SequenceGap | None = None  # frames went missing before this: record the gap first
    acknowledge: int | None = None  # the frame to acknowledge once taken (at once if not)


class FrameReceiver:
    """What one receiver holds of one shoe's numbering, and its judgement of a new event."""

    def __init__(self, policy: SequencePolicy | None) -> None:
        """`policy`: the shoe's numbering (`registry.sequence_policy`); None judges nothing."""
        self.policy = policy
        self.last: int | None = None  # the last numbered frame held (or skipped by a gap)
        self.device: DeviceIdentity | None = None  # as identified, without its `next_seq`

    @property
    def reliable(self) -> bool:
        """Whether the shoe keeps what the receiver has not acknowledged (nothing is lost
        while the receiver is away)."""
        return self.policy is not None and self.policy.reliable

    def judge(self, event: object) -> Intake:
        """Judge `event` against what is held; changes nothing."""
        policy = self.policy
        if policy is None:
            return Intake(take=True)
        seq = frame_number(event)
        if seq is None:
            return Intake(take=True, gap=self._status_gap(event))
        verdict = policy.judge(self.last, seq)
        if verdict is SequenceVerdict.DUPLICATE:
            return Intake(take=False, acknowledge=seq)
        gap = self._gap(self.last, seq) if verdict is SequenceVerdict.GAP else None
        return Intake(take=True, gap=gap, acknowledge=seq)

    def _status_gap(self, event: object) -> SequenceGap | None:
        """The frames a status event shows were lost: it says which frame comes next."""
        assert self.policy is not None
        if isinstance(event, Heartbeat) and event.next_seq is not None and self.last is not None:
            return self._gap_before(self.last, event.next_seq)
        if not isinstance(event, DeviceIdentity) or event.next_seq is None:
            return None
        known = self.device
        if known is not None and known != _without_next_seq(event):
            return None  # another device or power-up: a new count, judged as such (`record`)
        # On first contact everything since the device's power-up should still be to come.
        last = self.last if known is not None else self.policy.predecessor(0)
        return None if last is None else self._gap_before(last, event.next_seq)

    def record(self, event: object) -> bool:
        """`event` is now held (durable); True if it says the device restarted or changed."""
        policy = self.policy
        if policy is None:
            return False
        if isinstance(event, SequenceGap):
            self.last = policy.predecessor(event.got)
            return False
        seq = frame_number(event)
        if seq is not None:
            self.last = seq
            return False
        if not isinstance(event, DeviceIdentity):
            return False
        known, self.device = self.device, _without_next_seq(event)
        changed = known is not None and known != self.device
        if (known is None or changed) and event.next_seq is not None:
            # Its numbering starts here: the frame it sends next is the one to take next.
            self.last = policy.predecessor(event.next_seq)
        return changed

    def _gap(self, last: int | None, got: int) -> SequenceGap:
        assert self.policy is not None
        assert last is not None
        return SequenceGap(expected=self.policy.successor(last), got=got)

    def _gap_before(self, last: int, next_seq: int) -> SequenceGap | None:
        """A device whose next frame is `next_seq`: a gap unless it goes on from `last`
        (or still holds `last`, which the receiver acknowledges again when it comes)."""
        assert self.policy is not None
        return self._gap(last, next_seq) if self.policy.is_gap(last, next_seq) else None


def _without_next_seq(identity: DeviceIdentity) -> DeviceIdentity:
    return dataclasses.replace(identity, next_seq=None)
