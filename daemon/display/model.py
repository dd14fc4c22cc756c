"""The pit as the display knows it: built from the broker's messages alone, sans I/O.

`PitModel.apply(topic, payload)` takes every message the display user may read and hands a
table's to its `TableModel` (daemon/display/table_model.py: the round followed, the
settlements, the notices, the bounds); `view(table)` is what the page shows of one table, as
JSON-ready data with the words already made (daemon/display/views.py), so the page's script
only lays it out.

What the model can show is what the broker told it, which is the hole-card guarantee: the
daemon never publishes a face-down card (`null` until `hole_card_revealed`), and the display
subscribes to nothing that could carry one (never `request/#`).

- Liveness (daemon/wire/availability.py): a table is live only while its availability and its
  node's bridge state both say `online`, and only while the display itself is connected to
  the broker; otherwise the view says why not, never stale-but-live.
- `version` grows with every change and each table remembers the version of its last
  change, so a server can send each browser only what changed since it last looked.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from daemon.display.alerts import alerts
from daemon.display.numbers import shift_view
from daemon.display.table_model import TableModel
from daemon.display.views import notice_view, round_view, settlement_view
from daemon.display.wording import GAME_NAMES, reader_text, words
from daemon.wire.availability import Liveness


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
            "round": round_view(round_),
            "alerts": self.alerts(table_id),
            "settlements": [settlement_view(s, split_seats) for s in table.settlements],
            "notices": [notice_view(n) for n in table.notices],
            "table_notices": [notice_view(n) for n in reversed(table.table_notices)],
            "history": len(table.history),
            "shift": shift_view(self.stats.get(table_id)),
        }

    def history(self, table_id: str) -> list[dict[str, Any]]:
        """The table's last finished rounds, newest first: asked for, not pushed."""
        return [
            {
                "round": record.round_id,
                "dealer": record.dealer,
                "settlements": [settlement_view(s, set()) for s in record.settlements],
                "notices": [notice_view(n) for n in record.notices],
            }
            for record in self.tables[table_id].history
        ]


# ---------------------------------------------------------------------- parsing
def _json_object(payload: bytes) -> dict[str, Any] | None:
    try:
        body = json.loads(payload)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    return body if isinstance(body, dict) else None
