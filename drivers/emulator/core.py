"""The emulated shoe without I/O: shoe steps in, the exact writes for the line out.

`ShoeEmulator` ties a shoe model, a protocol personality and a fault injector together and
keeps the device's state: its sequence number, its active faults, its lock. Every method
returns the `Write`s to perform, in order; `EmulatedShoe` performs them on a pty, and a
benchmark or a codec test can feed them to a decoder directly.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from drivers.emulator.faults import FaultInjector
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
    fate: FrameFate  # "intact", "drop", "bad_checksum" or "repeat"
    lost_unplugged: bool = False  # written while the cable was out: the host never sees it

    @property
    def delivered(self) -> bool:
        """Whether a decoder sees this card (with one copy per frame; more copies survive
        a bad checksum on the first)."""
        return self.fate in {"intact", "repeat"} and not self.lost_unplugged


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
    # Kept by EmulatedShoe, which alone knows when the cable is out:
    host_opens: int = 0
    unplugs: int = 0
    cards_lost_unplugged: int = 0


def identity_for(seed: int) -> DeviceIdentity:
    return DeviceIdentity(
        vendor="shoe2mqtt",
        model="emulated shoe",
        serial_number=f"EMU-{seed}"[:32],
        firmware="emulator-1",
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
    def __init__(self, settings: EmulatorSettings, seed: int) -> None:
        self.settings = settings
        self.seed = seed
        # Two generators: enabling faults must not change which cards come out.
        self.model = build_model(settings, random.Random(seed))  # noqa: S311 - a card game simulation, not security
        self.faults = FaultInjector(settings.faults, random.Random(f"{seed}:faults"))  # noqa: S311
        self.personality: Personality = personality(settings.protocol)
        self.identity = identity_for(seed)
        self._host_decoder = self.personality.host_decoder()
        self._seq = 0
        self._active_faults: dict[tuple[FaultKind, int], FaultSet] = {}
        self._locked = False
        self._stats = EmulatorStats()
        self._received: collections.deque[Event] = collections.deque(maxlen=RECEIVED_KEPT)

    @property
    def stats(self) -> EmulatorStats:
        return dataclasses.replace(self._stats)

    @property
    def received(self) -> list[Event]:
        """The host's latest commands, oldest first."""
        return list(self._received)

    @property
    def next_seq(self) -> int:
        return self._seq

    def force(self, fault: FaultName) -> None:
        """Apply `fault` to the next frame (`unreadable`: to the next card)."""
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

    def receive(self, data: bytes) -> list[Write]:
        """Bytes the host sent; returns the shoe's answers."""
        writes: list[Write] = []
        for command in self._host_decoder.feed(data):
            self._received.append(command)
            self._stats.host_commands += 1
            if isinstance(command, Acknowledge):
                self._stats.acknowledged_seq = command.acknowledged_seq
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
        return writes

    # ---------------------------------------------------------------- frames

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
        fate, writes = self._send_frame(event)
        return Dealt(event=event, card=card, fate=fate), writes

    def _transmit(self, message: DeviceMessage) -> list[Write]:
        return self._send_frame(message)[1]

    def _send_frame(self, message: DeviceMessage) -> tuple[FrameFate, list[Write]]:
        personality = self.personality
        frame = personality.encode(message, self._seq)
        if frame is None:  # this protocol cannot say it: no frame, no seq used
            return "intact", []
        self._seq = personality.sequence.successor(self._seq)
        stats = self._stats
        stats.frames += 1
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
