"""The receiving end's judgement of what a shoe sends: new, a repeat, a conflict, or after a
loss. The one judge of repeats, for every protocol: decoders hand up every intact frame. It
is the memory of the host's session (`drivers.session`), whose owner judges with it.

Sans-I/O, and the same for every receiver: the daemon's table judges against what its journal
holds, `listen` against what it printed. The judgement comes first, before anything is made
durable (decision D3):

    intake = receiver.judge(event)
    if intake.gap:            make the gap durable first (the round must hear of it)
    if intake.conflict:       make the conflict durable first (the table doubts what it holds)
    if intake.take:           make the event durable, then receiver.record(event)
    if intake.acknowledge:    driver.deliver(session.acknowledgement(intake.acknowledge))

A numbered frame is judged against the last numbered frame held, of any kind, by its number
AND its content:

- the same number and the same content (an equal event) is a *repeat*: the device sent it
  again (it did not hear the acknowledgement, the receiver restarted before sending it, or an
  ENQ shoe simply sends everything more than once). Not taken, acknowledged again.
- the same number with other content is a *conflict*: no repeat, and no frame the numbering
  explains either. It is taken, after a `SequenceConflict` the table treats as a doubt, so a
  card is never dropped as a "repeat" it is not, and never given to a seat in silence.
- after a `CommunicationStarted` the shoe's count starts over: a frame with its number and
  other content is the first of the new count, taken plainly (and an `S` itself, whatever
  number it reuses, starts a count; it never conflicts).
- any other number is the next frame, or, judged by the shoe's own `SequencePolicy`, a jump
  that shows frames were lost (only where the shoe is known to count up by one).

A receiver that knows the last number but not its content (one rebuilt from a memory written
before the content was kept) judges that number alone, as a repeat.

The memory it keeps is what decision D3 asks of the journal, per table: the last numbered
frame held (`last`, and its content), and who the device is and since which power-up
(`device`), so that a first contact after a restart tells "the same device, going on" from
"a gap" and from "the device restarted": a `DeviceIdentity` that names another device or
power-up is recorded as such (`record` returns True) and its numbering taken as new.
`state()` is that memory as JSON-able data, and `FrameReceiver.from_state` makes the same
receiver again, so a daemon that checkpoints it judges after a restart exactly as before.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from drivers.codecs.sequence import SequenceVerdict
from drivers.errors import DriverError
from drivers.events import (
    NUMBERED_EVENTS,
    CommunicationStarted,
    DeviceIdentity,
    Heartbeat,
    SequenceConflict,
    SequenceGap,
    frame_number,
)

if TYPE_CHECKING:
    from drivers.codecs.sequence import SequencePolicy
    from drivers.events import NumberedEvent

# What `state()` may hold as the last frame's content, and the device: by class name.
_KEPT_CLASSES: Final[dict[str, type[Any]]] = {
    cls.__name__: cls for cls in (*NUMBERED_EVENTS, DeviceIdentity)
}


class ReceiverStateError(DriverError, ValueError):
    """`FrameReceiver.from_state` was given data no `state()` wrote."""


@dataclass(frozen=True, slots=True)
class Intake:
    """What to do with one event from the shoe."""

    take: bool  # False: a repeat of a frame already held; apply nothing
    gap: SequenceGap | None = None  # frames went missing before this: record the gap first
    acknowledge: int | None = None  # the frame to acknowledge once taken (at once if not)
    #: The frame has the number of the one before it but other content: record this first,
    #: then take the frame (the table doubts what it holds).
    conflict: SequenceConflict | None = None


@dataclass(slots=True)
class ReceiverCounters:
    """What the receiver judged since it was made (not part of its `state()`)."""

    repeats: int = 0  # frames that repeated the frame before them: not taken
    conflicts: int = 0  # frames with the number of the frame before them, other content


class FrameReceiver:
    """What one receiver holds of one shoe's numbering, and its judgement of a new event."""

    def __init__(self, policy: SequencePolicy | None) -> None:
        """`policy`: the shoe's numbering (`registry.sequence_policy`); None judges nothing."""
        self.policy = policy
        self.last: int | None = None  # the last numbered frame held (or skipped by a gap)
        self.device: DeviceIdentity | None = None  # as identified, without its `next_seq`
        # The content of frame `last`, as taken; None where it is not known (after a gap, a
        # new count, or a memory restored without it).
        self.held: NumberedEvent | None = None
        self.counters = ReceiverCounters()

    @property
    def reliable(self) -> bool:
        """Whether the shoe keeps what the receiver has not acknowledged (nothing is lost
        while the receiver is away)."""
        return self.policy is not None and self.policy.reliable

    # ---------------------------------------------------------------- the memory, as data

    def state(self) -> dict[str, Any]:
        """What the receiver holds, as JSON-able data: `from_state` makes it again."""
        return {
            "last": self.last,
            "held": None if self.held is None else _record(self.held),
            "device": None if self.device is None else _record(self.device),
        }

    def load(self, other: FrameReceiver) -> None:
        """Hold what `other` holds and judge as it does, in place: whoever holds this
        receiver (a session, its driver) keeps a good reference."""
        self.policy, self.last, self.held = other.policy, other.last, other.held
        self.device, self.counters = other.device, other.counters

    @classmethod
    def from_state(cls, policy: SequencePolicy | None, state: dict[str, Any]) -> FrameReceiver:
        """The receiver `state` (from `state()`) describes, judging by `policy`; raises
        `ReceiverStateError` for anything else."""
        receiver = cls(policy)
        try:
            last, held, device = state["last"], state["held"], state["device"]
        except (KeyError, TypeError) as exc:
            raise ReceiverStateError(f"not a receiver's state: {exc!r}") from None
        if last is not None and (
            isinstance(last, bool)
            or not isinstance(last, int)
            or (policy is not None and not 0 <= last < policy.modulus)
        ):
            raise ReceiverStateError(f"last: not a frame number: {last!r}")
        receiver.last = last
        receiver.held = None if held is None else _from_record(held, NUMBERED_EVENTS)
        if device is not None:
            receiver.device = _from_record(device, (DeviceIdentity,))
        return receiver

    # ---------------------------------------------------------------- judging

    def judge(self, event: object) -> Intake:
        """Judge `event` against what is held; changes nothing it holds (it counts repeats
        and conflicts)."""
        policy = self.policy
        if policy is None:
            return Intake(take=True)
        seq = frame_number(event)
        if seq is None:
            return Intake(take=True, gap=self._status_gap(event))
        verdict = policy.judge(self.last, seq)
        if verdict is SequenceVerdict.DUPLICATE:
            return self._same_number(event, seq)
        gap = self._gap(self.last, seq) if verdict is SequenceVerdict.GAP else None
        return Intake(take=True, gap=gap, acknowledge=seq)

    def _same_number(self, event: object, seq: int) -> Intake:
        """A frame numbered as the last one held: a repeat, a new count, or a conflict."""
        held = self.held
        if held is None or held == event:
            self.counters.repeats += 1
            return Intake(take=False, acknowledge=seq)
        if isinstance(held, CommunicationStarted) or isinstance(event, CommunicationStarted):
            return Intake(take=True, acknowledge=seq)  # the count starts over at an `S`
        self.counters.conflicts += 1
        return Intake(take=True, conflict=SequenceConflict(seq=seq), acknowledge=seq)

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
            self.last, self.held = policy.predecessor(event.got), None
            return False
        if isinstance(event, NUMBERED_EVENTS) and event.seq is not None:
            self.last, self.held = event.seq, event
            return False
        if not isinstance(event, DeviceIdentity):
            return False  # a conflict changes nothing: the frame that follows it does
        known, self.device = self.device, _without_next_seq(event)
        changed = known is not None and known != self.device
        if (known is None or changed) and event.next_seq is not None:
            # Its numbering starts here: the frame it sends next is the one to take next.
            self.last, self.held = policy.predecessor(event.next_seq), None
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


def _record(event: NumberedEvent | DeviceIdentity) -> dict[str, Any]:
    """An event as JSON-able data: its class, then its fields (bytes in hex)."""
    fields = {
        field.name: _json_value(getattr(event, field.name)) for field in dataclasses.fields(event)
    }
    return {"event": type(event).__name__, **fields}


def _json_value(value: object) -> object:
    return value.hex() if isinstance(value, bytes) else value


def _from_record(record: object, allowed: tuple[type[Any], ...]) -> Any:  # noqa: ANN401 - one of `allowed`
    """The event `_record` wrote, of one of the `allowed` classes."""
    if not isinstance(record, dict):
        raise ReceiverStateError(f"not an event record: {record!r}")
    fields = dict(record)
    cls = _KEPT_CLASSES.get(fields.pop("event", None))
    if cls is None or cls not in allowed:
        raise ReceiverStateError(f"not an event this memory keeps: {record.get('event')!r}")
    try:
        for field in dataclasses.fields(cls):
            if field.type == "bytes" and isinstance(fields.get(field.name), str):
                fields[field.name] = bytes.fromhex(fields[field.name])
        return cls(**fields)
    except (TypeError, ValueError) as exc:
        raise ReceiverStateError(f"{cls.__name__}: {exc}") from None
