"""The round snapshot as a state: outside the numbering, `as_of`, and when it is published.

The throttle is sans-I/O: every time is given, nothing sleeps.
"""

from __future__ import annotations

import json
from typing import Any

from daemon.table.round_state import INTERVAL, RoundStates, RoundThrottle
from daemon.table.state import CONSOLE_CONTRACT
from tests.daemon.tables import make_service

PHASE = (1, "playing", False, False)


def test_the_first_change_goes_at_once_and_a_burst_within_the_interval_goes_as_one() -> None:
    throttle = RoundThrottle()
    assert throttle.changed(PHASE, 10.0)
    throttle.sent(PHASE, 10.0)
    assert _due(throttle) is None
    assert not throttle.changed(PHASE, 10.05)
    assert not throttle.changed(PHASE, 10.2)
    assert throttle.due_at == 10.0 + INTERVAL
    throttle.sent(PHASE, 10.25)
    assert _due(throttle) is None
    assert throttle.changed(PHASE, 10.25 + INTERVAL)  # a quiet interval: at once again


def _due(throttle: RoundThrottle) -> float | None:
    return throttle.due_at


def test_a_change_of_phase_goes_at_once_whatever_the_interval() -> None:
    throttle = RoundThrottle()
    throttle.sent(PHASE, 10.0)
    assert not throttle.changed(PHASE, 10.01)
    assert throttle.changed((1, "dealer", False, False), 10.02)  # the hole card revealed
    assert throttle.changed((2, "betting", True, False), 10.03)  # the next round
    assert throttle.changed((1, "playing", False, True), 10.04)  # a doubt: cards held


class _Published(list[dict[str, Any]]):
    def __call__(self, message: Any) -> None:
        assert message.seq == 0
        assert message.retain
        self.append(json.loads(message.payload))


def test_a_table_service_under_contract_3_numbers_no_snapshot_and_notes_the_change() -> None:
    assert CONSOLE_CONTRACT == 3
    service = make_service()
    record = {"command": "wager", "payload": '{"seat":1,"kind":"blackjack","amount":"25"}'}
    out = service.apply_body("request", record, "2026-11-29T14:00:00.000Z")
    assert [m.topic.rsplit("/", 2)[-2:] for m in out] == [
        ["event", "round_opened"],
        ["event", "wager_accepted"],
        ["response", "wager"],
    ]
    assert [m.seq for m in out] == [1, 2, 3]
    assert service.take_round_change()
    assert not service.take_round_change()  # asked once
    state = json.loads(service.snapshot().payload)
    assert state["as_of"] == 3
    assert "seq" not in state
    assert "id" not in state
    assert state["type"] == "round_snapshot"
    assert state["round"]["seats"][0]["wagers"] == {"blackjack": "25.00"}


def test_states_follow_the_throttle_and_each_shows_the_table_as_it_is_when_sent() -> None:
    service = make_service()
    published = _Published()
    states = RoundStates(published)
    now = 100.0
    for seat in (1, 2, 3):  # three wagers 10 ms apart: the first at once, then one state
        record = {
            "command": "wager",
            "payload": json.dumps({"seat": seat, "kind": "blackjack", "amount": "25"}),
        }
        service.apply_body("request", record, "2026-11-29T14:00:00.000Z")
        states.applied("bj1", service, now)
        now += 0.01
    assert len(published) == 1
    assert states.next_due() == 100.0 + INTERVAL
    states.publish_due(100.2)
    assert len(published) == 1  # not yet
    states.publish_due(100.0 + INTERVAL)
    assert len(published) == 2
    assert [s["seat"] for s in published[-1]["round"]["seats"]] == [1, 2, 3]
    assert published[-1]["as_of"] == service.envelopes.next_seq - 1
    assert states.next_due() is None


def test_an_event_that_changes_no_round_publishes_no_state() -> None:
    service = make_service()
    published = _Published()
    states = RoundStates(published)
    record = {"command": "status", "payload": "{}"}
    service.apply_body("request", record, "2026-11-29T14:00:00.000Z")
    states.applied("bj1", service, 1.0)
    assert published == []


def test_a_restart_publishes_the_state_at_once() -> None:
    service = make_service()
    published = _Published()
    states = RoundStates(published)
    service.apply_body("start", {"protocol": "reference", "node": "pit-a", "contract": 3}, "t")
    states.applied("bj1", service, 1.0)
    assert len(published) == 1
    assert published[0]["round"] is None
