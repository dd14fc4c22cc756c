"""A card's place follows from what the console declares and the order the shoe dealt.

The cases a tester found, fed to the table service as the daemon feeds it (docs/rules.md,
decision 15): each ends with the settlement the physical deal calls for, or with the round
held, flagged and told to the pit. The physical deal of every case: seats 1-3 each wager $10
on blackjack and $10 on the 20 point bonus; seat 1 10C 7H, seat 2 KH 2D, seat 3 KS QD,
dealer 6S up and 9C down; everyone stands; the dealer draws 8D. Seat 3's KS QD is an any 20
(different suits) at 4 to 1: $40.00; seats 1 and 2 lose (13:69F-2.24(f), (g)3).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from daemon.table.custody_flow import Timer
from daemon.table.state import CONSOLE_CONTRACT
from drivers import events as shoe
from drivers.driver import Connected
from tests.daemon.tables import SEEN, bodies, drawn, make_service, request, response, take

if TYPE_CHECKING:
    from daemon.table.service import TableService
    from daemon.wire.envelope import Outbound

FIRST_CARDS = "10C KH KS"
UPCARD = "6S"
SECOND_CARDS = "7H 2D QD"
HOLE = "9C"
DRAW = "8D"
TRUTH = [
    (3, "twenty_point_bonus", "any_20", "win", "40.00"),
    (2, "twenty_point_bonus", "no_20", "lose", "0.00"),
    (1, "twenty_point_bonus", "no_20", "lose", "0.00"),
]


def _wagers(service: TableService) -> list[Outbound]:
    out: list[Outbound] = []
    for seat in (1, 2, 3):
        out += request(service, "wager", seat=seat, kind="blackjack", amount="10")
        out += request(service, "wager", seat=seat, kind="twenty_point_bonus", amount="10")
    return out


def _stands(service: TableService) -> list[Outbound]:
    return [m for seat in (1, 2, 3) for m in request(service, "action", seat=seat, action="stand")]


def _settled(out: list[Outbound]) -> list[tuple[Any, ...]]:
    return [
        (b["seat"], b["wager"], b["outcome"], b["result"], b["won"])
        for b in bodies(out, "/settlement")
    ]


def _review(out: list[Outbound]) -> set[bool]:
    return {b["review"] for b in bodies(out, "/settlement")}


def _snapshot(out: list[Outbound]) -> dict[str, Any]:
    return bodies(out, "/round")[-1]


def _state(service: TableService) -> dict[str, Any]:
    """The round state the daemon would publish now (`as_of`: the last `seq` sealed)."""
    state: dict[str, Any] = json.loads(service.snapshot().payload)
    return state


def test_2_24_d_cards_that_come_before_no_more_bets_wait_and_are_dealt_in_order() -> None:
    """The dealer does not wait for MQTT: seat 2's wager reaches the daemon after the first
    card did. The card waits for "No more bets"; seat 2 is dealt in."""
    service = make_service()
    for kind in ("blackjack", "twenty_point_bonus"):
        request(service, "wager", seat=1, kind=kind, amount="10")
        request(service, "wager", seat=3, kind=kind, amount="10")
    held = drawn(service, "10C")
    assert bodies(held, "/event/card_dealt") == []
    assert _snapshot(held)["awaiting"]["declaration"] == "close_betting"
    for kind in ("blackjack", "twenty_point_bonus"):
        out = request(service, "wager", seat=2, kind=kind, amount="10")
        assert response(out)["status"] == "ok"
    out = request(service, "close_betting")
    assert [(b["seat"], b["card"]) for b in bodies(out, "/event/card_dealt")] == [(1, "10C")]
    out = drawn(service, f"KH KS {UPCARD} {SECOND_CARDS} {HOLE}")
    out += _stands(service)
    out += drawn(service, DRAW)
    assert _settled(out) == TRUTH
    assert _review(out) == {False}


def test_a_wager_after_no_more_bets_is_refused_with_the_rule() -> None:
    service = make_service()
    _wagers(service)
    request(service, "close_betting")
    out = request(service, "wager", seat=4, kind="blackjack", amount="10")
    error = response(out)["error"]
    assert (error["code"], "No more bets" in error["message"]) == ("wager_rejected", True)
    assert "13:69F-2.24(d)" in error["message"]


def test_a_card_for_a_hand_waits_for_its_declared_decision() -> None:
    """Seat 2's hit card reaches the daemon 20 ms before the console's "stand seat 1": it is
    not given to seat 1; it waits for seat 1's stand, then for seat 2's hit."""
    service = make_service()
    _wagers(service)
    request(service, "close_betting")
    drawn(service, f"{FIRST_CARDS} {UPCARD} 5C 2D QD {HOLE}")  # seat 1: 10C 5C = 15
    held = drawn(service, "4S")
    assert bodies(held, "/event/card_dealt") == []
    assert _snapshot(held)["awaiting"] == {
        "declaration": "decision", "seat": 1, "hand": 1, "since": SEEN,
    }  # fmt: skip
    out = request(service, "action", seat=1, action="stand")
    assert bodies(out, "/event/card_dealt") == []  # still not seat 2's: no hit declared
    out = request(service, "action", seat=2, action="hit")
    assert [(b["seat"], b["card"]) for b in bodies(out, "/event/card_dealt")] == [(2, "4S")]


def test_a_card_that_waits_too_long_for_its_declaration_becomes_a_doubt() -> None:
    service = make_service()
    _wagers(service)
    request(service, "close_betting")
    drawn(service, f"{FIRST_CARDS} {UPCARD} {SECOND_CARDS} {HOLE} 4S")
    [timer] = [t for t in service.timers() if t.kind == "declaration"]
    out = service.apply_body(
        "timer", {"timer": "declaration", "key": timer.key, "seconds": 30}, SEEN
    )
    [notice] = bodies(out, "/notice/declaration_missing")
    assert "seat 1 hand 1" in notice["message"]
    assert "request/resume" in notice["message"]
    assert service.take_round_change()  # the round state changed: the daemon publishes it
    assert (_state(service)["doubt"], _state(service)["cards_held"]) == ("declaration_missing", 1)
    # A late declaration places nothing while the doubt stands: the supervisor resumes, and
    # the card goes where the declarations put it.
    assert bodies(request(service, "action", seat=1, action="stand"), "/event/card_dealt") == []
    request(service, "action", seat=2, action="hit")
    out = request(service, "resume")
    assert [(b["seat"], b["card"]) for b in bodies(out, "/event/card_dealt")] == [(2, "4S")]
    assert service.review == ["declaration_missing"]


def test_a_timer_that_no_longer_applies_changes_nothing() -> None:
    service = make_service()
    _wagers(service)
    drawn(service, "10C")
    [timer] = service.timers()
    request(service, "close_betting")  # the card was placed: that wait is over
    out = service.apply_body("timer", {"timer": timer.kind, "key": timer.key, "seconds": 30}, SEEN)
    assert out == []
    assert service.doubt is None


def test_a_card_with_no_round_open_holds_the_round_it_would_join() -> None:
    """The first card arrives before any wager: either this round's first card (the
    console's wagers are late) or one no round needed. Only the dealer can say."""
    service = make_service()
    out = drawn(service, "10C")
    [notice] = bodies(out, "/notice/card_before_round")
    assert "discard" in notice["message"]
    _wagers(service)
    out = request(service, "close_betting")
    assert bodies(out, "/event/card_dealt") == []
    out = request(service, "resume")  # the floorperson: it was seat 1's first card
    out += drawn(service, f"KH KS {UPCARD} {SECOND_CARDS} {HOLE}")
    out += _stands(service)
    out += drawn(service, DRAW)
    assert _settled(out) == TRUTH
    assert _review(out) == {True}


