"""Regressions for what the security review found: each was a real way to hurt a table.

1. a console payload the JSON parser cannot take (deep nesting, a 5,000-digit number)
   raised out of the table's consumer and stopped the daemon, at every replay too;
2. a mistyped hole card came back in the error message, on a topic displays read;
3. a retained request was obeyed again at every reconnect;
4. a bug applying one journaled event would stop the daemon at every start.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
import structlog

from tests.security.conftest import BASE, CONSOLE_1, SecureBroker
from tests.security.secure_pit import running_secure_pit
from tests.security.tables import table_mid_round

if TYPE_CHECKING:
    from pathlib import Path


@pytest.mark.parametrize(
    "payload",
    [
        b"[" * 100_000,
        b"[" * 4000,  # under the size limit, deep enough for the parser's recursion limit
        b'{"seat": ' + b"9" * 5000 + b"}",
        b'{"transaction": ' + b"1" * 4301 + b"}",
    ],
    ids=["huge", "nested", "huge-int", "huge-transaction"],
)
def test_a_payload_json_cannot_parse_still_gets_an_error_response(payload: bytes) -> None:
    service = table_mid_round(hole_unreadable=False)
    out = service.on_request("wager", payload)
    assert json.loads(out[-1].payload)["error"]["code"] == "malformed_request"


@pytest.mark.parametrize("typed", ["J D", "JD.", "J\u2666", "JDD", "J-D", "jd?"])
def test_a_mistyped_hole_card_is_not_echoed(typed: str) -> None:
    service = table_mid_round(hole_unreadable=True)  # the hole card JD waits to be entered
    with structlog.testing.capture_logs() as logs:
        out = service.on_request("card", json.dumps({"card": typed}).encode())
    body = json.loads(out[-1].payload)
    assert body["status"] == "error"
    # response/card is readable by every display: the console's typo of the face-down card
    # must not be published (nor logged) back.
    assert typed.upper() not in body["error"]["message"].upper(), body
    assert all(typed.upper() not in str(entry).upper() for entry in logs), logs


def test_a_bug_applying_an_event_costs_the_event_not_the_table() -> None:
    service = table_mid_round(hole_unreadable=False)
    with structlog.testing.capture_logs() as logs:
        out = service.apply_body("shoe", {"event": "NoSuchEvent"}, "t")
    assert [json.loads(m.payload)["kind"] for m in out if "/notice/" in m.topic] == [
        "internal_error"
    ]
    assert service.review == ["internal_error"]
    assert [entry["error"] for entry in logs if entry["event"] == "table.apply_failed"] == [
        "KeyError"
    ]
    assert service.on_request("status", b"{}")  # the table still answers


def test_the_snapshot_keeps_only_the_latest_notices() -> None:
    service = table_mid_round(hole_unreadable=False)
    for _ in range(500):
        service.on_request("wager", b'{"seat": 1, "kind": "blackjack", "amount": "1.00"}')
    snapshot = json.loads(service.snapshot().payload)
    assert len(snapshot["notices"]) == 50
    assert len(service.snapshot().payload) < 64_000
    assert len(service.round_notices) == 50  # nor does the daemon keep the others in memory


async def test_a_retained_request_is_not_replayed_on_reconnect(
    secure_broker: SecureBroker, tmp_path: Path
) -> None:
    async with secure_broker.client(CONSOLE_1) as console:
        body = {"seat": 1, "kind": "blackjack", "amount": "25.00"}
        await console.publish(f"{BASE}/bj-1/request/wager", json.dumps(body), qos=1, retain=True)
    # A daemon that starts (or reconnects) later is handed the retained request: it drops it.
    async with running_secure_pit(secure_broker, {"bj-1": "2C", "bj-2": "2C"}, tmp_path) as pit:
        await pit.request("bj-1", "status")
        view = pit.daemon.tables["bj-1"].service.engine.public_view()
    assert view["round"] is None, view["round"]  # nobody wagered since this daemon started


async def test_a_poison_request_does_not_stop_the_daemon(
    secure_broker: SecureBroker, tmp_path: Path
) -> None:
    async with running_secure_pit(secure_broker, {"bj-1": "2C", "bj-2": "2C"}, tmp_path) as pit:
        await pit.consoles["bj-1"].publish(f"{BASE}/bj-1/request/wager", b"[" * 4000, qos=1)
        status = await pit.request("bj-1", "status")  # the table still answers
        assert status["status"] == "ok"
