"""A login slowed after wrong passwords, per client address and overall: the pit display's
password and the dealer console's PINs alike.

Without it a client could try 6,000 to 9,500 passwords a second against `[display.login]`
(measured on a table PC's two cores). With it (docs/security.md, "The pit display"):

- **per address**: `FREE_FAILURES` wrong passwords in a row cost nothing; each one after
  them makes the address wait before its next try, `FIRST_WAIT` seconds and twice as long
  each time, up to `MAX_WAIT`. A right password ends the count, and so does an hour without
  a wrong one (`FORGET_AFTER`). A dealer who mistypes is slowed by a second or two; a
  program at one address gets a few dozen tries an hour.
- **overall**: wrong passwords from addresses that have not logged in lately
  (`KNOWN_FOR`) draw on one bucket of `OVERALL_BURST`, refilled at `OVERALL_RATE` a
  second; while it is empty such addresses wait. Many addresses at once then get no more
  tries than one would at that rate, while the pit's own screens, which logged in before,
  are held back by their own count only: an attack never locks the site's dealers out.

A client that must wait gets `429 Too Many Requests` with `Retry-After`, and its password is
not even looked at: no guess made while waiting can succeed. What is remembered is bounded
(`MAX_ADDRESSES` of each kind, the oldest forgotten first). Behind a reverse proxy every
client has the proxy's address, so the count per address becomes one count for the proxy.

Sans-I/O: the clock is injected; the servers ask and answer (daemon/display/server.py,
daemon/dealer_console/server.py).
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable

FREE_FAILURES: Final = 5
FIRST_WAIT: Final = 1.0  # seconds
MAX_WAIT: Final = 300.0
FORGET_AFTER: Final = 3600.0  # seconds without a wrong password before the count starts over
KNOWN_FOR: Final = 12 * 3600.0  # a right password exempts its address from the overall limit
OVERALL_BURST: Final = 30  # wrong passwords from unknown addresses, at once
OVERALL_RATE: Final = 0.5  # and a second after that: 30 a minute
MAX_ADDRESSES: Final = 4096
_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class Wait:
    """The client must wait `seconds` before its next try; `overall`: because of the
    guard's overall limit, not of its own address's wrong passwords; `first`: the first
    time this wait is told (the one worth a log line)."""

    seconds: float
    overall: bool
    first: bool

    @property
    def retry_after(self) -> int:
        """Whole seconds to wait, at least one: what `Retry-After` and the page say."""
        return max(1, math.ceil(self.seconds))


@dataclass(frozen=True, slots=True)
class Failure:
    """A wrong password: the address's count of them in a row, and its wait from now (0:
    none yet)."""

    failures: int
    wait: float


@dataclass(slots=True)
class _Address:
    failures: int = 0
    last: float = 0.0  # when the last wrong password came
    until: float = 0.0  # no try before this
    told: bool = False  # the wait until then was told once


class LoginGuard:
    """Who may try a password now, and what a wrong one costs."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._addresses: OrderedDict[str, _Address] = OrderedDict()
        self._known: OrderedDict[str, float] = OrderedDict()  # address → its last login
        self._tokens = float(OVERALL_BURST)
        self._filled = clock()
        self._overall_told = False

    def wait(self, address: str) -> Wait | None:
        """None if `address` may try a password now, else how long it must wait."""
        now = self._clock()
        entry = self._entry(address, now)
        if entry is not None and now < entry.until:
            first, entry.told = not entry.told, True
            return Wait(entry.until - now, overall=False, first=first)
        if not self._is_known(address, now) and self._fill(now) < 1:
            first, self._overall_told = not self._overall_told, True
            return Wait((1 - self._tokens) / OVERALL_RATE, overall=True, first=first)
        return None

    def failed(self, address: str) -> Failure:
        """A wrong password from `address` (which `wait` let try)."""
        now = self._clock()
        entry = self._entry(address, now) or _Address()
        entry.failures += 1
        entry.last = now
        wait = 0.0
        if entry.failures >= FREE_FAILURES:
            wait = min(MAX_WAIT, FIRST_WAIT * 2 ** (entry.failures - FREE_FAILURES))
            entry.until, entry.told = now + wait, False
        _remember(self._addresses, address, entry)
        if not self._is_known(address, now):
            self._tokens = max(0.0, self._fill(now) - 1)
        return Failure(entry.failures, wait)

    def succeeded(self, address: str) -> None:
        """A right password from `address`: its count ends, and it is known from now."""
        self._addresses.pop(address, None)
        _remember(self._known, address, self._clock())

    def remembered(self) -> tuple[int, int]:
        """How many addresses it counts wrong passwords of, and how many it knows."""
        return len(self._addresses), len(self._known)

    def _entry(self, address: str, now: float) -> _Address | None:
        entry = self._addresses.get(address)
        if entry is not None and now - entry.last >= FORGET_AFTER:
            del self._addresses[address]
            return None
        return entry

    def _is_known(self, address: str, now: float) -> bool:
        since = self._known.get(address)
        return since is not None and now - since < KNOWN_FOR

    def _fill(self, now: float) -> float:
        self._tokens = min(OVERALL_BURST, self._tokens + (now - self._filled) * OVERALL_RATE)
        self._filled = now
        if self._tokens >= 1:
            self._overall_told = False  # the next time it runs dry is told again
        return self._tokens


def _remember(table: OrderedDict[str, _T], address: str, value: _T) -> None:
    """Keep `value` as the newest entry, forgetting the oldest beyond `MAX_ADDRESSES`."""
    table[address] = value
    table.move_to_end(address)
    while len(table) > MAX_ADDRESSES:
        table.popitem(last=False)
