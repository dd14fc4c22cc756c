"""Availability of daemons and tables, and the rule that joins them (decision D1, docs/mqtt.md).

Many daemons share one broker and one base topic. Each announces itself on its own
`<base>/bridge/<node>/state` (retained `online`/`offline`, its will `offline`), and each
table it serves on `<base>/<table>/availability` (retained JSON naming the node). A
daemon that is SIGKILLed publishes nothing more: the broker publishes its will, and its
tables' availability still says `online`. So a consumer joins the two:

    a table is live iff its availability says `online` AND the bridge state of the node it
    names says `online`.

`Liveness` applies that rule to messages as they arrive; `watch` and `display` use it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Final

from daemon.topics import valid_segment

ONLINE: Final = "online"
OFFLINE: Final = "offline"


def availability_payload(state: str, node: str) -> bytes:
    """The body of `<base>/<table>/availability`: a state, so no envelope."""
    return json.dumps({"state": state, "node": node}, separators=(",", ":")).encode()


def parse_availability(payload: bytes) -> tuple[str, str] | None:
    """(state, node) of an availability message, or None when it is not one."""
    try:
        body = json.loads(payload)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    if not isinstance(body, dict):
        return None
    state, node = body.get("state"), body.get("node")
    if state not in (ONLINE, OFFLINE) or not isinstance(node, str) or not valid_segment(node):
        return None
    return state, node


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
    tables: dict[str, tuple[str, str]] = field(default_factory=dict)  # table → (state, node)

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
        return None if announced is None else announced[1]

    def is_live(self, table: str) -> bool:
        announced = self.tables.get(table)
        if announced is None:
            return False
        state, node = announced
        return state == ONLINE and self.nodes.get(node) == ONLINE

    def describe(self, table: str) -> str:
        """In words, for a person: `live`, or why not."""
        announced = self.tables.get(table)
        if announced is None:
            return "no daemon serves it"
        state, node = announced
        if state != ONLINE:
            return f"daemon {node} stopped it"
        if self.nodes.get(node) != ONLINE:
            return f"daemon {node} is gone"
        return "live"
