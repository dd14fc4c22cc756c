"""Everything that makes one emulated shoe: what is in it, what it speaks, how fast, how badly."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from drivers.codecs import reference
from drivers.emulator.errors import EmulatorError
from drivers.emulator.faults import FaultRates
from drivers.emulator.personalities import PROTOCOLS, ProtocolName

if TYPE_CHECKING:
    from pathlib import Path

MAX_COPIES = 5  # a shoe that says everything more than this is broken, not emulated
MAX_KEPT_FRAMES = 65536 // 2  # more could not be told apart by a 16-bit number


@dataclass(frozen=True, slots=True)
class EmulatorSettings:
    """Checked when built, so a wrong option is reported before any pty is opened."""

    protocol: ProtocolName = "reference"
    # The shoe: N shuffled decks with a cut card, or, when `script` is set, exactly those cards.
    decks: int = 6
    spanish: bool = False
    penetration: float = 0.75  # fraction of the shoe dealt before the cut card comes out
    cards_after_cut: int = 8  # cards that finish the round after the cut card; then reshuffle
    script: str | None = None  # "BURN 7C QH 10S CUT 5D": see shoe_model.SCRIPT_HELP
    seed: int | None = None  # None: a random seed, reported as EmulatedShoe.seed
    # Dealing: cards per second for deal() and run(); None deals each card as soon as the
    # host has taken the one before (acknowledged it, or read it where nothing is kept).
    pace: float | None = None
    # The line.
    faults: FaultRates = field(default_factory=FaultRates)
    copies: int = 1  # times each frame is sent; ENQ shoes are said to send up to three
    heartbeat_interval: float | None = None  # seconds of silence before a heartbeat (reference)
    # Frames the device keeps until acknowledged (reference protocol); when full, new ones
    # are numbered and discarded, and the host sees the gap.
    kept_frames: int = reference.KEPT_FRAMES_MIN
    split_pause: float = 0.002  # seconds between the pieces of a split frame
    # The port.
    link: Path | None = None  # a symlink kept pointing at the current pty, e.g. /tmp/shoe0
    unplug_every: float | None = None  # seconds between simulated unplugs
    unplug_for: float = 1.0  # seconds the cable stays out

    def __post_init__(self) -> None:
        if self.protocol not in PROTOCOLS:
            raise EmulatorError(
                f"choose one of {', '.join(PROTOCOLS)}", field="protocol", value=self.protocol
            )
        if self.seed is not None and (
            isinstance(self.seed, bool) or not isinstance(self.seed, int)
        ):
            raise EmulatorError("must be a whole number", field="seed", value=self.seed)
        _positive_or_none("pace", self.pace, "cards per second")
        _positive_or_none("heartbeat_interval", self.heartbeat_interval, "seconds")
        _positive_or_none("unplug_every", self.unplug_every, "seconds")
        for name in ("split_pause", "unplug_for"):
            value = getattr(self, name)
            if not _is_number(value) or not 0 <= value <= 60:
                raise EmulatorError("must be 0 to 60 seconds", field=name, value=value)
        if isinstance(self.kept_frames, bool) or not (
            isinstance(self.kept_frames, int) and 1 <= self.kept_frames <= MAX_KEPT_FRAMES
        ):
            raise EmulatorError(
                f"must be 1 to {MAX_KEPT_FRAMES} frames (the protocol asks for at least "
                f"{reference.KEPT_FRAMES_MIN}; fewer is for testing an overflow)",
                field="kept_frames",
                value=self.kept_frames,
            )
        if isinstance(self.copies, bool) or not (
            isinstance(self.copies, int) and 1 <= self.copies <= MAX_COPIES
        ):
            raise EmulatorError(
                f"must be 1 to {MAX_COPIES} copies of each frame", field="copies", value=self.copies
            )
        if not isinstance(self.faults, FaultRates):
            raise EmulatorError("must be a FaultRates", field="faults", value=self.faults)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _positive_or_none(name: str, value: object, unit: str) -> None:
    if value is not None and not (_is_number(value) and value > 0):  # type: ignore[operator]
        raise EmulatorError(
            f"must be a number of {unit} above 0, or left out", field=name, value=value
        )
