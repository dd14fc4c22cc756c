"""A table's numbers for the shift now, kept as the daemon applies each event: `<table>/stats`.

Sans-I/O. `ShiftStats` is fed what the replay makes of each journaled event (the event's
journal line when it is a request, which may name the dealer, and the messages it caused) and
folds them with the same `RoundFolder` and `Numbers` as a report (daemon/numbers/records.py,
tally.py): when a round ends it counts it into the shift it began in, starting afresh when a
new shift begins, and says so, so that the daemon publishes the state and sets its metrics.

The state is a pure function of the journal, like everything the daemon publishes, but it
depends on the whole shift: the daemon saves it every few rounds (daemon/numbers/saved.py)
and a restart counts on from there (daemon/numbers/rebuild.py). It carries no envelope (a
state, as `<table>/journal` is): the shift, when it was last counted, the report's JSON of
the shift's numbers (amounts in cents), and the shift's last rounds (`history`) for the
display's numbers page, which a page loaded later reads from the retained state.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from daemon.numbers.kept_lines import KeptLines
from daemon.numbers.records import RoundFolder, RoundRecord
from daemon.numbers.tally import Numbers

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from daemon.numbers.periods import Shifts
    from daemon.wire.envelope import Outbound

HISTORY: Final = 500  # the shift's last rounds the state carries (60 an hour, 8 hours)
_QUIET_SNAPSHOT = re.compile(rb'"doubt":\s*null')  # a snapshot that flags nothing: not read
# A round message of console contract 4 that carries events: read, however quiet its round.
_CARRIES = re.compile(rb'"events":\s*\[\s*\{')


@dataclass(slots=True)
class ShiftStats:
    """One table's shift: its numbers and its last rounds."""

    table: str
    shifts: Shifts
    confidence: float = 0.999
    shift: str | None = None
    numbers: Numbers = field(default_factory=Numbers)
    # The shift's last rounds, each as the JSON text `<table>/stats` carries: encoded once,
    # at the round's end, not again at every later round's, and kept compressed in blocks (a
    # shift of 500 rounds is some 150 KiB of JSON; its dicts held a kilobyte a round, the
    # text a third of that, the blocks a sixth of the text: daemon/numbers/kept_lines.py).
    history: KeptLines = field(default_factory=lambda: KeptLines(HISTORY))
    updated: str | None = None
    mapping: dict[str, Any] | None = None  # the numbers as last counted (band included)
    folder: RoundFolder = field(init=False)

    def __post_init__(self) -> None:
        self.folder = RoundFolder(self.table)

    def feed_lines(self, lines: Iterable[Mapping[str, Any]]) -> bool:
        """Round-log lines (a replay of the shift, at start); True when a round was counted."""
        counted = False
        for line in lines:
            counted |= self.take(self.folder.feed(line))
        return counted

    def feed(self, request: Mapping[str, Any] | None, messages: Iterable[Outbound]) -> bool:
        """One applied event: its journal line if it is a request, and each message it
        caused (read from its body as sealed, or else decoded). True when a round ended and
        was counted."""
        counted = False
        if request is not None:
            self.folder.feed(request)
        for message in messages:
            body = message.body
            if body is None:
                body = _read(message.topic, message.payload)
            elif message.topic.endswith("/round") and _quiet(body):
                body = None
            if body is not None:
                counted |= self.take(self.folder.message(body))
        return counted

    def take(self, records: Iterable[Any]) -> bool:
        """Records the folder made (rounds, shoes); True when a round was counted."""
        counted = False
        for record in records:
            if isinstance(record, RoundRecord):
                label = self.shifts.shift_label(record.started)
                if label != self.shift:  # a new shift: counted afresh
                    self.shift = label
                    self.history.clear()
                    self.numbers = Numbers({"table": self.table, "shift": label})
                self.numbers.add(record)
                # The shift's stakes are new at every round's end: each band is solved once
                # and not remembered, where the reports' bands are (rules.analysis.band).
                self.mapping = self.numbers.to_mapping(self.confidence, remember=False)
                summary = {**_summary(record), "holds": _holds(self.mapping)}
                self.history.append(_encoded(summary))
                self.updated = record.ended.isoformat(timespec="milliseconds")
                counted = True
            elif self.shift is not None:
                self.numbers.add_shoe(record)
        return counted

    def state(self) -> dict[str, Any]:
        return {**self._head(), "history": [json.loads(line) for line in self.history.lines()]}

    def payload(self) -> bytes:
        """`state()` as JSON, its history's rounds as they were encoded at their ends."""
        head = _encoded(self._head())
        return head[:-1] + b',"history":[' + b",".join(self.history.lines()) + b"]}"

    def _head(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "shift": self.shift,
            "updated": self.updated,
            "numbers": self.mapping,
        }


def _quiet(body: Mapping[str, Any]) -> bool:
    """A round message that flags nothing and carries no event: nothing of it counts. The
    body's own `doubt` and `events` are read (a response's snapshot inside it has the same
    doubt at the same moment), as the regular expressions find them in its bytes."""
    if "doubt" not in body or body["doubt"] is not None:
        return False
    events = body.get("events")
    return not (isinstance(events, list) and events and isinstance(events[0], dict))


def _read(topic: str, payload: bytes) -> Mapping[str, Any] | None:
    """A message known by its bytes alone, decoded; None for a quiet round message (the
    largest, and most of them: it is not decoded) or for anything but an object."""
    round_message = topic.endswith("/round")
    if round_message and _QUIET_SNAPSHOT.search(payload) and not _CARRIES.search(payload):
        return None
    message = json.loads(payload)
    return message if isinstance(message, dict) else None


def _encoded(value: dict[str, Any]) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _summary(record: RoundRecord) -> dict[str, Any]:
    """A round as the numbers page draws it: when, how long, what went on the bonus."""
    handle = sum(s.stake for s in record.settled if s.result != "void")
    house = sum(s.house_win for s in record.settled)
    return {
        "round": record.round_id,
        "started": record.started.isoformat(timespec="seconds"),
        "seconds": round((record.ended - record.started).total_seconds(), 1),
        "seats": record.seats,
        "dealer": record.dealer,
        "handle_cents": handle,
        "house_win_cents": house,
        "voided": record.voided,
    }


def _holds(mapping: dict[str, Any]) -> dict[str, list[float | None]]:
    """Each wager's hold so far in the shift, with its band and theoretical hold then: the
    numbers page draws the hold against its band over the shift from these."""
    holds = {}
    for money in mapping["wagers"]:
        band = money["band"] or [None, None]
        holds[money["wager"]] = [money["hold"], band[0], band[1], money["theoretical_hold"]]
    return holds
