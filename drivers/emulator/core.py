"""The emulated shoe without I/O: shoe steps in, the exact writes for the line out.

`ShoeEmulator` ties a shoe model, a protocol personality and a fault injector together and
keeps the device's state: its sequence number, the frames it keeps for the host, its active
faults, its lock. Every method returns the `Write`s to perform, in order; `EmulatedShoe`
performs them on a pty and keeps the time, and a benchmark or a codec test can feed them to a
decoder directly. On the reference protocol this is the executable reference of a device's
duties (docs/protocol.md §1.4): what it keeps, what it sends when, what it does when full.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from drivers.codecs import reference
from drivers.emulator.faults import FaultInjector
from drivers.emulator.kept_frames import KeptFrames
from drivers.emulator.personalities import DeviceState, personality
from drivers.emulator.shoe_model import (
    Card,
    CutCardOut,
    Drawn,
    ScriptedShoe,
    Shuffled,
    ShuffledShoe,
    parse_script,
)
from drivers.events import (
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
)

if TYPE_CHECKING:
    from drivers.emulator.faults import FaultName, FrameFate
    from drivers.emulator.personalities import DeviceMessage, Personality
    from drivers.emulator.settings import EmulatorSettings
    from drivers.emulator.shoe_model import ShoeModel
    from drivers.events import Event

RECEIVED_KEPT: Final = 1000  # host commands remembered for inspection; older ones are dropped


@dataclass(frozen=True, slots=True)
class Write:
    """Bytes for one write to the line, after a pause (the later pieces of a split frame)."""

    data: bytes
    pause_before: float = 0.0


@dataclass(frozen=True, slots=True)
class Dealt:
    """One card out of the shoe, and what became of its frame."""

    event: CardDrawn | CardUnreadable  # what the host decodes if the frame arrives
    card: Card | None  # the physical card; None for a scripted unreadable card ("??")
    #: What the line did to the frame's first sending: "intact", "drop", "bad_checksum" or
    #: "repeat"; None while it waits behind an unacknowledged frame (reference protocol).
    fate: FrameFate | None
    kept: bool = False  # the device keeps it until acknowledged: it reaches a host that does
    discarded: bool = False  # numbered, but the device's buffer was full: the host sees a gap
    lost_unplugged: bool = False  # written while the cable was out: the host never sees it

    @property
    def delivered(self) -> bool:
        """Whether a host sees this card: every kept one, once it acknowledges; otherwise a
        frame that arrived (one copy per frame; more copies survive a bad checksum on the
        first)."""
        if self.kept:
            return True
        return self.fate in {"intact", "repeat"} and not (self.lost_unplugged or self.discarded)


@dataclass(frozen=True, slots=True)
class Dealing:
    dealt: Dealt
    writes: list[Write]  # the shuffle or cut card before the card, if any, then the card


@dataclass(slots=True)
class EmulatorStats:
    """What the emulator did to the line, to compare with a decoder's counters."""

    frames: int = 0  # frames encoded, each counted once however many copies went out
    cards: int = 0
    unreadable_cards: int = 0
    shuffles: int = 0
    cut_cards: int = 0
    dropped: int = 0
    bad_checksums: int = 0
    repeats: int = 0  # extra copies sent as a fault, beyond `copies`
    splits: int = 0
    noise_bytes: int = 0
    host_commands: int = 0
    acknowledged_seq: int | None = None  # the latest seq the host acknowledged
    resends: int = 0  # kept frames sent again: unacknowledged in time, or to a new host
    discarded: int = 0  # frames numbered while the buffer was full, never sent
    # Kept by EmulatedShoe, which alone knows when the cable is out:
    host_opens: int = 0
    unplugs: int = 0
    cards_lost_unplugged: int = 0


def identity_for(seed: int, power_up: int) -> DeviceIdentity:
    return DeviceIdentity(
        vendor="shoe2mqtt",
        model="emulated shoe",
        serial_number=f"EMU-{seed}"[:32],
        firmware="emulator-2",
        power_up=power_up,
    )


def build_model(settings: EmulatorSettings, rng: random.Random) -> ShoeModel:
    if settings.script is not None:
        return ScriptedShoe(parse_script(settings.script))
    return ShuffledShoe(
        rng,
        decks=settings.decks,
        spanish=settings.spanish,
        penetration=settings.penetration,
        cards_after_cut=settings.cards_after_cut,
    )


