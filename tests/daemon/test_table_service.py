"""The daemon's per-table logic, fed directly: shoe events and requests in, messages out."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
import structlog

from daemon.table.records import RequestRecord, ShoeRecord
from drivers import events as shoe
from drivers.driver import Connected, Disconnected, Reconnected
from tests.daemon.tables import SEEN, bodies, drawn, make_service, request, response

if TYPE_CHECKING:
    from daemon.table.service import TableService
    from daemon.wire.envelope import Outbound
    from rules.outputs import Output


def test_every_payload_carries_the_envelope() -> None:
    service = make_service()
    out = request(service, "wager", transaction="t1", seat=1, kind="blackjack", amount="25.00")
    first = json.loads(out[0].payload)
    assert {k: first[k] for k in ("schema", "id", "table", "seq", "ts")} == {
        "schema": 1,
        "id": "id-1",
        "table": "bj1",
        "seq": 1,
        "ts": "2026-11-29T14:00:00.000Z",
    }
    numbered = [m for m in out if m.seq]
    assert [json.loads(m.payload)["seq"] for m in numbered] == list(range(1, len(numbered) + 1))
    assert out[0].topic == "casino/bj1/event/round_opened"
    # The round state is no numbered message: no id, no seq; it says what it reflects.
    [state] = [json.loads(m.payload) for m in out if not m.seq]
    assert "id" not in state
    assert "seq" not in state
    assert state["as_of"] == 2


def test_a_good_request_gets_an_ok_response_with_its_transaction() -> None:
    service = make_service()
    out = request(service, "wager", transaction="abc", seat=2, kind="blackjack", amount="25.00")
    assert response(out) | {"id": None, "seq": None, "ts": None} == {
        "schema": 1,
        "id": None,
        "table": "bj1",
        "seq": None,
        "ts": None,
        "type": "response",
        "command": "wager",
        "transaction": "abc",
        "node": None,
        "status": "ok",
        "data": {},
    }
    assert out[-1].topic == "casino/bj1/response/wager"


@pytest.mark.parametrize(
    ("command", "payload", "code"),
    [
        ("wager", b"not json", "malformed_request"),
        ("wager", b"[1]", "malformed_request"),
        ("wager", b'{"seat": 1, "kind": "blackjack", "amount": 25}', "malformed_request"),
        ("wager", b'{"seat": 9, "kind": "blackjack", "amount": "25"}', "wager_rejected"),
        ("action", b'{"seat": 1, "action": "stand"}', "action_rejected"),
        ("void", b"{}", "round_state"),
        ("card", b'{"card": "QH"}', "no_unreadable_card"),
        ("status", b'{"verbose": true}', "malformed_request"),
        ("teleport", b"{}", "unknown_command"),
    ],
)
def test_a_bad_request_gets_an_error_response_and_changes_nothing(
    command: str, payload: bytes, code: str
) -> None:
    service = make_service()
    before = service.engine.public_view()
    out = service.on_request(command, payload)
    body = response(out)
    assert (body["status"], body["error"]["code"]) == ("error", code)
    assert body["error"]["message"]
    assert service.engine.public_view() == before
    # Nothing but the answer (and, for a refused wager, the pit's notice of it).
    assert [m.topic.split("/", 2)[2] for m in out[:-1]] == (
        ["notice/wager_rejected"] if code == "wager_rejected" else []
    )


def betting_closed_with_a_bonus() -> TableService:
    """Seat 1 with a main wager and a 20 point bonus, betting closed: the next four cards
    (seat, dealer up, seat, hole) decide the bonus."""
    service = make_service()
    request(service, "wager", seat=1, kind="blackjack", amount="25")
    request(service, "wager", seat=1, kind="twenty_point_bonus", amount="10")
    request(service, "close_betting")
    return service


def test_cards_from_the_shoe_settle_the_round_and_refresh_the_snapshot() -> None:
    service = betting_closed_with_a_bonus()
    out = drawn(service, "KD 7S KH QH")  # seat 1: KD KH (any 20); dealer 7 up, QH down
    [settled] = bodies(out, "/settlement")
    assert (settled["outcome"], settled["won"], settled["review"]) == ("any_20", "40.00", False)
    snapshot = bodies(out, "/round")[-1]
    assert snapshot["round"]["dealer"]["cards"] == ["7S", None]
    assert snapshot["settlements"] == [
        {k: v for k, v in settled.items() if k not in ("schema", "id", "table", "seq", "ts")}
    ]
    assert out[-1].retain is True


def test_a_settlement_s_line_waits_for_the_commit_to_have_published_it() -> None:
    service = betting_closed_with_a_bonus()
    with structlog.testing.capture_logs() as lines:
        out = drawn(service, "KD 7S KH QH")
        assert bodies(out, "/settlement")
        assert [line for line in lines if line["event"] == "table.settled"] == []
        service.write_held_lines()  # the commit's, once the publisher has the messages
        service.write_held_lines()  # written once
    settled = [line for line in lines if line["event"] == "table.settled"]
    assert [(s["seat"], s["wager"], s["outcome"], s["won"]) for s in settled] == [
        (1, "twenty_point_bonus", "any_20", "40.00")
    ]


def test_a_held_line_is_written_by_the_next_event_when_nobody_wrote_it() -> None:
    service = betting_closed_with_a_bonus()
    drawn(service, "KD 7S KH QH")
    with structlog.testing.capture_logs() as lines:
        service.apply(RequestRecord("status", b"{}"), SEEN)
    assert [line["event"] for line in lines].count("table.settled") == 1


def test_a_failed_event_logs_none_of_the_settlements_it_did_not_publish(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    service = betting_closed_with_a_bonus()
    drawn(service, "KD 7S KH")
    seal = service._seal_outputs

    def seal_then_fail(outputs: list[Output]) -> tuple[list[Outbound], bool]:
        sealed = seal(outputs)
        if service.held_lines:  # a settlement sealed, its line held: then a bug
            raise RuntimeError("planted after the seal")
        return sealed

    monkeypatch.setattr(service, "_seal_outputs", seal_then_fail)
    with structlog.testing.capture_logs() as lines:
        out = service.apply(ShoeRecord(shoe.CardDrawn("Q", "H", 0)), SEEN)
        service.write_held_lines()  # as the commit does, after publishing `out`
    events = [line["event"] for line in lines]
    assert "table.apply_failed" in events
    assert bodies(out, "/settlement") == []
    assert "table.settled" not in events  # nothing said of what was not published


def test_the_hole_card_is_in_no_message_before_its_reveal() -> None:
    service = make_service()
    request(service, "wager", seat=1, kind="blackjack", amount="25")
    request(service, "close_betting")
    out = drawn(service, "9D 7S 8C QH")
    assert all(b"QH" not in m.payload for m in out)
    out = request(service, "action", seat=1, action="stand")
    revealed = bodies(out, "/event/hole_card_revealed")
    assert [b["card"] for b in revealed] == ["QH"]


def test_an_unreadable_card_holds_the_later_cards_until_it_is_entered() -> None:
    service = make_service()
    request(service, "wager", seat=1, kind="blackjack", amount="25")
    request(service, "wager", seat=2, kind="blackjack", amount="25")
    request(service, "close_betting")
    drawn(service, "9D")
    out = service.on_shoe_event(shoe.CardUnreadable(seq=2), seen_at=SEEN)
    assert [b["kind"] for b in bodies(out, "/notice/card_unreadable")] == ["card_unreadable"]
    held = drawn(service, "7S 8C")  # held: they are not seat 2's and the dealer's yet
    assert bodies(held, "/event/card_dealt") == []
    assert bodies(held, "/round")[-1]["cards_held"] == 2
    out = request(service, "card", transaction=7, card="5H")
    assert response(out)["status"] == "ok"
    dealt = [(b["seat"], b["card"]) for b in bodies(out, "/event/card_dealt")]
    assert dealt == [(2, "5H"), (None, "7S"), (1, "8C")]


def test_two_unreadable_cards_are_entered_each_in_its_own_place() -> None:
    service = make_service()
    for seat in (1, 2, 3):
        request(service, "wager", seat=seat, kind="blackjack", amount="25")
    request(service, "close_betting")
    service.on_shoe_event(shoe.CardUnreadable(seq=1), seen_at=SEEN)  # seat 1
    drawn(service, "9D")  # seat 2
    service.on_shoe_event(shoe.CardUnreadable(seq=3), seen_at=SEEN)  # seat 3
    drawn(service, "7S")  # the dealer's upcard
    first = request(service, "card", card="5H")
    assert [(b["seat"], b["card"]) for b in bodies(first, "/event/card_dealt")] == [
        (1, "5H"),
        (2, "9D"),
    ]
    second = request(service, "card", card="6C")
    assert [(b["seat"], b["card"]) for b in bodies(second, "/event/card_dealt")] == [
        (3, "6C"),
        (None, "7S"),
    ]
    assert service.held == []


def test_a_gap_in_the_round_holds_its_cards_until_the_dealer_resumes() -> None:
    service = betting_closed_with_a_bonus()
    drawn(service, "KD 7S")
    out = service.on_shoe_event(shoe.SequenceGap(expected=3, got=5), seen_at=SEEN)
    [notice] = bodies(out, "/notice/sequence_gap")
    assert "request/resume" in notice["message"]
    held = drawn(service, "KH QH")
    assert bodies(held, "/event/card_dealt") == []  # given to no seat
    snapshot = bodies(held, "/round")[-1]
    assert (snapshot["doubt"], snapshot["cards_held"]) == ("sequence_gap", 2)
    out = request(service, "resume", transaction="r")
    assert response(out)["data"] == {"released": 2}
    [settled] = bodies(out, "/settlement")
    assert settled["review"] is True
    assert bodies(out, "/round")[-1]["review"] == ["sequence_gap"]
    assert bodies(out, "/round")[-1]["doubt"] is None


@pytest.mark.parametrize(
    ("protocol", "flagged"), [("reference", False), ("enq", True)], ids=["keeps", "keeps-nothing"]
)
def test_a_reconnect_mid_round_doubts_only_a_shoe_that_keeps_nothing(
    protocol: str,
    flagged: bool,  # noqa: FBT001 - a parameter of the test
) -> None:
    service = make_service(protocol=protocol)
    service.on_link_event(Connected("/dev/pts/9"))
    out = service.on_link_event(Reconnected("/dev/pts/9", outage=2.0, attempts=3))
    # Between rounds nothing is at stake: a shoe that keeps nothing only asks that the next
    # round be opened by a console that has seen the table since.
    told = bodies(out, "/notice/reader_reconnected")
    assert [b["kind"] for b in told] == (["reader_reconnected"] if flagged else [])
    seen = max(b["seq"] for b in bodies(out))
    request(service, "wager", seat=1, kind="blackjack", amount="25", seen=seen)
    request(service, "close_betting", seen=seen)
    drawn(service, "KD")
    service.on_link_event(Disconnected("/dev/pts/9", "EIO", 5, 0.1))
    out = service.on_link_event(Reconnected("/dev/pts/9", outage=2.0, attempts=3))
    notices = [b["kind"] for b in bodies(out, "/notice/reader_reconnected")]
    assert notices == (["reader_reconnected"] if flagged else [])
    assert service.review == (["reader_reconnected"] if flagged else [])
    assert service.doubt == ("reader_reconnected" if flagged else None)
    state = bodies(out, "/state")[-1]
    assert state["reader"]["link"] == "connected"


def test_status_reports_the_reader_and_the_round() -> None:
    service = make_service()
    identity = shoe.DeviceIdentity("Acme", "S1", "0042", "1.2.0", power_up=1, next_seq=0)
    service.on_shoe_event(identity, seen_at=SEEN)
    out = request(service, "status", transaction="s")
    data = response(out)["data"]
    assert data["reader"]["identity"] == {
        "vendor": "Acme",
        "model": "S1",
        "serial_number": "0042",
        "firmware": "1.2.0",
    }
    assert data["round"]["round"] is None


def test_a_refused_wager_is_also_a_notice_for_the_pit() -> None:
    service = make_service()
    out = request(service, "wager", transaction="w", seat=1, kind="twenty_point_bonus", amount="5")
    [notice] = bodies(out, "/notice/wager_rejected")
    assert (
        notice["message"]
        == "seat 1 twenty_point_bonus: needs a blackjack wager first (13:69F-2.24(c))"
    )
    assert response(out)["error"]["code"] == "wager_rejected"
    out = request(service, "action", seat=1, action="stand")
    assert bodies(out, "/notice/") == []  # other refusals answer the console alone


def test_an_unreadable_burn_card_is_still_a_burn_and_moves_no_later_card() -> None:
    """Its face unseen, it left the shoe as the burn: the round's first card is seat 1's."""
    service = make_service()
    service.on_shoe_event(shoe.NewShoe(seq=0), seen_at=SEEN)
    service.on_shoe_event(shoe.CardUnreadable(seq=1, burned=True), seen_at=SEEN)
    request(service, "wager", seat=1, kind="blackjack", amount="25")
    request(service, "close_betting")
    out = drawn(service, "KD")
    assert [(b["seat"], b["card"]) for b in bodies(out, "/event/card_dealt")] == [(1, "KD")]
