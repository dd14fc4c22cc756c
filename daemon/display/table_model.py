"""One table as the display knows it: its round, followed from the broker's messages alone,
sans I/O (daemon/display/model.py routes each message to its table).

- A table's round starts from the daemon's round state (retained, `as_of` the last `seq` it
  reflects) and follows the numbered events after it (daemon/display/following.py), so the
  view never lags the events nor shows a settlement beside a hole card still face down; the
  next state replaces what the events made of the last. Under console contract 4 every
  input's one message is such a state, `as_of` its own `seq`: nothing is left to follow.
- Each table keeps its current round's settlements, all of them, in the order the daemon
  published them (the regulations' order), merged from the retained snapshot and the live
  settlement messages and deduplicated; and the last `HISTORY` rounds for "on demand".
- Every list is bounded, as the daemon bounds its own: a round's latest `ROUND_NOTICES`
  notices (the daemon's snapshot keeps as many: a console that fills a round with refused
  wagers grows neither), at most `ROUND_SETTLEMENTS` settlements (far more than any round
  settles), `HISTORY` rounds, `_TABLE_NOTICES` notices between rounds (and a notice's text
  is shown up to `NOTICE_TEXT` characters, daemon/display/views.py). So a table's view, and
  the stream's update of it, has a size bound whatever the broker sends.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Final

from daemon.display.following import fold

HISTORY: Final = 10  # finished rounds kept per table, newest first
# A round's latest notices: as many as the daemon's snapshot keeps (daemon.table.state
# MAX_ROUND_NOTICES; tests/display/test_model.py holds the two equal).
ROUND_NOTICES: Final = 50
# Seven seats, each hand split up to four times, every wager of the game settled: a few dozen.
# More is no round's; the first ones, in the regulations' order, are kept.
ROUND_SETTLEMENTS: Final = 256
_TABLE_NOTICES: Final = 5  # notices outside a round (a reader unplugged between rounds)
_SEEN_IDS: Final = 1024  # ids remembered per table to drop QoS 1 repeats
# Numbered events kept after the round state's `as_of`, to apply again over the next state
# should it come older than they are (a state a broker kept, delivered after a reconnect).
_FOLLOWED: Final = 256


@dataclass(slots=True)
class RoundRecord:
    """A finished round, for the pit's "last rounds"."""

    round_id: int
    dealer: list[str | None]
    settlements: list[dict[str, Any]]
    notices: list[dict[str, Any]]


