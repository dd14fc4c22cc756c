"""One table, one daemon (daemon/table/claims.py): what counts as another daemon's live claim, and
that two daemons which see each other settle on one retained availability."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

from daemon.table.claims import CLAIM_ENDED, TABLE_CLAIMED, TableClaims
from daemon.wire.availability import Availability, availability_payload, parse_availability
from daemon.wire.topics import Topics

if TYPE_CHECKING:
    import random

TOPICS = Topics("shoe2mqtt")
TABLE = "bj-1"
AVAILABILITY = TOPICS.availability(TABLE)


def _claims(node: str = "pit-a", tables: tuple[str, ...] = (TABLE,)) -> TableClaims:
    return TableClaims(TOPICS, node, tables)


def _state(node: str, state: str) -> tuple[str, bytes]:
    return TOPICS.bridge_state(node), state.encode()


def _info(node: str, *tables: str) -> tuple[str, bytes]:
    return TOPICS.bridge_info(node), json.dumps({"node": node, "tables": list(tables)}).encode()


def _said(node: str, state: str) -> tuple[str, bytes]:
    return AVAILABILITY, availability_payload(state, node)


def test_another_live_nodes_online_on_our_table_is_a_claim_and_its_end_is_said() -> None:
    claims = _claims()
    assert claims.heard(*_state("pit-b", "online")) == []
    [began] = claims.heard(*_said("pit-b", "online")) or []
    assert (began.table, began.before, began.after, began.began) == (TABLE, (), ("pit-b",), True)
    assert began.kind == TABLE_CLAIMED
    assert "daemon pit-b claims this table too" in began.message("pit-a")
    presence = claims.presence(TABLE)
    assert parse_availability(presence.online) == Availability("conflict", "pit-a", ("pit-b",))
    assert presence.offline is None  # never `offline` over another's claim
    [ended] = claims.heard(*_state("pit-b", "offline")) or []
    assert (ended.kind, ended.after, ended.began) == (CLAIM_ENDED, (), False)
    assert "daemon pit-b no longer claims this table" in ended.message("pit-a")
    assert claims.presence(TABLE).online == availability_payload("online", "pit-a")
    assert claims.presence(TABLE).offline == availability_payload("offline", "pit-a")


@pytest.mark.parametrize(
    "message",
    [
        _said("pit-a", "online"),  # our own word (our echo, or of a past run)
        (AVAILABILITY, Availability("conflict", "pit-a", ("pit-b",)).payload()),
        _said("pit-b", "offline"),
        (AVAILABILITY, b""),  # a cleared topic
        (AVAILABILITY, b"not json"),
    ],
)
def test_what_is_no_claim_by_another_live_daemon_changes_nothing(
    message: tuple[str, bytes],
) -> None:
    claims = _claims()
    claims.heard(*_state("pit-b", "online"))
    assert claims.heard(*message) == []
    assert claims.contested(TABLE) == ()


def test_a_claim_counts_only_while_its_daemon_is_online_and_serves_the_table() -> None:
    claims = _claims()
    assert claims.heard(*_said("pit-b", "online")) == []  # pit-b's state is not known yet
    assert [c.after for c in claims.heard(*_state("pit-b", "online")) or []] == [("pit-b",)]
    # pit-b's info says it serves other tables: a stale word from before it was reconfigured.
    assert [c.after for c in claims.heard(*_info("pit-b", "bj-7")) or []] == [()]
    assert [c.after for c in claims.heard(*_info("pit-b", "bj-7", TABLE)) or []] == [("pit-b",)]
    assert [c.after for c in claims.heard(*_said("pit-b", "offline")) or []] == [()]


def test_a_third_daemon_joins_and_leaves_a_contested_table() -> None:
    claims = _claims()
    for node in ("pit-b", "pit-c"):
        claims.heard(*_state(node, "online"))
    claims.heard(*_said("pit-b", "online"))
    conflict = Availability("conflict", "pit-c", ("pit-b",)).payload()
    [joined] = claims.heard(AVAILABILITY, conflict) or []
    assert (joined.after, joined.began) == (("pit-b", "pit-c"), True)
    assert "daemons pit-b and pit-c claim" in joined.message("pit-a")
    [left] = claims.heard(*_state("pit-c", "offline")) or []
    assert (left.after, left.began) == (("pit-b",), False)
    assert "daemon pit-c no longer claims this table; daemon pit-b claims it still" in (
        left.message("pit-a")
    )


def test_messages_outside_the_watched_topics_are_not_the_claims_business() -> None:
    claims = _claims()
    assert claims.heard("shoe2mqtt/bj-1/request/wager", b"{}") is None
    assert claims.heard("shoe2mqtt/bj-9/availability", b"{}") is None
    assert claims.watches() == [
        "shoe2mqtt/bridge/+/state",
        "shoe2mqtt/bridge/+/info",
        AVAILABILITY,
    ]


# ---------------------------------------------------------------- two daemons on one broker
@dataclass
class Broker:
    """A broker's retained availability and the daemons' inboxes, delivered in a chosen order."""

    daemons: dict[str, TableClaims]
    retained: bytes = b""
    inboxes: dict[str, list[tuple[str, bytes]]] = field(default_factory=dict)
    published: int = 0

    def publish(self, topic: str, payload: bytes) -> None:
        self.published += 1
        if topic == AVAILABILITY:
            self.retained = payload
        for node in self.daemons:
            self.inboxes.setdefault(node, []).append((topic, payload))

    def deliver(self, rng: random.Random) -> bool:
        waiting = [node for node, inbox in self.inboxes.items() if inbox]
        if not waiting:
            return False
        node = rng.choice(waiting)
        changes = self.daemons[node].heard(*self.inboxes[node].pop(0)) or []
        for change in changes:  # the daemon announces its presence anew, as the service does
            self.publish(AVAILABILITY, self.daemons[node].presence(change.table).online)
        return True


@given(st.randoms(use_true_random=False))
def test_two_daemons_that_see_each_other_settle_on_one_retained_value(rng: random.Random) -> None:
    broker = Broker({"pit-a": _claims("pit-a"), "pit-b": _claims("pit-b")})
    for node in broker.daemons:  # each connects: its bridge state and info, then its presence
        broker.publish(*_state(node, "online"))
        broker.publish(*_info(node, TABLE))
        broker.publish(AVAILABILITY, broker.daemons[node].presence(TABLE).online)
    while broker.deliver(rng):
        assert broker.published < 50, "the daemons keep answering each other"
    for node, other in (("pit-a", "pit-b"), ("pit-b", "pit-a")):
        assert broker.daemons[node].contested(TABLE) == (other,)
    settled = parse_availability(broker.retained)
    assert settled is not None
    assert settled.state == "conflict"
    assert sorted(settled.nodes) == ["pit-a", "pit-b"]
    # pit-b stops cleanly: it says nothing on the table, only its bridge goes offline; pit-a
    # is the table's alone again, and says so.
    assert broker.daemons["pit-b"].presence(TABLE).offline is None
    broker.publish(*_state("pit-b", "offline"))
    while broker.deliver(rng):
        pass
    assert broker.retained == availability_payload("online", "pit-a")
