"""The round snapshot as a state: retained, the latest value, outside the table's numbering.

Under the dealer console's contract 3 (docs/mqtt.md, "The round state") a table's round
snapshot is no numbered message. `TableService.snapshot()` makes the state's message (`seq`
0, no `id`, `as_of` = the `seq` of the last numbered message it reflects); inside
`TableService.apply` it only notes that the round changed (`ROUND_CHANGED`, taken out of what the
event caused), and the daemon publishes the table's *current* state through `RoundStates`:

- at once when the round's phase changed since the last state it published (a round opened
  or ended, the stage moved, a betting window opened or closed, the table began or stopped
  holding its cards for a doubt), and at a (re)start (nothing published yet);
- otherwise at most every `INTERVAL` seconds while the round changes: the first change
  after a quiet interval goes at once, later ones wait for the interval's end and go as one
  state, the latest.

So a display that starts from the state and applies the numbered messages after its `as_of`
is never more than `INTERVAL` behind what the numbered messages told it, and a burst of
requests (a console placing seven seats' wagers at once) costs one state, not one each.
Numbered messages keep decision D4: every one is a pure function of the journal, `seq` 1,
2, 3... with no gap; which states were published depends on time, which a state may.

`RoundThrottle` is the rule alone, sans-I/O: times are given, nothing sleeps; `RoundStates`
keeps one per table and hands each state to the outbox (`publish`); `run` is its clock.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from daemon.wire.envelope import Outbound

# STATE_CONTRACT: the first console contract under which the round snapshot is a state
# (journaled with each start, so a journal written under 2 replays its numbered snapshots byte
# for byte); ROUND_CONTRACT: the first under which an input is one numbered message, the round
# as it stands after it with what the input caused (`Publishing.one_message`).
from daemon.wire.round_message import ROUND_CONTRACT, STATE_CONTRACT

__all__ = [
    "CARRIED",
    "INTERVAL",
    "ROUND_CHANGED",
    "ROUND_CONTRACT",
    "STATE_CONTRACT",
    "RoundStates",
    "RoundThrottle",
    "phase",
    "state_message",
]

if TYPE_CHECKING:
    from collections.abc import Callable

    from daemon.table.service import TableService

INTERVAL: Final = 0.25  # seconds: the most a published state lags the round it shows

Phase = tuple[Any, ...]
# What `TableService.snapshot()` gives inside `TableService.apply` under contract 3: the round
# changed, no message (`TableService.apply` takes it out); the state is made when it is sent.
ROUND_CHANGED: Final = Outbound("", b"", 1, True, "", 0)
# What a numbered message's maker gives inside `TableService.apply` under contract 4: its body
# is carried by the input's one message on `<table>/round` (`Publishing.one_message`).
CARRIED: Final = Outbound("", b"", 1, False, "", 0)


def state_message(topic: str, body: dict[str, Any], *, as_of: int, ts: str) -> Outbound:
    """The round state on `topic`: the snapshot's body with `as_of` and `ts`, and no `id`
    nor `seq` (a state: the latest replaces what came before; `seq` 0 marks it outside the
    table's numbering, as the request gate's refusals are)."""
    stamped = {"type": "round_snapshot", "as_of": as_of, "ts": ts, **body}
    payload = json.dumps(stamped, separators=(",", ":"), ensure_ascii=False).encode()
    return Outbound(topic, payload, 1, True, "", 0)


def phase(service: TableService) -> Phase:
    """What of the table, changed, is published at once: the round, its stage, whether a
    betting window is open, whether the table holds its cards for a doubt."""
    round_ = service.engine.round
    holding = service.custody.doubt is not None
    if round_ is None:
        return (None, None, False, holding)
    return (round_.round_id, round_.stage, round_.betting_open, holding)


@dataclass(slots=True)
class RoundThrottle:
    """When one table's round state goes out (the module's rule), on a clock it is given."""

    interval: float = INTERVAL
    _sent_at: float | None = None  # when the last state went out
    _phase: Phase | None = None  # the phase it showed
    _pending: bool = False  # a change since then waits for the interval's end

    def changed(self, phase: Phase, now: float) -> bool:
        """The round changed at `now` and is in `phase`: True to publish now (then `sent`);
        False: it waits, and `due_at` says until when."""
        if self._sent_at is None or phase != self._phase or now - self._sent_at >= self.interval:
            return True
        self._pending = True
        return False

    def sent(self, phase: Phase, now: float) -> None:
        self._sent_at, self._phase, self._pending = now, phase, False

    @property
    def due_at(self) -> float | None:
        """When the waiting change goes out; None when nothing waits."""
        if not self._pending or self._sent_at is None:
            return None
        return self._sent_at + self.interval


class RoundStates:
    """Every table's round state, published through `publish` as the throttle allows.

    `applied(table_id, service, now)` after each journaled event the table applied;
    `publish_due(now)` publishes what waited and is due; `run(clock)` calls it on time.
    """

    def __init__(self, publish: Callable[[Outbound], None], *, interval: float = INTERVAL) -> None:
        self._publish = publish
        self._interval = interval
        self._throttles: dict[str, RoundThrottle] = {}
        self._services: dict[str, TableService] = {}
        self._wake = asyncio.Event()

    def applied(self, table_id: str, service: TableService, now: float) -> None:
        if not service.take_round_change():
            return
        throttle = self._throttles.setdefault(table_id, RoundThrottle(self._interval))
        self._services[table_id] = service
        current = phase(service)
        if throttle.changed(current, now):
            self._send(table_id, throttle, current, now)
        else:
            self._wake.set()

    def next_due(self) -> float | None:
        return min(
            (t.due_at for t in self._throttles.values() if t.due_at is not None), default=None
        )

    def publish_due(self, now: float) -> None:
        for table_id, throttle in self._throttles.items():
            due_at = throttle.due_at
            if due_at is not None and due_at <= now:
                self._send(table_id, throttle, phase(self._services[table_id]), now)

    def flush(self) -> None:
        """Publish every state that waits, now (the daemon stops: the latest goes out)."""
        self.publish_due(float("inf"))

    def _send(self, table_id: str, throttle: RoundThrottle, current: Phase, now: float) -> None:
        throttle.sent(current, now)
        self._publish(self._services[table_id].snapshot())

    async def run(self, clock: Callable[[], float]) -> None:
        """Publish each waiting state when it is due (`clock`: the loop's monotonic time)."""
        while True:
            self._wake.clear()
            due_at = self.next_due()
            # Woken by every change that waits: another table's may be due sooner.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(None if due_at is None else max(0.0, due_at - clock())):
                    await self._wake.wait()
            self.publish_due(clock())
