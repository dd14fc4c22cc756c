"""One table, one daemon: another daemon's live claim on one of this daemon's tables.

Two daemons given one table (two PCs, a lab PC left pointed at the floor's broker) each answer
every request, number their messages alike and take turns at the table's retained
availability; a clean stop of either used to tell every display the live table was OFFLINE.
So each daemon watches its own tables' `<base>/<table>/availability` and every daemon's
`<base>/bridge/#` (state and info), and judges (docs/mqtt.md, "One table, one daemon"):

    node N claims table T iff N's latest word on T's availability is `online` or `conflict`,
    N's bridge state is `online`, and N's bridge info (when heard) lists T.

Only a message's writer (`node`) claims: a `conflict` names the others its writer saw, and
this daemon judges each of those by its own word. When another claim begins, the table's
availability becomes `{"state":"conflict","node":<this>,"with":[<the others>]}`: each side
writes its own once and then neither writes again while nothing changes, so the retained
value settles instead of flipping (whichever was written last says the same thing). The
daemon logs `table.claimed`, and its table holds every card for the dealer console
(`notice/table_claimed`, with hold). When the claim ends (the other's bridge goes offline,
it says `offline` on the table, or its info no longer lists the table) it logs
`table.claim_ended`, says so (`notice/table_claim_ended`) and the availability is `online`
again; the held cards wait for the dealer console. While contested, a clean stop says
nothing on the table's availability: never `offline` over another's claim.

Sans-I/O: messages in, changes out; the daemon publishes and queues the notices.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import structlog

from daemon.mqtt.presence import Presence
from daemon.wire.availability import (
    CONFLICT,
    OFFLINE,
    ONLINE,
    Availability,
    parse_availability,
    parse_bridge_state,
)

if TYPE_CHECKING:
    from collections.abc import Iterable

    from daemon.wire.topics import Topics

TABLE_CLAIMED: Final = "table_claimed"
CLAIM_ENDED: Final = "table_claim_ended"
log = structlog.get_logger("daemon.table.claims")


@dataclass(frozen=True, slots=True)
class ClaimChange:
    """The other daemons that claim `table`, before and after a message."""

    table: str
    before: tuple[str, ...]
    after: tuple[str, ...]

    @property
    def began(self) -> bool:
        """Someone new claims the table (the table holds its cards)."""
        return bool(set(self.after) - set(self.before))

    @property
    def kind(self) -> str:
        return TABLE_CLAIMED if self.began else CLAIM_ENDED

    def message(self, node: str) -> str:
        if self.began:
            return (
                f"{_daemons(self.after)} this table too, as this daemon ({node}) does: each "
                "answers every request and numbers its messages alike. Stop the one that "
                "should not serve it (a second PC, a copied configuration, a lab PC on this "
                "broker); until then every card is held"
            )
        gone = _daemons(sorted(set(self.before) - set(self.after)), claim="no longer claim")
        rest = f"; {_daemons(self.after)} it still" if self.after else ""
        alone = "" if self.after else f": daemon {node} alone serves it again"
        return (
            f"{gone} this table{rest}{alone}; the cards held meanwhile wait for the dealer console"
        )


class TableClaims:
    """What this daemon knows of other daemons' claims on its tables."""

    def __init__(self, topics: Topics, node: str, tables: Iterable[str]) -> None:
        self._topics = topics
        self._node = node
        self._words: dict[str, dict[str, str]] = {t: {} for t in tables}  # table → node → word
        self._bridges: dict[str, str] = {}  # node → online / offline
        self._serves: dict[str, frozenset[str]] = {}  # node → its tables, from its info
        self._claimed: dict[str, tuple[str, ...]] = dict.fromkeys(self._words, ())

    def watches(self) -> list[str]:
        """The topic filters to hear (QoS 1, retained states)."""
        base = self._topics.base
        return [f"{base}/bridge/+/state", f"{base}/bridge/+/info"] + [
            self._topics.availability(t) for t in self._words
        ]

    def contested(self, table: str) -> tuple[str, ...]:
        """The other daemons that claim `table` now, sorted."""
        return self._claimed[table]

    def presence(self, table: str) -> Presence:
        """The table's availability as this daemon keeps it: `online` (and `offline` on a
        clean stop), or while contested `conflict` (and nothing on a clean stop)."""
        topic, others = self._topics.availability(table), self._claimed[table]
        if others:
            return Presence(topic, Availability(CONFLICT, self._node, others).payload(), None)
        online, offline = Availability(ONLINE, self._node), Availability(OFFLINE, self._node)
        return Presence(topic, online.payload(), offline.payload())

    def heard(self, topic: str, payload: bytes) -> list[ClaimChange] | None:
        """Take a message on a watched topic; the changes it made (None: not a watched topic)."""
        parts = topic.removeprefix(f"{self._topics.base}/").split("/")
        match parts:
            case ["bridge", node, "state"]:
                self._bridge_state(node, payload)
            case ["bridge", node, "info"]:
                self._bridge_info(node, payload)
            case [table, "availability"] if table in self._words:
                self._availability(table, payload)
            case _:
                return None
        return self._changes()

    def _bridge_state(self, node: str, payload: bytes) -> None:
        state = parse_bridge_state(payload)
        if state is None:
            self._bridges.pop(node, None)
        else:
            self._bridges[node] = state
        if state != ONLINE:  # its claims ended with it; it says them again when it is back
            for words in self._words.values():
                words.pop(node, None)

    def _bridge_info(self, node: str, payload: bytes) -> None:
        tables = _tables_of(payload)
        if tables is None:  # cleared, or not an info: what it serves is unknown again
            self._serves.pop(node, None)
        else:
            self._serves[node] = tables

    def _availability(self, table: str, payload: bytes) -> None:
        said = parse_availability(payload)
        if said is None or said.node == self._node:
            return  # a cleared topic, or this daemon's own word (an echo, or of a past run)
        if said.state == OFFLINE:
            self._words[table].pop(said.node, None)
        else:
            self._words[table][said.node] = said.state

    def _changes(self) -> list[ClaimChange]:
        changes = []
        for table, words in self._words.items():
            now = tuple(sorted(n for n in words if self._claims(n, table)))
            before = self._claimed[table]
            if now != before:
                self._claimed[table] = now
                change = ClaimChange(table, before, now)
                _log(change, self._node)
                changes.append(change)
        return changes

    def _claims(self, node: str, table: str) -> bool:
        serves = self._serves.get(node)
        return self._bridges.get(node) == ONLINE and (serves is None or table in serves)


def _log(change: ClaimChange, node: str) -> None:
    if change.began:
        log.error(
            "table.claimed", table=change.table, node=node, claimed_by=list(change.after),
            hint="two daemons serve this table: stop the one that should not; its cards are "
            "held for the dealer console meanwhile",
        )  # fmt: skip
    else:
        log.warning(
            "table.claim_ended", table=change.table, node=node,
            ended=sorted(set(change.before) - set(change.after)), claimed_by=list(change.after),
        )  # fmt: skip


def _tables_of(payload: bytes) -> frozenset[str] | None:
    """The tables a bridge info lists; None from a message that is not one."""
    try:
        body = json.loads(payload)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    tables = body.get("tables") if isinstance(body, dict) else None
    if not isinstance(tables, list):
        return None
    return frozenset(t for t in tables if isinstance(t, str))


def _daemons(nodes: Iterable[str], claim: str = "claim") -> str:
    """`daemon pit-b claims`, `daemons pit-b and pit-c claim` (or `no longer claim`)."""
    listed = list(nodes)
    if len(listed) == 1:
        return f"daemon {listed[0]} {claim.replace('claim', 'claims')}"
    return f"daemons {', '.join(listed[:-1])} and {listed[-1]} {claim}"
