"""What the ground-truth harness found: each a minimal reproduction, fed to the real table
service by hand, of a settlement wrong in silence, a winner left unpaid without a flag, or a
hole in `seq`.

Closed in the table since (docs/testing.md, "What it found"), these now hold the fix; the
one still open is marked `xfail(strict=True)`: once the table service changes it passes,
strict xfail fails the suite, and whoever fixes it removes its marker. The seed that showed
each in the harness is in its docstring (`run(seed, MIXES[mix], rounds=...)`).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from drivers.events import CardDrawn, CardUnreadable
from tests.daemon.tables import SEEN, bodies, drawn, make_service, request, take

if TYPE_CHECKING:
    from daemon.table.service import TableService


def _deal_two_seats() -> TableService:
    service = make_service()
    for seat in (1, 2):
        request(service, "wager", seat=seat, kind="blackjack", amount="25")
    request(service, "close_betting")
    return service


def test_a_retransmitted_card_with_the_face_of_the_card_before_it_is_not_dropped() -> None:
    """ENQ (harness: `enq_retransmitted` seed 2, round 2). An `R` frame is a card the table
    never received, sent in the place of its lost `D` frame (examples/captures/enq). In a 6- or
    8-deck shoe the next card has the last one's face about once in sixty: here seat 2's 8D
    after seat 1's 8D. The table dropped it as the shoe repeating itself, so every later card
    moved one place, in silence; now every `R` is held for the dealer."""
    service = make_service(protocol="enq")
    for seat in (1, 2):
        request(service, "wager", seat=seat, kind="blackjack", amount="25")
    request(service, "close_betting")
    take(service, CardDrawn("8", "D", seq=10))
    out, _ = take(service, CardDrawn("8", "D", seq=11, origin="retransmission"))
    placed = [(b["seat"], b["card"]) for b in bodies(out, "/event/card_dealt")]
    assert placed == [(2, "8D")] or service.doubt is not None


def test_a_close_betting_delivered_again_does_not_close_the_next_window() -> None:
    """Triple Attack (harness: `duplicates` seed 5, round 8). MQTT delivers a QoS 1 request
    again when an acknowledgement is lost, and a console asks again when an answer is lost.
    The first window's "No more bets", delivered again once the second attack's window was
    open, closed that window: the players' second attack wagers were refused, and their wins
    went unpaid (tried before the card it crossed, the copy was refused there, so it was taken
    where it arrived). Now a request delivered again is answered again and not obeyed again."""
    service = make_service("triple_attack")
    request(service, "wager", seat=1, kind="first_attack", amount="10")
    close = json.dumps({"transaction": "c-2", "seen": 3}).encode()
    service.on_request("close_betting", close)
    drawn(service, "9D")  # seat 1's first card: the second attack's window opens
    service.on_request("close_betting", close)  # the same request, delivered again
    out = request(service, "wager", seat=1, kind="second_attack", amount="10")
    assert bodies(out, "/response/wager")[-1]["status"] == "ok"


def test_a_hit_delivered_again_after_its_card_declares_no_second_hit() -> None:
    """Blackjack (harness: `duplicates`). MQTT delivers a QoS 1 request again when an
    acknowledgement is lost: the console cannot tell (docs/mqtt.md asks it to ask `status`
    before it sends an action again, which covers its own resends only). The copy, arriving
    after the hit's card was placed, declared another hit, and the next card (the next seat's,
    or the dealer's) went to this hand unless a stand for it happened to come first."""
    service = _deal_two_seats()
    drawn(service, "9D 5C 7S 2H 6C QH")  # seats 1 and 2 hold 11; the dealer shows 7
    hit = json.dumps({"transaction": "h-1", "seen": 20, "seat": 1, "action": "hit"}).encode()
    service.on_request("action", hit)
    drawn(service, "3D")  # the hit's card: seat 1 holds 14
    again = service.on_request("action", hit)  # the same request, delivered again
    assert bodies(again, "/event/player_acted") == []


