"""A dealer console's request, judged before it costs anything (docs/security.md).

Every request that reaches the daemon passes this gate in the MQTT link's receive loop,
before it is journaled or queued behind anything. In this order, cheapest first:

1. **size**: more than `MAX_REQUEST_BYTES` is refused unread (`request_too_large`);
2. **rate**: each table has a token bucket (`[requests] rate` a second, `burst` at once);
   a request without a token is refused (`rate_limited`);
3. **shape**: a command the daemon knows, a JSON object, a string or integer `transaction`
   (`unknown_command`, `malformed_request`); what the fields mean is the table's to judge,
   against the round, once the request is journaled;
4. **room**: the table's request lane (`daemon.table.inbox`) holds at most `[requests]
   queue` requests; a request that finds it full is refused (`queue_full`).

A refused request changes nothing, so it is not journaled: a replay needs nothing of it, and
a flood costs neither disk nor a place in the table's queue. The first
`ANSWERED_PER_INTERVAL` refusals of a table in each `REPORT_INTERVAL` are answered on the
response topic, as any refusal is; past that they are only counted, and the pit gets one
`requests_refused` notice per interval with the counts (`take_reports`), so that a flood of
5,000 requests a second costs the broker one message every few seconds, not 5,000.

Even refused unread, every request costs the daemon its share of the MQTT client's work
(measured: a 5,000 a second flood took 0.3 of a core, and under a loaded CPU that time came
out of the cards' way to the pit), and one over the size limit costs it every byte it
carries (floods of 4,100-byte and 11 KB requests, never muted while only the rate's
refusals counted, took 0.48 to 0.57 of a core and put a card's p99 at 211 ms and 2.48 s).
So a table whose refusals in one interval weigh `flood_threshold` (ten times what the rate
admits) is **muted**: the verdict says for how long (`Refused.mute_for`), the daemon has the
link unsubscribe from that table's requests, and the broker drops them meanwhile.

What counts towards a mute is what the sender chose to send past the gate's limits: a
request over the rate counts one; one over the size counts as many as the largest requests
its bytes would make (`request_weight`: 4,100 bytes count 2, 11 KB 3, 1 MiB 256), since
its bytes are its cost, and it is refused before the rate is asked. A refusal of the
request's shape or of a full queue does not count: the first took a token of the rate (a
flood of them is over the rate soon enough, and counts then), and the second says that the
table is slow (a journal waiting for its disk), which a console that keeps the rate must
not be muted for.

A mute lasts `MUTE_SECONDS`, twice as long each time the flood is still there when it ends,
up to `MUTE_MAX_SECONDS`. What a console sends to a muted table gets no response; the pit is
told, and the other tables hear their consoles as before.

Sans-I/O: the clock is injected; the daemon publishes what this decides.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from daemon.wire.requests import MAX_REQUEST_BYTES, RequestError, parse_request
from daemon.wire.topics import COMMANDS

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

REPORT_INTERVAL: Final = 5.0  # seconds a report of unanswered refusals covers
ANSWERED_PER_INTERVAL: Final = 10  # refusals per table and interval that get a response
MUTE_SECONDS: Final = 5.0  # a flooded table's first mute
MUTE_MAX_SECONDS: Final = 300.0  # the longest: the pit hears of the flood at every unmute

# What each refusal's code means, in the words of the response and the pit's notice.
TOO_LARGE: Final = "request_too_large"
RATE_LIMITED: Final = "rate_limited"
QUEUE_FULL: Final = "queue_full"


@dataclass(frozen=True, slots=True)
class RequestLimits:
    """`[requests]`: how much one table takes from its consoles (per table, not per console).

    The defaults are far above what a dealer console sends (a person at a touch screen, or a
    chip-recognition system placing every wager of a round at once: a few dozen requests in
    a burst, a few a second after that) and far below what fills a disk.
    """

    rate: float = 20.0  # requests a second, sustained
    burst: int = 50  # requests at once, after a quiet spell: 7 seats x 4 wagers fit
    queue: int = 50  # requests waiting for the table while it works

    @property
    def flood_threshold(self) -> int:
        """What refusals in one interval weigh when they mute a table (`request_weight`):
        ten times what the rate admits in an interval (at least a burst), which no console
        that merely hurries reaches."""
        return max(self.burst, round(10 * self.rate * REPORT_INTERVAL))


def request_weight(payload: bytes) -> int:
    """What a refused request weighs towards a mute: one, or for one over the size limit as
    many as the largest requests its bytes would make (4,100 bytes: 2; 11 KB: 3)."""
    return max(1, -(-len(payload) // MAX_REQUEST_BYTES))


# For dealers and players that are programs (the demo, the test harness, the benchmarks),
# which play as fast as the daemon answers: never for a table with a person at its console.
AUTOMATED_CONSOLE: Final = RequestLimits(rate=10_000, burst=10_000, queue=10_000)


@dataclass(frozen=True, slots=True)
class Admitted:
    """The request may be queued for its table."""


@dataclass(frozen=True, slots=True)
class Refused:
    """The request is refused unjournaled; `answer` says whether it gets a response now
    (else it is only counted, for the next report)."""

    code: str
    message: str
    transaction: str | int | None
    answer: bool
    mute_for: float | None = None  # a flood: stop hearing this table's requests this long


@dataclass(frozen=True, slots=True)
class RefusalReport:
    """Refusals of one table in the last interval that got no response of their own."""

    table: str
    seconds: float
    unanswered: dict[str, int]  # by code

    @property
    def total(self) -> int:
        return sum(self.unanswered.values())

    def message(self) -> str:
        counts = ", ".join(f"{code} {count:,}" for code, count in sorted(self.unanswered.items()))
        return (
            f"{self.total:,} requests refused in the last {self.seconds:.0f} s without a response "
            f"each ({counts}): more than a dealer console sends; find what publishes them"
        )


@dataclass(slots=True)
class _TokenBucket:
    rate: float
    capacity: float
    tokens: float
    updated: float

    def take(self, now: float, cost: int = 1) -> bool:
        self.tokens = min(self.capacity, self.tokens + (now - self.updated) * self.rate)
        self.updated = now
        if self.tokens < cost:
            return False
        self.tokens -= cost
        return True


@dataclass(slots=True)
class _Refusals:
    """A table's refusals in the current interval."""

    answered: int = 0
    unanswered: collections.Counter[str] = field(default_factory=collections.Counter)
    flood: int = 0  # what the refusals that count towards a mute weigh (FLOOD_WEIGHT)