class ShoeEmulator:
    """The device: its cards, its numbering, the frames it keeps, its faults and its lock.

    On a reliable protocol (the reference protocol) it keeps every numbered frame until the
    host acknowledges it and sends only the oldest: `deal` may return no writes (the card
    waits its turn), `receive` sends the next kept frame when an acknowledgement releases
    one, and `resend` sends the oldest again (the caller keeps the time: `resend_after`).
    """

    def __init__(self, settings: EmulatorSettings, seed: int, power_up: int = 0) -> None:
        """`power_up`: the number this power-up of the device goes by (reference protocol)."""
        self.settings = settings
        self.seed = seed
        # Two generators: enabling faults must not change which cards come out.
        self.model = build_model(settings, random.Random(seed))  # noqa: S311 - a card game simulation, not security
        self.faults = FaultInjector(settings.faults, random.Random(f"{seed}:faults"))  # noqa: S311
        self.personality: Personality = personality(settings.protocol)
        self.identity = identity_for(seed, power_up)
        self._host_decoder = self.personality.host_decoder()
        self._seq = 0
        self._kept = KeptFrames(settings.kept_frames) if self.reliable else None
        self._oldest_sends = 0  # times the oldest kept frame went out since it became oldest
        self._active_faults: dict[tuple[FaultKind, int], FaultSet] = {}
        self._locked = False
        self._stats = EmulatorStats()
        self._received: collections.deque[Event] = collections.deque(maxlen=RECEIVED_KEPT)

    @property
    def reliable(self) -> bool:
        """Whether this device keeps its frames until acknowledged (its protocol says so)."""
        return self.personality.sequence.reliable

    @property
    def stats(self) -> EmulatorStats:
        return dataclasses.replace(self._stats)

    @property
    def received(self) -> list[Event]:
        """The host's latest commands, oldest first."""
        return list(self._received)

    @property
    def next_seq(self) -> int:
        """The number the next new frame gets."""
        return self._seq

    @property
    def unacknowledged(self) -> int:
        """Frames kept for the host (0 on a protocol that keeps nothing)."""
        return 0 if self._kept is None else len(self._kept)

    @property
    def in_flight(self) -> tuple[int, int] | None:
        """(seq, times sent) of the oldest kept frame once it went out; None if none did."""
        oldest = None if self._kept is None else self._kept.oldest
        if oldest is None or not self._oldest_sends:
            return None
        return oldest.seq, self._oldest_sends

    def resend_after(self) -> float | None:
        """Seconds to wait for an acknowledgement of the frame in flight before sending it
        again, doubling for each resend up to a cap; None when nothing is in flight."""
        if self.in_flight is None:
            return None
        wait = reference.RESEND_AFTER * 2 ** (self._oldest_sends - 1)
        return float(min(wait, reference.RESEND_AFTER_MAX))

    def force(self, fault: FaultName) -> None:
        """Apply `fault` to the next frame sent (`unreadable`: to the next card)."""
        self.faults.force(fault)

    # ---------------------------------------------------------------- what the shoe does

    def power_up(self) -> list[Write]:
        """What the device says first: when powered up, and whenever a host opens the line."""
        writes: list[Write] = []
        for message in self.personality.power_up(self.identity):
            writes += self._transmit(message)
        return writes

    def deal(self) -> Dealing | None:
        """The next card, with any shuffle or cut card before it; None when a script ends."""
        writes: list[Write] = []
        while True:
            step = self.model.next_step()
            match step:
                case None:
                    return None
                case Shuffled():
                    self._stats.shuffles += 1
                    writes += self._transmit(NewShoe())
                case CutCardOut():
                    self._stats.cut_cards += 1
                    writes += self._transmit(CutCardReached())
                case Drawn(card=card, burned=burned):
                    dealt, card_writes = self._draw(card, burned=burned)
                    return Dealing(dealt, writes + card_writes)

    def shuffle(self) -> list[Write]:
        """The dealer reshuffles now (a scripted shoe just says so)."""
        self.model.request_shuffle()
        step = self.model.next_step()
        assert isinstance(step, Shuffled), "a model shuffles when asked"
        self._stats.shuffles += 1
        return self._transmit(NewShoe())

    def heartbeat(self) -> list[Write]:
        return self._transmit(Heartbeat())

    def set_fault(self, kind: FaultKind, code: int = 0) -> list[Write]:
        fault = FaultSet(kind=kind, code=code)
        self.personality.check_fault(fault)
        self._active_faults[kind, code] = fault
        return self._transmit(fault)

    def clear_fault(self, kind: FaultKind, code: int = 0) -> list[Write]:
        cleared = FaultCleared(kind=kind, code=code)
        self.personality.check_fault(cleared)
        self._active_faults.pop((kind, code), None)
        return self._transmit(cleared)

    def resend(self) -> list[Write]:
        """The oldest kept frame again: no acknowledgement came in time."""
        return self._send_oldest(again=True)

    def receive(self, data: bytes) -> list[Write]:
        """Bytes the host sent; returns the shoe's answers."""
        writes: list[Write] = []
        for command in self._host_decoder.feed(data):
            self._received.append(command)
            self._stats.host_commands += 1
            if isinstance(command, Acknowledge):
                writes += self._acknowledged(command.acknowledged_seq)
                continue
            state = DeviceState(
                identity=self.identity,
                active_faults=tuple(self._active_faults.values()),
                locked=self._locked,
            )
            answer = self.personality.answer(command, state)
            if answer.locked is not None:
                self._locked = answer.locked
            if answer.clear_faults:
                self._active_faults.clear()
            if answer.raw:
                writes.append(Write(answer.raw))
            for message in answer.messages:
                writes += self._transmit(message)
            if answer.resend_kept:  # a host (re)appeared: it gets the oldest kept frame now
                writes += self._send_oldest(again=True, fresh=True)
        return writes

    # ---------------------------------------------------------------- frames

    def _acknowledged(self, seq: int) -> list[Write]:
        self._stats.acknowledged_seq = seq
        if self._kept is None or not self._kept.acknowledge(seq):
            return []
        self._oldest_sends = 0
        return self._send_oldest(again=False)

    def _draw(self, card: Card | None, *, burned: bool) -> tuple[Dealt, list[Write]]:
        self._stats.cards += 1
        event: CardDrawn | CardUnreadable
        if card is None or self.faults.card_unreadable():
            self._stats.unreadable_cards += 1
            event = CardUnreadable(seq=self._seq, burned=burned)
        else:
            origin = self.personality.card_origin_while(
                locked=self._locked, faulted=bool(self._active_faults)
            )
            event = CardDrawn(card.rank, card.suit, seq=self._seq, burned=burned, origin=origin)
        sent = self._send_frame(event)
        dealt = Dealt(
            event=event, card=card, fate=sent.fate, kept=sent.kept, discarded=sent.discarded
        )
        return dealt, sent.writes

    def _transmit(self, message: DeviceMessage) -> list[Write]:
        return self._send_frame(message).writes

    def _send_frame(self, message: DeviceMessage) -> _Sent:
        personality = self.personality
        if self._kept is not None and isinstance(message, DeviceIdentity | Heartbeat):
            # A status frame takes no number of its own: it says which frame comes next.
            next_seq = self._kept.next_seq(self._seq)
            frame = personality.encode(dataclasses.replace(message, next_seq=next_seq), next_seq)
            return _Sent("intact", self._line(frame)[1]) if frame else _Sent("intact", [])
        frame = personality.encode(message, self._seq)
        if frame is None:  # this protocol cannot say it: no frame, no seq used
            return _Sent("intact", [])
        seq, self._seq = self._seq, personality.sequence.successor(self._seq)
        self._stats.frames += 1
        if self._kept is None:
            return _Sent(*self._line(frame))
        if not self._kept.keep(seq, frame):
            self._stats.discarded += 1
            return _Sent(None, [], discarded=True)
        if len(self._kept) > 1:  # it waits until the frames before it are acknowledged
            return _Sent(None, [], kept=True)
        fate, writes = self._line(frame)
        self._oldest_sends = 1
        return _Sent(fate, writes, kept=True)

    def _send_oldest(self, *, again: bool, fresh: bool = False) -> list[Write]:
        """The oldest kept frame, if any: sent again (a resend), or first after an ack.

        `fresh`: a new host asked: the waits between resends start over."""
        oldest = None if self._kept is None else self._kept.oldest
        if oldest is None:
            return []
        if fresh:
            self._oldest_sends = 0
        if again and self._oldest_sends:
            self._stats.resends += 1
        self._oldest_sends += 1
        return self._line(oldest.frame)[1]

    def _line(self, frame: bytes) -> tuple[FrameFate, list[Write]]:
        """What the line does to one sending of `frame`: the writes that carry it."""
        personality = self.personality
        stats = self._stats
        plan = self.faults.plan_frame(len(frame), personality.noise_alphabet)
        writes: list[Write] = []
        if plan.noise_before:
            stats.noise_bytes += len(plan.noise_before)
            writes.append(Write(plan.noise_before))
        if plan.fate == "drop":
            stats.dropped += 1
            return plan.fate, writes
        first = frame
        if plan.fate == "bad_checksum":
            stats.bad_checksums += 1
            first = personality.corrupt_checksum(
                frame, self.faults.checksum_bit(personality.checksum_bits)
            )
        if plan.split_at:
            stats.splits += 1
            cuts = (0, *plan.split_at, len(first))
            pause = self.settings.split_pause
            writes += [
                Write(first[start:end], pause_before=pause if start else 0.0)
                for start, end in itertools.pairwise(cuts)
            ]
        else:
            writes.append(Write(first))
        copies = self.settings.copies - 1
        if plan.fate == "repeat":
            stats.repeats += 1
            copies += 1
        writes += [Write(frame)] * copies
        return plan.fate, writes


@dataclass(frozen=True, slots=True)
class _Sent:
    """What became of one frame: its first sending's fate (None: not sent yet) and writes."""

    fate: FrameFate | None
    writes: list[Write]
    kept: bool = False
    discarded: bool = False
