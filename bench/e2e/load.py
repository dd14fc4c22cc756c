"""The open-loop load: what every table's shoe deals and its dealer console sends, and when.

Built before it is played, and played without waiting for the daemon. Each table's rounds
come from the basic-strategy player (`rules.player.Dealer`, wagers from the console
simulator's `daemon.simulator.wager_plan`) on its own seeded shoe, so every event is one the
rules accept in that order. The events become steps: a `CardStep` for each card the shoe
deals (with the new shoe before it, if there was one) and a `RequestStep` for each request
the dealer console sends (`daemon.wire.console`): each window's wagers with its "No more bets"
in one request (the layout), and each decision; with `layout=False`, each wager its own
request, as consoles sent them before the layout was a request. The same events
run, one at a time, through a second engine: that is a replay, and it says which settlements
each step decides (`Step.settles`), so the benchmark knows every settlement that must come out
and which card or request decided it.

The timetable (`TableLoad.steps`): at `pace` cards a second a table deals its k-th card at
`phase + k / pace` seconds; the requests between the (k-1)-th and the k-th card go out
together half way between them. So, at any pace, a request is sent after the card it follows
and half a card interval before the card that closes its window (the first card of the deal
closes the wagers; the card a hit asks for follows the hit). A daemon that applies each step
within half an interval keeps every request in its window; one that falls further behind may
apply a card before the request meant to precede it (or a request before the card meant to
precede it), which the benchmark detects by the order of the daemon's own sequence numbers
and reports as overload, never as a wrong result.

Pure: no clock, no I/O except `RoundLogWriter`, which writes what was played as a round log
(docs/events.md) for `shoe2mqtt replay`.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, TextIO

from daemon.round_log import round_log
from daemon.simulator import wager_plan
from daemon.wire.console import Layout, console_request, layout_request, with_layouts
from rules.engine import TableEngine
from rules.events import DealCard, Shuffle, event_to_mapping
from rules.outputs import Settlement
from rules.player import Dealer

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from rules.cards import Card
    from rules.config import TableConfig
    from rules.events import TableEvent

SETTLEMENT_KEY: Final = ("round", "seat", "hand", "wager", "order", "phase")
REQUEST_POSITION: Final = 0.5  # where between two cards the requests go, as a fraction


def settlement_key(record: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(record[k] for k in SETTLEMENT_KEY)


# The share of seats that make each bonus wager: most, so that a bonus's every path is loaded.
BONUS_ODDS: Final = 0.9


@dataclass(slots=True)
class CardStep:
    """The shoe deals `card` (a new shoe first, when `shuffled`): the table's `number`-th card."""

    table: str
    number: int
    at: float  # seconds from the table's start
    card: Card
    burned: bool
    shuffled: bool
    events: list[TableEvent]  # what the round log records for it: [Shuffle,] DealCard
    settles: list[dict[str, Any]] = field(default_factory=list)  # the replay's settlements


@dataclass(slots=True)
class RequestStep:
    """The dealer console sends `command` with `body`, after the table's `cards_before`-th card."""

    table: str
    number: int
    at: float
    command: str
    body: dict[str, Any]  # with its transaction id
    cards_before: int
    events: list[TableEvent]
    settles: list[dict[str, Any]] = field(default_factory=list)


Step = CardStep | RequestStep


class TableLoad:
    """One table's endless rounds, as timed steps; `steps()` plays them out lazily."""

    def __init__(
        self, config: TableConfig, seed: int, *, pace: float, phase: float, layout: bool = True
    ) -> None:
        if pace <= 0:
            raise ValueError(f"pace: cards a second above 0, not {pace}")
        self.config = config
        self.table = config.table_id
        self.pace = pace
        self.phase = phase
        self._rng = random.Random(seed)  # noqa: S311 - a benchmark's shoe, not a secret
        self._dealer = Dealer(TableEngine(config), self._rng)
        self._replay = TableEngine(config)  # the auditor's engine: one event at a time
        self._cards = 0
        self._requests = 0
        # The console sends a window's wagers with its "No more bets" (one request), or each
        # wager as its own request before it (`layout=False`).
        self.layout = layout

    def steps(self) -> Iterator[Step]:
        """Every step in order, round after round, for as long as the caller takes them."""
        shuffled = False
        while True:
            played = self._dealer.play(wager_plan(self.config, self._rng, BONUS_ODDS))
            events = with_layouts(played.events) if self.layout else played.events
            for event in events:
                if isinstance(event, Shuffle):
                    shuffled = True  # the shoe says so with its next card
                elif isinstance(event, Layout):
                    yield self._step(event.events, layout_request(event.wagers))
                else:
                    yield self._step([Shuffle(), event] if shuffled else [event])
                    shuffled = False

    def _step(
        self, events: list[TableEvent], request: tuple[str, dict[str, Any]] | None = None
    ) -> Step:
        settles = [
            output.to_mapping()
            for applied in events
            for output in self._replay.apply(applied)
            if isinstance(output, Settlement)
        ]
        event, shuffled = events[-1], isinstance(events[0], Shuffle)
        if isinstance(event, DealCard):
            self._cards += 1
            return CardStep(
                self.table, self._cards, self._card_time(self._cards), event.card,
                event.burned, shuffled, events, settles,
            )  # fmt: skip
        self._requests += 1
        command, body = request or console_request(event)
        transaction = f"{self.table}-{self._requests}"
        at = self._card_time(self._cards) + REQUEST_POSITION / self.pace
        return RequestStep(
            self.table, self._requests, at, command, {"transaction": transaction, **body},
            self._cards, events, settles,
        )  # fmt: skip

    def _card_time(self, number: int) -> float:
        return self.phase + number / self.pace


class RoundLogWriter:
    """The round log of what was actually played at one table, written as it is played."""

    def __init__(self, config: TableConfig, path: Path) -> None:
        self.path = path
        self._file: TextIO = path.open("w", encoding="utf-8")
        self._file.write(round_log(config, [])[0] + "\n")

    def played(self, step: Step) -> None:
        self._file.writelines(json.dumps(event_to_mapping(e)) + "\n" for e in step.events)

    def close(self) -> None:
        self._file.close()
