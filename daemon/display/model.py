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

from daemon.display.wording import (
    AWAITED,
    GAME_NAMES,
    NOTICE_CLASSES,
    REVIEW_REASONS,
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
                self.take_snapshot(body)
            case ["settlement"]:
                self.take_settlement(body)
            case ["notice", _]:
                self.take_notice(body)
            case _:
                return False
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
        body = _json_object(payload)
        changed = body is not None and self._table(route[0]).take(route[1:], body)
        if changed:
            self._touch(self.tables[route[0]])
        return changed

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
        return _alerts(
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


def _alerts(
    table: TableModel, offline: str | None, *, contested: bool = False
) -> list[dict[str, str]]:
    """What must stand out on the pit view, most urgent first, each in colour and words;
    `offline` says why the table is not live (None: it is); `contested`: because two
    daemons claim it (then it is not OFFLINE either: both serve it)."""
    alerts = []
    if contested and offline is not None:
        alerts.append({"class": "contested", "label": "CONTESTED", "text": offline})
    elif offline is not None:
        alerts.append({"class": "offline", "label": "OFFLINE", "text": offline})
    if table.journal.get("state") == "failing":
        reason = str(table.journal.get("reason") or "it cannot be written")
        text = f"{reason}: the table waits for it, and loses nothing the shoe holds"
        alerts.append({"class": "fault", "label": "JOURNAL", "text": text})
    link = table.reader.get("link")
    if link is not None and link not in ("connected", "starting"):
        alerts.append({"class": "fault", "label": "READER", "text": reader_text(table.reader)})
    for fault in table.reader.get("faults") or []:
        if isinstance(fault, dict):
            text = f"{words(fault.get('kind'))} (code {fault.get('code')})"
            alerts.append({"class": "fault", "label": "READER FAULT", "text": text})
    alerts += _custody_alerts(table)
    if table.review:
        reasons = ", ".join(REVIEW_REASONS.get(r, words(r)) for r in table.review)
        alerts.append({"class": "review", "label": "REVIEW", "text": f"this round: {reasons}"})
    alerts += [
        {"class": "floor", "label": "FLOORPERSON", "text": str(n.get("message") or "")}
        for n in table.notices
        if n.get("kind") == "floorperson_required"
    ]
    return alerts


def _custody_alerts(table: TableModel) -> list[dict[str, str]]:
    """The cards the table keeps back: unreadable ones to enter, one waiting for the dealer
    console's declaration, and those held for a doubt."""
    alerts = []
    if table.awaiting_entry:
        count = table.awaiting_entry
        cards = "card is" if count == 1 else "cards are"
        alerts.append(
            {
                "class": "entry",
                "label": "ENTER CARD",
                "text": f"{count} unreadable {cards} waiting: enter at the dealer console",
            }
        )
    if table.awaiting is not None and table.doubt is None:
        alerts.append({"class": "entry", "label": "WAITING", "text": awaiting_text(table)})
    if table.doubt is not None:
        held = table.cards_held
        cards = "no card held yet" if not held else f"{held} card{'s' if held > 1 else ''} held"
        reason = REVIEW_REASONS.get(table.doubt, words(table.doubt))
        alerts.append(
            {
                "class": "review",
                "label": "HOLD",
                "text": f"cards wait for the dealer console ({reason}): {cards}; "
                "enter any missed card, then confirm, or void the round",
            }
        )
    return alerts


def awaiting_text(table: TableModel) -> str:
    """`a card from the shoe waits for no more bets`, in the pit's words."""
    awaiting = table.awaiting or {}
    what = AWAITED.get(str(awaiting.get("declaration")), "the dealer console")
    cards = "a card waits" if table.cards_held <= 1 else f"{table.cards_held} cards wait"
    return f"{cards} for {what.format(seat=awaiting.get('seat'))} from the dealer console"


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