def test_a_card_no_round_needed_is_discarded_by_the_floorperson() -> None:
    service = make_service()
    drawn(service, "4C")  # drawn after the last round ended, which did not need it
    _wagers(service)
    request(service, "close_betting")
    out = request(service, "resume", discard=2)
    assert response(out)["error"]["code"] == "malformed_request"  # only one card is held
    out = request(service, "resume", discard=1)
    assert response(out)["data"] == {"released": 0}
    out = drawn(service, f"{FIRST_CARDS} {UPCARD} {SECOND_CARDS} {HOLE}")
    out += _stands(service)
    out += drawn(service, DRAW)
    assert _settled(out) == TRUTH


def test_a_void_that_crossed_a_card_it_would_have_changed_is_a_doubt() -> None:
    """The console voided the round having seen only the wagers; the table had dealt since."""
    service = make_service()
    seen = max(b["seq"] for b in bodies(_wagers(service)))
    request(service, "close_betting", seen=seen)
    drawn(service, FIRST_CARDS)
    out = request(service, "void", reason="misdeal", seen=seen)
    assert response(out)["error"]["code"] == "crossed_card"
    assert bodies(out, "/notice/crossed_request")
    assert service.doubt == "crossed_request"
    assert service.engine.round_open  # nothing was voided behind the dealer's back


