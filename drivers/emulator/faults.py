"""Seeded fault injection: what a bad cable, a noisy line or a tired reader does to frames.

Each fault has a rate, the chance per frame (per card for `unreadable`). The fates that
decide whether a frame arrives intact, `drop`, `bad_checksum` and `repeat`, exclude each
other, so their rates may add up to at most 1; `noise` and `split` only change how the bytes
travel and combine with anything. A test that needs one particular fault on one particular
frame forces it with `FaultInjector.force` instead of hunting for a seed.

The generator is the injector's own: turning faults on or off never changes the cards dealt.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Final, Literal, TypeAlias, get_args

from drivers.emulator.errors import EmulatorError

if TYPE_CHECKING:
    import random

FaultName: TypeAlias = Literal["noise", "drop", "bad_checksum", "split", "repeat", "unreadable"]
FAULT_NAMES: Final[tuple[FaultName, ...]] = get_args(FaultName)
FrameFate: TypeAlias = Literal["intact", "drop", "bad_checksum", "repeat"]

NOISE_LENGTHS: Final = range(1, 7)  # bytes of one burst: shorter than any frame either protocol has
SPLIT_PIECES: Final = range(2, 5)  # a split frame goes out in 2 to 4 writes


@dataclass(frozen=True, slots=True)
class FaultRates:
    """Chance per frame of each fault, 0 to 1; all zero (the default) is a perfect line."""

    noise: float = 0.0  # a burst of junk bytes before the frame
    drop: float = 0.0  # the frame never arrives (its seq is used up: the host sees a gap)
    bad_checksum: float = 0.0  # one bit of the check value flipped
    split: float = 0.0  # the frame is written in several pieces with short pauses
    repeat: float = 0.0  # the frame is sent once more
    unreadable: float = 0.0  # per card: the reader cannot see its face

    def __post_init__(self) -> None:
        for field in fields(self):
            rate = getattr(self, field.name)
            if (
                isinstance(rate, bool)
                or not isinstance(rate, int | float)
                or not math.isfinite(rate)
                or not 0 <= rate <= 1
            ):
                raise EmulatorError("must be a rate from 0 to 1", field=field.name, value=rate)
        exclusive = self.drop + self.bad_checksum + self.repeat
        if exclusive > 1:
            raise EmulatorError(
                "drop + bad_checksum + repeat is the chance a frame does not arrive once, "
                "intact: together they must be at most 1",
                field="drop+bad_checksum+repeat",
                value=exclusive,
            )

    @property
    def any(self) -> bool:
        return any(getattr(self, field.name) for field in fields(self))


@dataclass(frozen=True, slots=True)
class FramePlan:
    """What happens to one frame on its way to the host."""

    fate: FrameFate = "intact"
    noise_before: bytes = b""
    split_at: tuple[int, ...] = ()  # offsets inside the frame where a new write starts


class FaultInjector:
    def __init__(self, rates: FaultRates, rng: random.Random) -> None:
        self.rates = rates
        self._rng = rng
        self._forced: deque[FaultName] = deque()

    def force(self, fault: FaultName) -> None:
        """Apply `fault` to the next frame (`unreadable`: the next card), whatever the rates."""
        if fault not in FAULT_NAMES:
            raise EmulatorError(
                f"not a fault; choose from {', '.join(FAULT_NAMES)}", field="fault", value=fault
            )
        self._forced.append(fault)

    def card_unreadable(self) -> bool:
        return self._take_forced("unreadable") or self._chance(self.rates.unreadable)

    def plan_frame(self, frame_length: int, noise_alphabet: bytes) -> FramePlan:
        rates = self.rates
        forced = {
            fault for fault in FAULT_NAMES if fault != "unreadable" and self._take_forced(fault)
        }
        fate: FrameFate = "intact"
        for candidate in ("drop", "bad_checksum", "repeat"):
            if candidate in forced:
                fate = candidate
                break
        else:
            # One draw decides the exclusive fates, so their rates add up as documented.
            draw = self._rng.random() if rates.drop or rates.bad_checksum or rates.repeat else 1.0
            if draw < rates.drop:
                fate = "drop"
            elif draw < rates.drop + rates.bad_checksum:
                fate = "bad_checksum"
            elif draw < rates.drop + rates.bad_checksum + rates.repeat:
                fate = "repeat"
        noise = b""
        if "noise" in forced or self._chance(rates.noise):
            length = self._rng.choice(NOISE_LENGTHS)
            noise = bytes(self._rng.choice(noise_alphabet) for _ in range(length))
        split_at: tuple[int, ...] = ()
        if frame_length > 1 and ("split" in forced or self._chance(rates.split)):
            pieces = min(self._rng.choice(SPLIT_PIECES), frame_length)
            split_at = tuple(sorted(self._rng.sample(range(1, frame_length), pieces - 1)))
        return FramePlan(fate=fate, noise_before=noise, split_at=split_at)

    def checksum_bit(self, bits: int) -> int:
        """Which bit of a `bits`-wide check value to flip."""
        return self._rng.randrange(bits)

    def _chance(self, rate: float) -> bool:
        # No draw for a fault that is off: a perfect line uses no randomness at all.
        return rate > 0 and self._rng.random() < rate

    def _take_forced(self, fault: FaultName) -> bool:
        if fault in self._forced:
            self._forced.remove(fault)
            return True
        return False