@dataclass(slots=True)
class TableModel:
    table: str
    game: str | None = None
    reader: dict[str, Any] = field(default_factory=dict)
    journal: dict[str, Any] = field(default_factory=dict)  # <table>/journal: can it be written
    round: dict[str, Any] | None = None
    review: list[str] = field(default_factory=list)
    awaiting_entry: int = 0
    doubt: str | None = None  # why the table holds the cards it receives for the dealer
    cards_held: int = 0
    # What the first held card waits for from the console (the snapshot's `awaiting`).
    awaiting: dict[str, Any] | None = None
    settlements: list[dict[str, Any]] = field(default_factory=list)
    notices: list[dict[str, Any]] = field(default_factory=list)
    table_notices: deque[dict[str, Any]] = field(
        default_factory=lambda: deque(maxlen=_TABLE_NOTICES)
    )
    history: deque[RoundRecord] = field(default_factory=lambda: deque(maxlen=HISTORY))
    seen_ids: deque[str] = field(default_factory=lambda: deque(maxlen=_SEEN_IDS))
    as_of: int | None = None  # the last `seq` the round state taken reflects
    followed: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=_FOLLOWED))
    version: int = 0

    @property
    def round_id(self) -> int | None:
        return None if self.round is None else int_or_none(self.round.get("id"))

    def take(self, route: list[str], body: dict[str, Any]) -> bool:
        """One message on `<base>/<table>/<route>`; False when it changes nothing: a QoS 1
        repeat (the same id), or a topic that is none of the display's."""
        event_id = body.get("id")
        if isinstance(event_id, str):
            if event_id in self.seen_ids:
                return False
            self.seen_ids.append(event_id)
        match route:
            case ["state"]:
                self.game = str(body.get("game") or self.game or "") or None
                reader = body.get("reader")
                self.reader = dict(reader) if isinstance(reader, dict) else {}
            case ["journal"]:
                self.journal = dict(body)
            case ["round"]:
                changed = self.take_state(body)
                self._take_carried(body)
                return changed
            case ["event", _]:
                return self.take_event(body)
            case ["settlement"]:
                self.take_settlement(body)
            case ["notice", _]:
                self.take_notice(body)
            case _:
                return False
        return True

    def take_state(self, body: dict[str, Any]) -> bool:
        """The round state (`as_of`; a numbered snapshot of an older daemon: its `seq`):
        the view it shows, with the numbered events after it applied again. One older than
        the state already taken changes nothing."""
        as_of = int_or_none(body.get("as_of", body.get("seq")))
        if as_of is not None and self.as_of is not None and as_of < self.as_of:
            return False
        if as_of is not None:
            self.as_of = as_of
            while self.followed and (int_or_none(self.followed[0].get("seq")) or 0) <= as_of:
                self.followed.popleft()
        self.take_snapshot(body)
        for event in self.followed:
            self._fold(event)
        return True

    def _take_carried(self, body: dict[str, Any]) -> None:
        """Under console contract 4 the round message carries what its input caused: the
        state holds the round's settlements and notices, not a notice told between rounds."""
        events = body.get("events")
        for event in events if isinstance(events, list) else []:
            if isinstance(event, dict) and event.get("type") == "notice":
                self.take_notice(event)

    def take_event(self, body: dict[str, Any]) -> bool:
        """A numbered round event: applied to the round the view shows, unless the round
        state taken already reflects it."""
        seq = int_or_none(body.get("seq"))
        if seq is None or (self.as_of is not None and seq <= self.as_of):
            return False
        self.followed.append(body)
        return self._fold(body)

    def _fold(self, event: dict[str, Any]) -> bool:
        after = fold(self.round, event)
        if after is self.round:
            return False
        new_round = int_or_none(event.get("round")) != self.round_id
        if event.get("type") == "round_opened" and new_round:
            self._finish_round()
            self.review, self.awaiting = [], None
        self.round = after
        return True

    def take_snapshot(self, body: dict[str, Any]) -> None:
        fresh = body.get("round") if isinstance(body.get("round"), dict) else None
        fresh_id = None if fresh is None else int_or_none(fresh.get("id"))
        if fresh_id != self.round_id:
            self._finish_round()
        self.game = str(body.get("game") or self.game or "") or None
        self.round = fresh
        self.review = [str(r) for r in body.get("review") or []]
        self.awaiting_entry = int_or_none(body.get("awaiting_card_entry")) or 0
        self.doubt = str(body["doubt"]) if body.get("doubt") else None
        self.cards_held = int_or_none(body.get("cards_held")) or 0
        awaiting = body.get("awaiting")
        self.awaiting = awaiting if isinstance(awaiting, dict) else None
        # The snapshot holds every settlement of the round so far, in order; a live one
        # that overtook it (none should, on one connection) stays after them.
        snapshot = [s for s in body.get("settlements") or [] if isinstance(s, dict)]
        known = {_settlement_key(s) for s in snapshot}
        self.settlements = snapshot + [
            s for s in self.settlements if _settlement_key(s) not in known
        ]
        del self.settlements[ROUND_SETTLEMENTS:]
        notices = [n for n in body.get("notices") or [] if isinstance(n, dict)]
        known = {_notice_key(n) for n in notices}
        self.notices = notices + [n for n in self.notices if _notice_key(n) not in known]
        del self.notices[:-ROUND_NOTICES]

    def take_settlement(self, body: dict[str, Any]) -> None:
        round_id = int_or_none(body.get("round"))
        if round_id is not None and self.round_id is not None and round_id < self.round_id:
            return  # a late repeat of a round already finished
        if len(self.settlements) < ROUND_SETTLEMENTS and all(
            _settlement_key(s) != _settlement_key(body) for s in self.settlements
        ):
            self.settlements.append(body)

    def take_notice(self, body: dict[str, Any]) -> None:
        round_id = int_or_none(body.get("round"))
        if round_id is None or self.round is None or round_id != self.round_id:
            self.table_notices.append(body)
        elif all(_notice_key(n) != _notice_key(body) for n in self.notices):
            self.notices.append(body)
            del self.notices[:-ROUND_NOTICES]  # the latest, as the daemon keeps them

    def _finish_round(self) -> None:
        if self.round_id is None:
            return
        dealer = (self.round or {}).get("dealer") or {}
        self.history.appendleft(
            RoundRecord(
                self.round_id,
                list(dealer.get("cards") or []),
                self.settlements,
                self.notices,
            )
        )
        self.settlements, self.notices = [], []


def int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _settlement_key(body: dict[str, Any]) -> tuple[Any, ...]:
    # One settlement per wager of a hand: the rules settle each exactly once.
    return tuple(body.get(k) for k in ("round", "seat", "hand", "wager"))


def _notice_key(body: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(body.get(k) for k in ("round", "kind", "seat", "message"))