@dataclass(slots=True)
class _Mute:
    """A table's latest mute: when it ends and how long it was."""

    until: float
    seconds: float


class RequestGate:
    """The gate of every table the daemon serves."""

    def __init__(
        self,
        limits: RequestLimits,
        tables: Iterable[str],
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limits = limits
        self._clock = clock
        now = clock()
        self._buckets = {
            table: _TokenBucket(limits.rate, limits.burst, limits.burst, now) for table in tables
        }
        # Only tables that refused something since the last report: a report costs nothing
        # for the hundreds of tables that did not.
        self._refusals: dict[str, _Refusals] = {}
        self._interval_began = now
        self._mutes: dict[str, _Mute] = {}

    def retune(self, limits: RequestLimits) -> None:
        """New limits (a reload's `[requests]`), from the next request on: each table's bucket
        takes the new rate and size, keeping the tokens it has up to the new size."""
        self.limits = limits
        now = self._clock()
        for bucket in self._buckets.values():
            bucket.take(now, cost=0)  # fill it at the old rate up to now
            bucket.rate, bucket.capacity = limits.rate, limits.burst
            bucket.tokens = min(bucket.tokens, limits.burst)

    def judge(self, table: str, command: str, payload: bytes, *, room: bool) -> Admitted | Refused:
        """Admit the request, or refuse it; `room`: the table's request lane has room."""
        if len(payload) > MAX_REQUEST_BYTES:
            too_large = self._refuse(
                table, payload, TOO_LARGE, f"a request is at most {MAX_REQUEST_BYTES} bytes"
            )
            return self._counted(table, too_large, request_weight(payload))
        if (over_rate := self._over_rate(table, payload)) is not None:
            return over_rate
        if command not in COMMANDS:
            return self._refuse(
                table,
                payload,
                "unknown_command",
                f"unknown command {command!r}; commands: {', '.join(COMMANDS)}",
            )
        try:
            parse_request(payload)
        except RequestError as exc:
            return self._refuse(table, payload, exc.code, exc.message)
        if not room:
            return self._refuse(
                table,
                payload,
                QUEUE_FULL,
                f"{self.limits.queue} requests already wait for this table: try again shortly",
            )
        return Admitted()

    def take_reports(self) -> list[RefusalReport]:
        """What went unanswered since the last call, per table; starts a new interval, in
        which each table answers `ANSWERED_PER_INTERVAL` refusals again."""
        now = self._clock()
        seconds, self._interval_began = now - self._interval_began, now
        refusals, self._refusals = self._refusals, {}
        return [
            RefusalReport(table, seconds, dict(counts.unanswered))
            for table, counts in refusals.items()
            if counts.unanswered
        ]

    def _over_rate(self, table: str, payload: bytes) -> Refused | None:
        """The refusal of a request the table's bucket has no token for, or None."""
        if self._buckets[table].take(self._clock()):
            return None
        refusal = self._refuse(
            table,
            payload,
            RATE_LIMITED,
            f"more than {self.limits.rate:g} requests a second at this table "
            f"({self.limits.burst} at once): try again shortly",
        )
        return self._counted(table, refusal, 1)

    def _counted(self, table: str, refusal: Refused, weight: int) -> Refused:
        """`refusal`, counted towards a flood's mute with `weight`; with `mute_for` set when
        it is the one that reaches the threshold."""
        now = self._clock()
        counts = self._refusals[table]
        counts.flood += weight
        last = self._mutes.get(table)
        if last is not None and now < last.until:
            # Muted already: these were on their way before the broker heard of the mute.
            counts.flood = 0
        elif counts.flood >= self.limits.flood_threshold:
            counts.flood = 0  # counted afresh once the mute ends
            return dataclasses.replace(refusal, mute_for=self._mute(table, now))
        return refusal

    def _mute(self, table: str, now: float) -> float:
        """How long to mute a flooded table: twice the last mute if the flood came straight
        back when it ended (within one interval), else the first mute's length."""
        last = self._mutes.get(table)
        again = last is not None and now - last.until <= REPORT_INTERVAL
        seconds = min(MUTE_MAX_SECONDS, 2 * last.seconds) if again and last else MUTE_SECONDS
        self._mutes[table] = _Mute(now + seconds, seconds)
        return seconds

    def _refuse(self, table: str, payload: bytes, code: str, message: str) -> Refused:
        counts = self._refusals.setdefault(table, _Refusals())
        if counts.answered >= ANSWERED_PER_INTERVAL:
            counts.unanswered[code] += 1
            return Refused(code, message, None, answer=False)
        counts.answered += 1
        return Refused(code, message, _transaction(payload), answer=True)


def _transaction(payload: bytes) -> str | int | None:
    """The caller's transaction id, for a response: read only from a request small enough
    to read, and only for the few refusals that are answered."""
    if len(payload) > MAX_REQUEST_BYTES:
        return None
    try:
        request = json.loads(payload)
    except (ValueError, RecursionError):
        return None
    transaction = request.get("transaction") if isinstance(request, dict) else None
    return transaction if isinstance(transaction, str | int) else None