def test_a_shuffle_asked_for_after_its_burn_card_came_burns_no_card_of_the_round() -> None:
    """ENQ (harness: `daemon_restart` seed 8, round 1; a broker's restart does it too). An ENQ
    shoe does not say when it is shuffled: the console does (`request/shuffle`). When that
    request is lost (the daemon or the broker was away) and sent again seconds later, the
    burn card has already come. The table then waits for a burn, takes the round's first
    card for it, and every card of the round moves one place: the dealer's hole card is
    published face up as the upcard before its reveal, and the round settles wrong."""
    service = make_service(protocol="enq")
    take(service, CardDrawn("9", "H", seq=1, burned=True))  # the burn, before the shuffle
    request(service, "shuffle")  # the console's request, sent again
    request(service, "wager", seat=1, kind="blackjack", amount="25")
    request(service, "close_betting")
    out, _ = take(service, CardDrawn("K", "D", seq=2))
    placed = [(b["seat"], b["card"]) for b in bodies(out, "/event/card_dealt")]
    assert placed == [(1, "KD")] or service.doubt is not None
    assert service.doubt is None  # the burn counted for the shuffle: nothing for anyone to do


def test_a_stand_after_a_hit_whose_card_waits_to_be_entered_does_not_take_its_card() -> None:
    """Reference shoe (harness: `reference_unreadable` seed 7000032, round 1: 77 settlements
    wrong in silence in 3,850 rounds of that mix). The hit's card is unreadable: the table
    holds it until the floorperson enters it. The dealer, who dealt it, taps the player's
    stand before noticing. The engine took the stand as the dealer changing their mind ("any
    other decision replaces a hit not yet dealt"), so the hand stood without its card and the
    card entered went to the next seat, unflagged. The same happened while a doubt held the
    hit's card (flagged, but a card left over went to the next round: the next test). Now a
    hit declared is dealt before any other decision of its hand (`hit_pending`)."""
    service = _deal_two_seats()
    drawn(service, "9D 5C 7S 2H 6C QH")  # seats 1 and 2 hold 11; the dealer shows 7
    request(service, "action", seat=1, action="hit")
    service.on_shoe_event(CardUnreadable(seq=0), seen_at=SEEN)  # the hit's card, unread
    request(service, "action", seat=1, action="stand")  # tapped after the card was dealt
    out = request(service, "card", card="5D")  # the floorperson enters the unread card
    placed = [(b["seat"], b["card"]) for b in bodies(out, "/event/card_dealt")]
    assert placed[:1] == [(1, "5D")] or service.review or service.doubt is not None


def test_a_card_held_when_its_round_ends_is_not_dealt_to_the_next_round_in_silence() -> None:
    """Blackjack (harness: `enq_retransmitted` seed 10000031, rounds 12-13, where a stand
    taken while a doubt held a hit's card left that card over). A card that came while the
    table waited for the last decision, and that the decision did not take (a stand; the
    dealer stands on 17), stays held when the round ends; the next round's "No more bets"
    dealt it to that round's first seat, with no doubt and no review (a card that came after
    the round ended was a doubt, `card_before_round`; one held before was not). Now it holds
    the next round for the floorperson."""
    service = make_service()
    request(service, "wager", seat=1, kind="blackjack", amount="25")
    request(service, "close_betting")
    drawn(service, "10S 7S 9D QH")  # seat 1: 19; the dealer: 7 up, queen down (17)
    drawn(service, "5C")  # held: seat 1 has not declared
    request(service, "action", seat=1, action="stand")  # the round ends; 5C is still held
    request(service, "wager", seat=1, kind="blackjack", amount="25")
    out = request(service, "close_betting")
    dealt = [(b["seat"], b["card"]) for b in bodies(out, "/event/card_dealt")]
    assert dealt != [(1, "5C")] or service.review or service.doubt is not None


def test_a_shuffle_during_a_doubt_that_holds_no_card_leaves_no_hole_in_seq() -> None:
    """Harness: `twin_daemon` seed 5000097 (`seq has holes: [10]`), `enq_error_lost` seed
    8000090. A doubt that holds no card yet (another daemon claims the table between rounds),
    then a new shoe (or a void): `_drop_held` made its notice, which took the next `seq`,
    and published it only when it dropped a card. A subscriber saw a `seq` that never came,
    the mark of a lost message."""
    service = make_service()
    claimed = {"kind": "table_claimed", "message": "another daemon claims it", "hold": True}
    service.apply_body("notice", claimed, SEEN)
    out = request(service, "shuffle")
    numbers = [body["seq"] for body in bodies(out)]
    assert numbers == list(range(numbers[0], numbers[0] + len(numbers)))
