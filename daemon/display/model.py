"""The pit as the display knows it: built from the broker's messages alone, sans I/O.

`PitModel.apply(topic, payload)` takes every message the display user may read;
`view(table)` is what the page shows of one table, as JSON-ready data with the words
already made (daemon/display/wording.py), so the page's script only lays it out.

What the model can show is what the broker told it, which is the hole-card guarantee: the
daemon never publishes a face-down card (`null` until `hole_card_revealed`), and the display
subscribes to nothing that could carry one (never `request/#`).

- Liveness (daemon/wire/availability.py): a table is live only while its availability and its
  node's bridge state both say `online`, and only while the display itself is connected to
  the broker; otherwise the view says why not, never stale-but-live.
- A table's round starts from the daemon's round state (retained, `as_of` the last `seq` it
  reflects) and follows the numbered events after it (daemon/display/following.py), so the
  view never lags the events nor shows a settlement beside a hole card still face down; the
  next state replaces what the events made of the last.
- Each table keeps its current round's settlements, all of them, in the order the daemon
  published them (the regulations' order), merged from the retained snapshot and the live
  settlement messages and deduplicated; and the last `HISTORY` rounds for "on demand".
- Every list is bounded, as the daemon bounds its own: a round's latest `ROUND_NOTICES`
  notices (the daemon's snapshot keeps as many: a console that fills a round with refused
  wagers grows neither), at most `ROUND_SETTLEMENTS` settlements (far more than any round
  settles), `HISTORY` rounds, `_TABLE_NOTICES` notices between rounds; and a notice's text
  is shown up to `NOTICE_TEXT` characters. So a table's view, and the stream's update of
  it, has a size bound whatever the broker sends.
- `version` grows with every change and each table remembers the version of its last
  change, so a server can send each browser only what changed since it last looked.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Final

from daemon.display.alerts import alerts
from daemon.display.following import fold
from daemon.display.numbers import shift_view
from daemon.display.wording import (
    GAME_NAMES,
    NOTICE_CLASSES,
    STAGE_NAMES,
    WAGER_NAMES,
    money,
    reader_text,
    settlement_parts,
    settlement_text,
    words,
)
from daemon.wire.availability import Liveness

HISTORY: Final = 10  # finished rounds kept per table, newest first
# A round's latest notices: as many as the daemon's snapshot keeps (daemon.table.state
# MAX_ROUND_NOTICES; tests/display/test_model.py holds the two equal).
ROUND_NOTICES: Final = 50
# Seven seats, each hand split up to four times, every wager of the game settled: a few dozen.
# More is no round's; the first ones, in the regulations' order, are kept.
ROUND_SETTLEMENTS: Final = 256
NOTICE_TEXT: Final = 300  # characters of a notice shown; the daemon's own are under 200
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
        return None if self.round is None else _int_or_none(self.round.get("id"))

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
                return self.take_state(body)
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
        as_of = _int_or_none(body.get("as_of", body.get("seq")))
        if as_of is not None and self.as_of is not None and as_of < self.as_of:
            return False
        if as_of is not None:
            self.as_of = as_of
            while self.followed and (_int_or_none(self.followed[0].get("seq")) or 0) <= as_of:
                self.followed.popleft()
        self.take_snapshot(body)
        for event in self.followed:
            self._fold(event)
        return True

    def take_event(self, body: dict[str, Any]) -> bool:
        """A numbered round event: applied to the round the view shows, unless the round
        state taken already reflects it."""
        seq = _int_or_none(body.get("seq"))
        if seq is None or (self.as_of is not None and seq <= self.as_of):
            return False
        self.followed.append(body)
        return self._fold(body)

    def _fold(self, event: dict[str, Any]) -> bool:
        after = fold(self.round, event)
        if after is self.round:
            return False
        new_round = _int_or_none(event.get("round")) != self.round_id
        if event.get("type") == "round_opened" and new_round:
            self._finish_round()
            self.review, self.awaiting = [], None
        self.round = after
        return True

    def take_snapshot(self, body: dict[str, Any]) -> None:
        fresh = body.get("round") if isinstance(body.get("round"), dict) else None
        fresh_id = None if fresh is None else _int_or_none(fresh.get("id"))
        if fresh_id != self.round_id:
            self._finish_round()
        self.game = str(body.get("game") or self.game or "") or None
        self.round = fresh
        self.review = [str(r) for r in body.get("review") or []]
        self.awaiting_entry = _int_or_none(body.get("awaiting_card_entry")) or 0
        self.doubt = str(body["doubt"]) if body.get("doubt") else None
        self.cards_held = _int_or_none(body.get("cards_held")) or 0
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
        round_id = _int_or_none(body.get("round"))
        if round_id is not None and self.round_id is not None and round_id < self.round_id:
            return  # a late repeat of a round already finished
        if len(self.settlements) < ROUND_SETTLEMENTS and all(
            _settlement_key(s) != _settlement_key(body) for s in self.settlements
        ):
            self.settlements.append(body)

    def take_notice(self, body: dict[str, Any]) -> None:
        round_id = _int_or_none(body.get("round"))
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


@dataclass(slots=True)
class PitModel:
    """Every table the broker told the display about, keyed by table id."""

    base: str = "shoe2mqtt"
    only_table: str | None = None
    broker: str = "connecting"  # the display's own connection: connecting, connected, lost
    tables: dict[str, TableModel] = field(default_factory=dict)
    liveness: Liveness = field(default_factory=Liveness)
    version: int = 0
    stats: dict[str, dict[str, Any]] = field(default_factory=dict)  # <table>/stats: the shift
    days: dict[str, dict[str, Any]] = field(default_factory=dict)  # <table>/days: closed days

    # ------------------------------------------------------------ the broker connection
    def broker_connected(self) -> None:
        """A fresh connection: what the retained messages say now replaces what we knew.

        Availability is forgotten first: a daemon that died while the display was away
        from a broker that lost its retained messages would otherwise stay live forever.
        """
        self.broker = "connected"
        self.liveness = Liveness()
        self._touch_all()

    def broker_lost(self) -> None:
        self.broker = "lost"
        self._touch_all()

    # ------------------------------------------------------------ messages
    def apply(self, topic: str, payload: bytes) -> bool:
        """Take one message; True when the view changed."""
        route = self._route(topic)
        if route is None:
            return False
        match route:
            case ["bridge", node, "state"]:
                self.liveness.on_bridge_state(node, payload)
                self._touch_all()  # any table may name this node
                return True
            case ["bridge", *_]:  # the daemons' own words (bridge/<node>/info): no table's
                return False
            case [table_id, "availability"]:
                self.liveness.on_availability(table_id, payload)
                self._touch(self._table(table_id))
                return True
            case [table_id, "stats" | "days" as kind]:  # the numbers (display/numbers.py)
                return self._take_numbers(table_id, kind, payload)
        body = _json_object(payload)
        changed = body is not None and self._table(route[0]).take(route[1:], body)
        if changed:
            self._touch(self.tables[route[0]])
        return changed

    def _take_numbers(self, table_id: str, kind: str, payload: bytes) -> bool:
        """The shift's numbers (`stats`) or the closed days (`days`, the numbers page's)."""
        body = _json_object(payload)
        if body is None:
            return False
        (self.stats if kind == "stats" else self.days)[table_id] = body
        self._touch(self._table(table_id))
        return True

    def _route(self, topic: str) -> list[str] | None:
        parts = topic.split("/")
        base = self.base.split("/")
        rest = parts[len(base) :]
        if parts[: len(base)] != base or len(rest) < 2:
            return None
        if rest[0] != "bridge" and self.only_table is not None and rest[0] != self.only_table:
            return None
        return rest

    def _table(self, table_id: str) -> TableModel:
        return self.tables.setdefault(table_id, TableModel(table_id))

    def _touch(self, table: TableModel) -> None:
        self.version += 1
        table.version = self.version

    def _touch_all(self) -> None:
        self.version += 1
        for table in self.tables.values():
            table.version = self.version

    # ------------------------------------------------------------ what the page shows
    def is_live(self, table_id: str) -> bool:
        return self.broker == "connected" and self.liveness.is_live(table_id)

    def availability(self, table_id: str) -> str:
        """`live`, or in words why the table is not."""
        if self.broker == "connecting":
            return "connecting to the broker"
        if self.broker != "connected":
            return "the display has lost the broker"
        return self.liveness.describe(table_id)

    def changed_since(self, version: int) -> list[str]:
        return sorted(t for t, model in self.tables.items() if model.version > version)

    def contested(self, table_id: str) -> tuple[str, ...] | None:
        """The daemons that claim the table at once (daemon/table/claims.py), or None: such a table
        is neither live nor OFFLINE, and the page names them."""
        if self.broker != "connected":
            return None
        return self.liveness.contested(table_id)

    def alerts(self, table_id: str) -> list[dict[str, str]]:
        """What must stand out for the table, most urgent first (the view's `alerts`)."""
        return alerts(
            self.tables[table_id],
            None if self.is_live(table_id) else self.availability(table_id),
            contested=self.contested(table_id) is not None,
        )

    def view(self, table_id: str) -> dict[str, Any]:
        table = self.tables[table_id]
        live = self.is_live(table_id)
        availability = self.availability(table_id)
        round_ = table.round
        split_seats = {
            seat.get("seat")
            for seat in (round_ or {}).get("seats") or []
            if len(seat.get("hands") or []) > 1
        }
        return {
            "table": table_id,
            "game": table.game,
            "game_name": GAME_NAMES.get(str(table.game), words(table.game or "?")),
            "live": live,
            "availability": availability,
            "node": self.liveness.node_of(table_id),
            "contested": list(self.contested(table_id) or []) or None,
            "reader": {
                "link": table.reader.get("link"),
                "text": reader_text(table.reader),
                "faults": [
                    f"{words(f.get('kind'))} (code {f.get('code')})"
                    for f in table.reader.get("faults") or []
                    if isinstance(f, dict)
                ],
            },
            "round": _round_view(round_),
            "alerts": self.alerts(table_id),
            "settlements": [_settlement_view(s, split_seats) for s in table.settlements],
            "notices": [_notice_view(n) for n in table.notices],
            "table_notices": [_notice_view(n) for n in reversed(table.table_notices)],
            "history": len(table.history),
            "shift": shift_view(self.stats.get(table_id)),
        }

    def history(self, table_id: str) -> list[dict[str, Any]]:
        """The table's last finished rounds, newest first: asked for, not pushed."""
        return [
            {
                "round": record.round_id,
                "dealer": record.dealer,
                "settlements": [_settlement_view(s, set()) for s in record.settlements],
                "notices": [_notice_view(n) for n in record.notices],
            }
            for record in self.tables[table_id].history
        ]


# ---------------------------------------------------------------------- views
def _round_view(round_: dict[str, Any] | None) -> dict[str, Any] | None:
    if round_ is None:
        return None
    turn = round_.get("turn") or {}
    dealer = round_.get("dealer") or {}
    stage = str(round_.get("stage"))
    return {
        "id": round_.get("id"),
        "stage": stage,
        "stage_name": STAGE_NAMES.get(stage, words(stage)),
        "dealer": {
            "cards": [c if isinstance(c, str) else None for c in dealer.get("cards") or []],
            "total": dealer.get("total"),
        },
        "seats": [
            {
                "seat": seat.get("seat"),
                "wagers": [
                    {"name": WAGER_NAMES.get(kind, words(kind)), "amount": money(amount)}
                    for kind, amount in (seat.get("wagers") or {}).items()
                ],
                "hands": [
                    {
                        "hand": hand.get("hand"),
                        "cards": [str(c) for c in hand.get("cards") or []],
                        "total": hand.get("total"),
                        "soft": bool(hand.get("soft")),
                        "doubled": bool(hand.get("doubled")),
                        "ended": None if hand.get("ended") is None else words(hand["ended"]),
                        "turn": turn == {"seat": seat.get("seat"), "hand": hand.get("hand")},
                    }
                    for hand in seat.get("hands") or []
                ],
            }
            for seat in round_.get("seats") or []
        ],
    }


def _settlement_view(body: dict[str, Any], split_seats: set[Any]) -> dict[str, Any]:
    show_hand = body.get("seat") in split_seats
    who, what, action = settlement_parts(body, show_hand=show_hand)
    return {
        "key": "-".join(str(body.get(k)) for k in ("round", "seat", "hand", "wager")),
        "seat": body.get("seat"),
        "result": body.get("result"),
        "phase": body.get("phase"),  # when in the round the rules settled it
        "who": who,
        "what": what,
        "action": action,
        "text": settlement_text(body, show_hand=show_hand),
        "floorperson": bool(body.get("floorperson")),
        "review": bool(body.get("review")),
    }


def _notice_view(body: dict[str, Any]) -> dict[str, Any]:
    kind = str(body.get("kind"))
    css, label = NOTICE_CLASSES.get(kind, ("info", words(kind).upper()))
    text = str(body.get("message") or "")
    if len(text) > NOTICE_TEXT:
        text = text[: NOTICE_TEXT - 1] + "…"
    return {"kind": kind, "class": css, "label": label, "text": text}


# ---------------------------------------------------------------------- parsing
def _json_object(payload: bytes) -> dict[str, Any] | None:
    try:
        body = json.loads(payload)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    return body if isinstance(body, dict) else None


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _settlement_key(body: dict[str, Any]) -> tuple[Any, ...]:
    # One settlement per wager of a hand: the rules settle each exactly once.
    return tuple(body.get(k) for k in ("round", "seat", "hand", "wager"))


def _notice_key(body: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(body.get(k) for k in ("round", "kind", "seat", "message"))