def test_a_decision_sent_before_the_console_saw_the_cards_is_taken_where_it_can_be() -> None:
    """The dealer decided on the cards in front of her; their messages reached the console
    later: a request that cannot have been meant before them is taken where it arrives."""
    service = make_service()
    seen = max(b["seq"] for b in bodies(_wagers(service)))
    request(service, "close_betting", seen=seen)
    drawn(service, f"{FIRST_CARDS} {UPCARD} {SECOND_CARDS} {HOLE}")
    out = request(service, "action", seat=1, action="stand", seen=seen)
    assert response(out)["status"] == "ok"
    assert service.doubt is None


def test_an_enq_restart_between_rounds_holds_a_round_opened_by_a_console_that_did_not_see_it() -> (
    None
):
    """The console's wagers went unanswered while the daemon was down, the dealer dealt seat
    1's first card meanwhile (gone: the shoe keeps nothing), and the console sends its
    wagers again, as it had them."""
    service = make_service(protocol="enq")
    take(service, shoe.CardDrawn("9", "H", seq=0x30, burned=True))
    before = _state(service)["as_of"]
    out = service.apply_body("start", {"protocol": "enq", "contract": CONSOLE_CONTRACT}, SEEN)
    [notice] = bodies(out, "/notice/daemon_restarted")
    assert "has seen the table since" in notice["message"]
    for seat in (1, 2, 3):
        request(service, "wager", seat=seat, kind="blackjack", amount="10", seen=before)
    out = request(service, "close_betting", seen=before)
    assert service.doubt == "unheard_round"
    out = drawn(service, "KH KS")  # seat 1's 10C went by unheard: these are held
    assert bodies(out, "/event/card_dealt") == []


def test_an_enq_restart_between_rounds_needs_nothing_of_a_console_that_saw_it() -> None:
    service = make_service(protocol="enq")
    take(service, shoe.CardDrawn("9", "H", seq=0x30, burned=True))
    out = service.apply_body("start", {"protocol": "enq", "contract": CONSOLE_CONTRACT}, SEEN)
    seen = max(b["seq"] for b in bodies(out))
    request(service, "wager", seat=1, kind="blackjack", amount="10", seen=seen)
    request(service, "close_betting", seen=seen)
    out = drawn(service, "10C")
    assert [(b["seat"], b["card"]) for b in bodies(out, "/event/card_dealt")] == [(1, "10C")]
    assert service.doubt is None


