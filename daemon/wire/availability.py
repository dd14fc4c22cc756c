"""Availability of daemons and tables, and the rule that joins them (decision D1, docs/mqtt.md).

Many daemons share one broker and one base topic. Each announces itself on its own
`<base>/bridge/<node>/state` (retained `online`/`offline`, its will `offline`), and each
table it serves on `<base>/<table>/availability` (retained JSON naming the node). A
daemon that is SIGKILLed publishes nothing more: the broker publishes its will, and its
tables' availability still says `online`. So a consumer joins the two:

    a table is live iff its availability says `online` AND the bridge state of the node it
    names says `online`.

Two daemons that claim one table (two PCs given one table, a lab PC left pointed at the
floor's broker) each say so on the table's availability: `conflict`, naming itself (`node`)
and the others it saw claim the table (`with`). Such a table is contested: never live, never
offline, whatever either publishes next, until one of them is gone (daemon.table.claims).

`Liveness` applies that rule to messages as they arrive; `watch` and `display` use it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Final

from daemon.wire.topics import valid_segment

ONLINE: Final = "online"
OFFLINE: Final = "offline"
CONFLICT: Final = "conflict"
STATES: Final = (ONLINE, OFFLINE, CONFLICT)


@dataclass(frozen=True, slots=True)
class Availability:
    """One availability message: its state, the node that wrote it, and (in a conflict) the
    other nodes it saw claim the table."""

    state: str
    node: str
    others: tuple[str, ...] = ()

    @property
    def nodes(self) -> tuple[str, ...]:
        """Every node the message names, the writer first."""
        return (self.node, *self.others)

    def payload(self) -> bytes:
        """The body of `<base>/<table>/availability`: a state, so no envelope."""
        body: dict[str, object] = {"state": self.state, "node": self.node}
        if self.state == CONFLICT:
            body["with"] = sorted(self.others)
        return json.dumps(body, separators=(",", ":")).encode()


def availability_payload(state: str, node: str) -> bytes:
    """`online` or `offline`, as `node` says it."""
    return Availability(state, node).payload()


def parse_availability(payload: bytes) -> Availability | None:
    """An availability message, or None when it is not one."""
    try:
        body = json.loads(payload)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    if not isinstance(body, dict):
        return None
    state, node, others = body.get("state"), body.get("node"), body.get("with", [])
    if state not in STATES or not isinstance(node, str) or not valid_segment(node):
        return None
    if not isinstance(others, list):
        return None
    if state == CONFLICT and not (others and all(_is_node(n) for n in others)):
        return None  # a conflict with nobody is no conflict
    return Availability(state, node, tuple(others) if state == CONFLICT else ())


def _is_node(value: object) -> bool:
    return isinstance(value, str) and valid_segment(value)


def parse_bridge_state(payload: bytes) -> str | None:
    """`online` or `offline` from a bridge state message, or None when it is neither."""
    text = payload.decode(errors="replace").strip()
    return text if text in (ONLINE, OFFLINE) else None


@dataclass(slots=True)
class Liveness:
    """What the retained availability topics say, joined by the rule above.

    An empty retained message (a topic cleared with `mosquitto_pub -r -n`) forgets what it
    cleared: a table nobody announces is not live.
    """

    nodes: dict[str, str] = field(default_factory=dict)  # node → online / offline
    tables: dict[str, Availability] = field(default_factory=dict)

    def on_bridge_state(self, node: str, payload: bytes) -> None:
        state = parse_bridge_state(payload)
        if state is None:
            self.nodes.pop(node, None)
        else:
            self.nodes[node] = state

    def on_availability(self, table: str, payload: bytes) -> None:
        parsed = parse_availability(payload)
        if parsed is None:
            self.tables.pop(table, None)
        else:
            self.tables[table] = parsed

    def node_of(self, table: str) -> str | None:
        announced = self.tables.get(table)
        return None if announced is None else announced.node

    def is_live(self, table: str) -> bool:
        announced = self.tables.get(table)
        if announced is None:
            return False
        return announced.state == ONLINE and self.nodes.get(announced.node) == ONLINE

    def contested(self, table: str) -> tuple[str, ...] | None:
        """The nodes that claim the table, sorted, while a live one of them says it is
        contested; None when it is not."""
        announced = self.tables.get(table)
        if announced is None or announced.state != CONFLICT:
            return None
        if not any(self.nodes.get(node) == ONLINE for node in announced.nodes):
            return None  # every claimant is gone: the table is not served, not contested
        return tuple(sorted(announced.nodes))

    def describe(self, table: str) -> str:
        """In words, for a person: `live`, or why not."""
        announced = self.tables.get(table)
        if announced is None:
            return "no daemon serves it"
        contested = self.contested(table)
        if contested is not None:
            return f"claimed by two daemons at once: {' and '.join(contested)}"
        if announced.state == CONFLICT:
            return f"daemons {' and '.join(sorted(announced.nodes))} are gone"
        node = announced.node
        if announced.state != ONLINE:
            return f"daemon {node} stopped it"
        if self.nodes.get(node) != ONLINE:
            return f"daemon {node} is gone"
        return "live"
