"""How long to wait before the next reconnection attempt: capped exponential, with jitter.

Pure: no clock, no sleeping. The caller sleeps; the randomness comes from an injected
`random.Random`, so a test with a seeded generator sees the same delays every run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from drivers.transports.errors import SettingsCheck, describe_value

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
        check = SettingsCheck()
        for name in ("initial", "maximum"):
            check.seconds(f"backoff.{name}", getattr(self, name), above=0, most=MAX_DELAY)
        if _finite(self.initial) and _finite(self.maximum) and self.maximum < self.initial:
            check.refuse(
                "backoff.maximum",
                self.maximum,
                f"must be a number of seconds no smaller than initial ({self.initial})",
            )
        if not (_finite(self.multiplier) and 1 <= self.multiplier <= MAX_MULTIPLIER):
            check.refuse(
                "backoff.multiplier",
                self.multiplier,
                f"must be 1 (constant delay) to {MAX_MULTIPLIER}, "
                f"not {describe_value(self.multiplier)}",
            )
        if not (_finite(self.jitter) and 0 <= self.jitter < 1):
            check.refuse(
                "backoff.jitter",
                self.jitter,
                "must be a fraction from 0 up to (not including) 1, "
                f"not {describe_value(self.jitter)}",
            )
        check.raise_any()


# An hour between attempts is the longest any link here should wait: a shoe or a broker
# that comes back is then found within the hour. A multiplier above 10 reaches any delay
# in two steps; more is a typo.
MAX_DELAY = 3600.0
MAX_MULTIPLIER = 10


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


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
