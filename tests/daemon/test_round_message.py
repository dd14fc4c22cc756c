"""Console contract 4: one numbered message an input, carrying what contract 3 published.

The oracle is contract 3 itself, run on the same journal: an input's one round message must
carry, in order, exactly the bodies contract 3 numbered on the event, settlement, notice and
response topics, and its round the state contract 3 shows after the same input.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from daemon.journal.rows import TableRecord
from daemon.table.records import ConfigRecord, RequestRecord, StartRecord
from daemon.table.runner import TableRunner
from daemon.wire.round_message import ROUND_CONTRACT, STATE_CONTRACT, unbundled, unbundled_outbound
from daemon.wire.topics import Topics
from tests.daemon.journals import event_stream
from tests.daemon.tables import make_service
from tests.rules.tables import make_config

if TYPE_CHECKING:
    from daemon.table.records import JournalRecord
    from daemon.table.service import TableService
    from daemon.wire.envelope import Outbound
    from tests.daemon.journals import Record

AT = "2026-12-02T09:00:00.000Z"
_ENVELOPE = ("schema", "id", "seq", "ts", "table")


def _own(topic: str) -> bool:
    """Numbered on its own topic under both contracts (`topic`: under the table's)."""
    return topic == "state" or topic.startswith("surveillance/")


def _under(contract: int, stream: list[Record]) -> list[Record]:
    """The journal, its starts and settings naming `contract` (as the daemon journals them)."""
    return [
        (kind, {**body, "contract": contract}) if kind in ("start", "config") else (kind, body)
        for kind, body in stream
    ]


def _play(game: str, stream: list[Record]) -> tuple[TableService, list[list[Outbound]]]:
    service = make_service(game)
    return service, [service.apply_body(kind, body, AT) for kind, body in stream]


def _said(messages: list[Outbound]) -> list[tuple[str, dict[str, Any]]]:
    """The numbered messages as (topic under the table, body without the envelope)."""
    out = []
    for message in messages:
        if not message.seq:
            continue
        body = {k: v for k, v in json.loads(message.payload).items() if k not in _ENVELOPE}
        out.append((message.topic.split("/", 2)[2], body))
    return out


def _state(body: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k not in (*_ENVELOPE, "as_of", "type")}


@settings(max_examples=12, deadline=None)
@given(
    game=st.sampled_from(["blackjack", "double_attack", "triple_attack"]),
    seed=st.integers(0, 2**32),
)
def test_each_input_is_one_round_message_carrying_what_contract_3_numbered(
    game: str, seed: int
) -> None:
    stream = event_stream(make_config(game), seed, rounds=4)
    three, four = make_service(game), make_service(game)
    numbers: list[int] = []
    for (kind, body), (_, body_four) in zip(
        _under(STATE_CONTRACT, stream), _under(ROUND_CONTRACT, stream), strict=True
    ):
        old = three.apply_body(kind, body, AT)
        new = four.apply_body(kind, body_four, AT)
        numbers += [m.seq for m in new]
        rounds = [m for m in new if m.topic.endswith("/round")]
        assert len(rounds) <= 1, kind
        assert all(m.seq for m in new)  # all numbered: no state outside the numbering
        own = [m for m in new if not m.topic.endswith("/round")]
        assert all(_own(m.topic.split("/", 2)[2]) for m in own)
        carried = [m for message in rounds for m in unbundled_outbound(message) if m.seq]
        # Contract 3's numbered messages, in order: the table's own ones first under 4.
        expected = sorted(_said(old), key=lambda said: not _own(said[0]))
        assert _said(own) + _said(carried) == expected, kind
        if rounds:
            sent = json.loads(rounds[0].payload)
            assert sent["as_of"] == sent["seq"] == rounds[0].seq
            assert rounds[0].retain
            assert _state(sent) == _state(json.loads(three.snapshot().payload)) | {
                "events": sent["events"],
                **({"response": sent["response"]} if "response" in sent else {}),
            }
        assert not four.take_round_change()  # no throttled state beside it
    assert numbers == list(range(1, len(numbers) + 1))


def test_a_replay_makes_the_very_same_round_messages() -> None:
    stream = _under(ROUND_CONTRACT, event_stream(make_config("triple_attack"), 7, rounds=6))
    _, first = _play("triple_attack", stream)
    _, again = _play("triple_attack", stream)
    assert [m.payload for out in first for m in out] == [m.payload for out in again for m in out]


def test_a_wager_is_one_message_with_its_events_its_response_and_the_round() -> None:
    service = make_service()
    service.apply_body("start", {"protocol": "reference", "contract": ROUND_CONTRACT}, AT)
    payload = json.dumps({"transaction": "t-1", "seat": 1, "kind": "blackjack", "amount": "25"})
    [message] = service.apply_body("request", {"command": "wager", "payload": payload}, AT)
    body = json.loads(message.payload)
    assert message.topic == "casino/bj1/round"
    assert [e["type"] for e in body["events"]] == ["round_opened", "wager_accepted"]
    assert body["response"]["transaction"] == "t-1"
    assert body["response"]["status"] == "ok"
    assert body["round"]["seats"][0]["wagers"] == {"blackjack": "25.00"}
    topics = [topic.split("/", 2)[2] for topic, _ in unbundled(message.topic, body)]
    assert topics == ["event/round_opened", "event/wager_accepted", "response/wager", "round"]


def test_a_refusal_at_the_gate_is_still_its_own_unnumbered_response() -> None:
    service = make_service()
    service.apply_body("start", {"protocol": "reference", "contract": ROUND_CONTRACT}, AT)
    [refused] = service.refuse("wager", "t-2", "requests_refused", "too many")
    assert refused.seq == 0
    assert refused.topic == "casino/bj1/response/wager"


@pytest.mark.parametrize("contract", [STATE_CONTRACT, ROUND_CONTRACT])
def test_the_round_log_says_a_voided_round_was_voided_under_either_contract(
    contract: int,
) -> None:
    """The round's entry reads `round_ended` on its own topic, or carried by a round message."""
    config = make_config("blackjack")
    runner = TableRunner.begin(
        TableRecord(config.table_id, protocol="reference"), Topics(), "0" * 32,
        checkpoint=None, first_config=config.to_mapping(),
    )  # fmt: skip
    wager = json.dumps({"seat": 1, "kind": "blackjack", "amount": "25"}).encode()
    records: list[JournalRecord] = [
        ConfigRecord(config, contract),
        StartRecord("reference", "pit", contract),
        RequestRecord("wager", wager),
        RequestRecord("void", b"{}"),
    ]
    ended = [runner.apply(n, AT, record).ended for n, record in enumerate(records, start=1)]
    assert ended[:3] == [None, None, None]
    assert ended[-1] is not None
    assert ended[-1].voided