def _unheard_shuffle(*, seen_back: bool) -> TableService:
    """An ENQ table restarted between rounds; the console's shuffle, tapped while it was
    down, arrives with the `seen` of its tap; `seen_back`: sent after the reader's line
    showed `connected` again instead."""
    service = make_service(protocol="enq")
    request(service, "shuffle")
    take(service, shoe.CardDrawn("9", "H", seq=0x30, burned=True))  # the last shoe's burn
    before = _state(service)["as_of"]
    service.apply_body("start", {"protocol": "enq", "contract": CONSOLE_CONTRACT}, SEEN)
    back = service.on_link_event(Connected("/dev/ttyS0"))
    seen = max(b["seq"] for b in bodies(back)) if seen_back else before
    request(service, "shuffle", seen=seen)
    return service


def test_a_shuffle_tapped_while_an_enq_table_was_unheard_holds_its_cards() -> None:
    """The burn may have been dealt before the port opened: the round's first card would be
    taken for it. The floorperson says it was (`burned`); the cards then go where dealt."""
    service = _unheard_shuffle(seen_back=False)
    assert service.doubt == "unheard_shuffle"
    _wagers(service)
    request(service, "close_betting")
    out = drawn(service, "KD")
    assert bodies(out, "/event/card_dealt") == []
    refused = request(service, "resume", burned=2)  # one burn is due, not two
    assert response(refused)["error"]["code"] == "malformed_request"
    out = request(service, "resume", burned=1)
    assert [(b["seat"], b["card"]) for b in bodies(out, "/event/card_dealt")] == [(1, "KD")]
    assert service.engine.burns_due == 0


def test_a_shuffle_sent_once_the_table_was_heard_again_waits_for_its_burn() -> None:
    service = _unheard_shuffle(seen_back=True)
    assert service.doubt is None
    out = drawn(service, "2C")
    assert bodies(out, "/event/card_burned") != []


def test_a_console_that_saw_the_restart_notice_but_not_the_line_open_vouches_for_nothing() -> None:
    """The notice comes before the port is open: a card sent between went to no one."""
    service = make_service(protocol="enq")
    take(service, shoe.CardDrawn("9", "H", seq=0x30, burned=True))
    out = service.apply_body("start", {"protocol": "enq", "contract": CONSOLE_CONTRACT}, SEEN)
    seen = max(b["seq"] for b in bodies(out))
    service.on_link_event(Connected("/dev/ttyS0"))
    request(service, "wager", seat=1, kind="blackjack", amount="10", seen=seen)
    request(service, "close_betting", seen=seen)
    assert service.doubt == "unheard_round"


def _enq_round_to_the_upcard() -> TableService:
    service = make_service(protocol="enq")
    _wagers(service)
    request(service, "close_betting")
    drawn(service, f"{FIRST_CARDS} {UPCARD}")
    return service


def test_an_enq_error_frame_mid_round_holds_the_cards_until_the_dealer_says() -> None:
    """E, code 1 "can not read": seat 1's second card left the shoe unread."""
    service = _enq_round_to_the_upcard()
    out = service.on_shoe_event(shoe.FaultSet("other", 1, name="can not read"), seen_at=SEEN)
    [notice] = bodies(out, "/notice/reader_fault")
    assert "can not read" in notice["message"]
    service.on_shoe_event(shoe.FaultCleared("other", 1), seen_at=SEEN)
    held = drawn(service, f"2D QD {HOLE}")
    assert bodies(held, "/event/card_dealt") == []
    out = request(service, "card", card="7H")  # what went by unread, in its place
    out += request(service, "resume")
    out += _stands(service)
    out += drawn(service, DRAW)
    assert _settled(out) == TRUTH
    assert _review(out) == {True}


def test_an_r_frame_is_held_for_the_dealer_whatever_its_face() -> None:
    """An `R` frame repeats the card before it or brings one that went by unread: its face
    cannot say which (a six-deck shoe deals the same face twice in a row about once in
    sixty), so the dealer does: here seat 1's 7H, whose `D` frame never came."""
    service = _enq_round_to_the_upcard()
    unseen = shoe.CardDrawn("7", "H", seq=0x41, origin="retransmission")
    out = service.on_shoe_event(unseen, seen_at=SEEN)
    assert bodies(out, "/notice/retransmitted_card")
    assert (service.doubt, service.cards_held) == ("retransmitted_card", 1)
    out = drawn(service, f"2D QD {HOLE}")
    out += request(service, "resume")
    out += _stands(service)
    out += drawn(service, DRAW)
    assert _settled(out) == TRUTH
    assert _review(out) == {True}


