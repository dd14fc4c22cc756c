"""How long to wait before the next reconnection attempt: capped exponential, with jitter.

Pure: no clock, no sleeping. The caller sleeps; the randomness comes from an injected
`random.Random`, so a test with a seeded generator sees the same delays every run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from drivers.transports.errors import SettingsError

if TYPE_CHECKING:
    import random


@dataclass(frozen=True, slots=True)
class BackoffPolicy:
    """Delays in seconds: initial, initial*multiplier, ... up to maximum, each jittered.

    Jitter only ever shortens a delay (by up to `jitter` of it), so `maximum` is a true
    bound, and daemons that lost the same device server at the same moment spread out
    instead of reconnecting in lock step.
    """

    initial: float = 0.5
    maximum: float = 30.0
    multiplier: float = 2.0
    jitter: float = 0.2

    def __post_init__(self) -> None:
        _require(
            _finite(self.initial) and self.initial > 0,
            "must be a number of seconds above 0",
            "initial",
            self.initial,
        )
        _require(
            _finite(self.maximum) and self.maximum >= self.initial,
            f"must be a number of seconds no smaller than initial ({self.initial})",
            "maximum",
            self.maximum,
        )
        _require(
            _finite(self.multiplier) and self.multiplier >= 1,
            "must be 1 (constant delay) or more",
            "multiplier",
            self.multiplier,
        )
        _require(
            _finite(self.jitter) and 0 <= self.jitter < 1,
            "must be a fraction from 0 up to (not including) 1",
            "jitter",
            self.jitter,
        )


def _finite(value: float) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _require(condition: bool, message: str, field: str, value: object) -> None:  # noqa: FBT001 - a guard helper reads best positionally
    if not condition:
        raise SettingsError(message, field=f"backoff.{field}", value=value)


class Backoff:
    """The delays of one run of failures; `reset` once a link has proved itself."""

    def __init__(self, policy: BackoffPolicy, rng: random.Random) -> None:
        self._policy = policy
        self._rng = rng
        self._base = policy.initial  # the next delay, before jitter

    def next_delay(self) -> float:
        policy = self._policy
        delay = self._base
        # Grow only up to the cap: the exponent never overflows however long a device is gone.
        self._base = min(policy.maximum, delay * policy.multiplier)
        return delay * (1 - policy.jitter * self._rng.random())

    def reset(self) -> None:
        self._base = self._policy.initial
