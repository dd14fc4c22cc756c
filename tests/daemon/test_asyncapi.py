"""docs/asyncapi.json describes every topic and payload the daemon sends, and stays current."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jsonschema
import pytest

from daemon.journal import StorageFault
from daemon.parts.storage import StorageWatch
from daemon.table.claims import CLAIM_ENDED, TABLE_CLAIMED, TableClaims
from daemon.table.shoe_line import ShoeLine
from daemon.wire.asyncapi import build
from daemon.wire.availability import availability_payload
from daemon.wire.topics import Topics
from drivers import events as shoe
from tests.daemon.tables import SEEN, drawn, make_service, request

if TYPE_CHECKING:
    from daemon.mqtt.outbox import OutboundMessage
    from daemon.wire.envelope import Outbound

DOC = Path(__file__).parents[2] / "docs" / "asyncapi.json"


def test_the_published_document_is_what_the_code_builds() -> None:
    """Regenerate it with `uv run shoe2mqtt asyncapi > docs/asyncapi.json`."""
    assert json.loads(DOC.read_text(encoding="utf-8")) == build()


def _schema_for(topic: str, document: dict[str, Any]) -> dict[str, Any]:
    for channel in document["channels"].values():
        pattern = (
            re.escape(channel["address"])
            .replace(r"\{table\}", "[a-z0-9_-]+")
            .replace(r"\{node\}", "[a-z0-9_-]+")
            .replace(r"\{kind\}", "[a-z0-9_]+")
            .replace(r"\{command\}", "[a-z0-9_]+")
        )
        if re.fullmatch(pattern, topic):
            [message] = channel["messages"].values()
            return dict(message["payload"])
    pytest.fail(f"no channel in docs/asyncapi.json for topic {topic!r}")


def _check(messages: list[Outbound]) -> int:
    document = build(base="casino")
    for message in messages:
        jsonschema.validate(json.loads(message.payload), _schema_for(message.topic, document))
    return len(messages)


@pytest.mark.parametrize("game", ["blackjack", "double_attack", "triple_attack"])
def test_every_message_of_a_round_matches_its_channel_schema(game: str) -> None:
    service = make_service(game, readable_ids=False)
    main = {"blackjack": "blackjack", "double_attack": "initial", "triple_attack": "first_attack"}[
        game
    ]
    bonus = {
        "blackjack": "twenty_point_bonus",
        "double_attack": "optional_bonus",
        "triple_attack": None,
    }[game]
    out = service.on_link_event(shoe.NewShoe())  # not a link event: a state refresh
    identity = shoe.DeviceIdentity("Acme", "S1", "7", "1.0", power_up=1, next_seq=0)
    out += service.on_shoe_event(identity, seen_at=SEEN)
    out += service.on_shoe_event(shoe.NewShoe(), seen_at=SEEN)
    out += drawn(service, "2C")  # burn
    for seat in (1, 4):
        out += request(service, "wager", transaction=seat, seat=seat, kind=main, amount="20.00")
        if bonus:
            out += request(service, "wager", seat=seat, kind=bonus, amount="5.00")
    out += drawn(service, "QH 9S 6D QH 8C 9H" if game != "double_attack" else "6D QH 9S QH 8C 9H")
    windows = {"blackjack": 1, "double_attack": 2, "triple_attack": 3}[game]
    for _ in range(windows):  # each window's "No more bets" lets the held cards be dealt
        out += request(service, "close_betting")
    out += service.on_shoe_event(shoe.SequenceGap(expected=9, got=11), seen_at=SEEN)
    out += request(service, "resume", transaction="r")  # the dealer: no card went by unread
    out += request(service, "action", seat=1, action="stand")
    out += request(service, "action", seat=4, action="hit")
    out += drawn(service, "5C")
    out += request(service, "action", seat=4, action="stand")
    out += drawn(service, "KD")
    out += request(service, "status", transaction="s")
    out += request(service, "teleport")
    out += service.on_shoe_event(shoe.CardUnreadable(seq=20), seen_at=SEEN)
    out += service.on_shoe_event(shoe.FaultSet("jam", 3), seen_at=SEEN)
    out += service.on_shoe_event(shoe.CutCardReached(), seen_at=SEEN)
    restarted = dataclasses.replace(identity, power_up=2)
    out += service.on_shoe_event(restarted, seen_at=SEEN)  # the reader restarted: a notice
    topics = {m.topic.split("/", 2)[2] for m in out}
    assert {
        "settlement",
        "round",
        "state",
        "response/wager",
        "response/resume",
        "notice/sequence_gap",
        "notice/reader_restarted",
    } <= topics
    assert _check(out) == len(out)


def test_availability_matches_its_channels() -> None:
    """Decision D1: the daemon's bridge state (plain text) and each table's availability."""
    document = build(base="casino")
    bridge = _schema_for("casino/bridge/pc-a/state", document)
    assert bridge["enum"] == ["online", "offline"]
    schema = _schema_for("casino/bj-1/availability", document)
    for state in ("online", "offline"):
        jsonschema.validate(json.loads(availability_payload(state, "pc-a")), schema)
    # daemon/table/claims.py: the table as a daemon keeps it while another claims it too.
    claims = TableClaims(Topics("casino"), "pc-a", ["bj-1"])
    claims.heard("casino/bridge/pc-b/state", b"online")
    claims.heard("casino/bj-1/availability", availability_payload("online", "pc-b"))
    contested = json.loads(claims.presence("bj-1").online)
    assert contested == {"state": "conflict", "node": "pc-a", "with": ["pc-b"]}
    jsonschema.validate(contested, schema)


def test_the_daemons_own_notices_are_in_the_document() -> None:
    kinds = build()["channels"]["notice"]["parameters"]["kind"]["enum"]
    assert {TABLE_CLAIMED, CLAIM_ENDED, "client_id_in_use", "link_unstable"} <= set(kinds)
    line = ShoeLine(reliable=False)  # what the shoe's line costs the table
    began = line.noise_began(at_stake=True, holding=False)
    overflow = line.refused(object())
    assert began is not None
    assert overflow is not None
    told = {began.kind, line.overflow_taken(overflow, at_stake=False).kind}
    assert told <= set(kinds)


def test_the_journal_state_matches_its_channel() -> None:
    """What the pit hears when a table's journal cannot be written."""
    schema = _schema_for("casino/bj-1/journal", build(base="casino"))
    fault = StorageFault("disk full", "the disk is full")
    published: list[OutboundMessage] = []
    watch = StorageWatch(Topics("casino"), "pc-a", published.append, lambda: None)
    watch.failing("bj-1", fault)
    watch.resumed("bj-1")
    assert [(m.topic, m.retain) for m in published] == [("casino/bj-1/journal", True)] * 2
    states = [json.loads(m.payload) for m in published]
    for state in states:
        jsonschema.validate(state, schema)
    assert [s["state"] for s in states] == ["failing", "ok"]
    assert states[0]["reason"] == "the disk is full"