def test_an_r_frame_with_the_face_of_the_card_before_it_is_held_too() -> None:
    service = _enq_round_to_the_upcard()
    again = shoe.CardDrawn("6", "S", seq=0x40, origin="retransmission")
    out = service.on_shoe_event(again, seen_at=SEEN)
    assert bodies(out, "/notice/retransmitted_card")
    assert (service.doubt, service.cards_held) == ("retransmitted_card", 1)
    # A repeat after all: the floorperson sets it aside, and the round goes on.
    assert response(request(service, "resume", discard=1))["data"] == {"released": 0}
    out = drawn(service, f"7H 2D QD {HOLE}")
    out += _stands(service)
    out += drawn(service, DRAW)
    assert _settled(out) == TRUTH


def test_a_card_drawn_outside_a_game_is_held_in_a_round_and_dropped_between_rounds() -> None:
    service = make_service(protocol="enq")
    outside = shoe.CardDrawn("4", "C", seq=0x30, origin="outside_game")
    out = service.on_shoe_event(outside, seen_at=SEEN)
    assert bodies(out, "/notice/card_outside_game")
    assert (service.doubt, service.cards_held) == (None, 0)
    service = _enq_round_to_the_upcard()
    outside = shoe.CardDrawn("7", "H", seq=0x40, origin="outside_game")
    service.on_shoe_event(outside, seen_at=SEEN)
    assert (service.doubt, service.cards_held) == ("card_outside_game", 1)


def test_an_s_frame_mid_round_is_a_restart_and_one_that_greets_a_new_link_is_not() -> None:
    service = _enq_round_to_the_upcard()
    service.on_link_event(Connected("/dev/pts/9"))
    assert service.on_shoe_event(shoe.CommunicationStarted(seq=0x30), seen_at=SEEN) == []
    drawn(service, "7H")
    out = service.on_shoe_event(shoe.CommunicationStarted(seq=0x30), seen_at=SEEN)
    assert bodies(out, "/notice/reader_restarted")
    assert service.doubt == "reader_restarted"


def test_a_frame_number_used_again_with_other_contents_is_a_doubt() -> None:
    service = _enq_round_to_the_upcard()
    take(service, shoe.CardDrawn("7", "H", seq=0x50))
    out, _ = take(service, shoe.CardDrawn("2", "D", seq=0x50))
    assert bodies(out, "/notice/sequence_conflict")
    assert (service.doubt, service.cards_held) == ("sequence_conflict", 1)


def test_a_round_waiting_for_a_silent_shoe_is_told_to_the_pit_once() -> None:
    service = _enq_round_to_the_upcard()
    assert Timer("silence", service.shoe_events) in service.timers()
    record = {"timer": "silence", "key": service.shoe_events, "seconds": 120}
    out = service.apply_body("timer", record, SEEN)
    [notice] = bodies(out, "/notice/reader_silent")
    assert "cable" in notice["message"]
    assert [t for t in service.timers() if t.kind == "silence"] == []
    assert service.apply_body("timer", record, SEEN) == []


def test_a_borrowed_client_id_holds_the_table_s_cards() -> None:
    """While the broker keeps replacing the daemon's connection, a twin may answer the
    console: every card waits for the dealer."""
    service = make_service()
    _wagers(service)
    request(service, "close_betting")
    record = {"kind": "client_id_in_use", "message": "another client", "hold": True}
    service.apply_body("notice", record, SEEN)
    out = drawn(service, FIRST_CARDS)
    assert bodies(out, "/event/card_dealt") == []
    assert (service.doubt, service.cards_held) == ("client_id_in_use", 3)


def test_responses_name_the_node_the_start_named() -> None:
    service = make_service()
    service.apply_body(
        "start", {"protocol": "reference", "node": "pit-a", "contract": CONSOLE_CONTRACT}, SEEN
    )
    assert response(request(service, "status"))["node"] == "pit-a"


def test_custody_and_history_survive_a_checkpoint() -> None:
    service = make_service()
    seen = max(b["seq"] for b in bodies(_wagers(service)))
    drawn(service, "10C")
    restored = make_service()
    restored.restore(service.checkpoint())
    assert restored.checkpoint() == service.checkpoint()
    out = request(restored, "close_betting", seen=seen)
    assert [(b["seat"], b["card"]) for b in bodies(out, "/event/card_dealt")] == [(1, "10C")]


def test_a_request_delivered_again_is_answered_again_and_not_obeyed_again() -> None:
    """MQTT delivers a QoS 1 request again when its acknowledgement is lost: a hit obeyed
    twice would take a second card, a "No more bets" obeyed twice would close the next
    window. A request with a transaction, delivered again byte for byte, is answered as it
    was and changes nothing."""
    service = make_service("triple_attack")
    request(service, "wager", transaction="w1", seat=1, kind="first_attack", amount="10")
    payload = b'{"transaction": "c1", "seen": 3}'
    first = service.on_request("close_betting", payload)
    drawn(service, "5C")  # seat 1's first card: the second attack window opens
    again = service.on_request("close_betting", payload)
    assert response(again) | {"seq": None, "id": None} == response(first) | {
        "seq": None, "id": None, "duplicate": True,
    }  # fmt: skip
    assert service.engine.public_view()["round"]["betting_open"] is True
    refused = service.on_request("action", b'{"transaction": "a1", "seat": 1, "action": "hit"}')
    assert response(refused)["error"]["code"] == "action_rejected"
    again = service.on_request("action", b'{"transaction": "a1", "seat": 1, "action": "hit"}')
    assert response(again)["error"] == response(refused)["error"]
    assert response(again)["duplicate"] is True


def test_a_shuffle_announced_after_its_burn_card_keeps_the_card_for_the_floorperson() -> None:
    """An ENQ shoe says nothing of a shuffle: the console's word came after the burn card.
    The card is held, not dropped: once the floorperson resumes, it is the burn."""
    service = make_service(protocol="enq")
    drawn(service, "9H")  # the burn, before the console's shuffle
    request(service, "shuffle")
    assert (service.doubt, service.cards_held) == ("card_before_round", 1)
    request(service, "resume")
    _wagers(service)
    request(service, "close_betting")
    out = drawn(service, f"{FIRST_CARDS} {UPCARD} {SECOND_CARDS} {HOLE}")
    out += _stands(service)
    out += drawn(service, DRAW)
    assert _settled(out) == TRUTH


def test_a_card_no_decision_of_the_round_took_holds_the_next_round() -> None:
    """A card that came during the round and that no decision took is not dealt to the next
    round's first seat in silence: seat 1 surrenders, no hand needs the dealer's total
    (decision 7) and the round ends with the card still held."""
    service = make_service()
    request(service, "wager", seat=1, kind="blackjack", amount="10")
    request(service, "close_betting")
    drawn(service, "10C 9S 6D 8H")  # seat 1: 16 against a 9; the hole card 8H
    drawn(service, "4S")  # dealt early, or by mistake: it waits for seat 1's decision
    out = request(service, "action", seat=1, action="surrender")
    assert bodies(out, "/event/round_ended")
    assert bodies(out, "/notice/card_before_round")
    assert (service.doubt, service.cards_held) == ("card_before_round", 1)


def test_a_shuffle_during_a_doubt_that_holds_no_card_leaves_no_hole_in_seq() -> None:
    service = make_service()
    service.apply_body("notice", {"kind": "table_claimed", "message": "x", "hold": True}, SEEN)
    out = request(service, "shuffle")
    seqs = [b["seq"] for b in bodies(out)]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
