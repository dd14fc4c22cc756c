"""The table's surveillance fed by hand: a foreign card held and named, a census at every
shuffle, and its messages only on the surveillance topics."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import jsonschema
import pytest

from daemon.table.surveillance import render_summary
from daemon.wire.asyncapi import build
from drivers import events as shoe
from rules.cards import Card
from tests.daemon.tables import SEEN, bodies, drawn, make_service, request, response

if TYPE_CHECKING:
    from daemon.table.service import TableService
    from daemon.wire.envelope import Outbound

MAIN = {"blackjack": "blackjack", "double_attack": "initial", "triple_attack": "first_attack"}


def _new_shoe(service: TableService) -> list[Outbound]:
    return service.on_shoe_event(shoe.NewShoe(), seen_at=SEEN)


def _open_round(service: TableService, game: str, *, seats: int = 1) -> None:
    for seat in range(1, seats + 1):
        answer = request(service, "wager", seat=seat, kind=MAIN[game], amount="25")
        assert response(answer)["status"] == "ok", response(answer)
    assert response(request(service, "close_betting"))["status"] == "ok"


def _without_bonus(game: str) -> dict[str, Any]:
    """A one-deck blackjack table may not offer the 20 point bonus (13:69F-2.2(a)2)."""
    if game != "blackjack":
        return {}
    return {"twenty_point_bonus": False, "limits": {"blackjack": {"min": "10", "max": "1000"}}}


# ------------------------------------------------------------------ a foreign card
@pytest.mark.parametrize(
    ("game", "decks", "before", "foreign", "reason"),
    [
        # A second queen of hearts in a one-deck shoe: the dealer's upcard.
        ("blackjack", 1, "QH", "QH", "over_the_shoe"),
        # A 10 in a Spanish shoe, and an eighth... ninth 9 of clubs in eight Spanish decks.
        ("double_attack", 8, "", "10H", "not_in_deck_kind"),
        ("double_attack", 1, "9C", "9C", "over_the_shoe"),
        ("triple_attack", 8, "", "10S", "not_in_deck_kind"),
        ("triple_attack", 1, "KD", "KD", "over_the_shoe"),
    ],
)
def test_a_foreign_card_is_held_for_a_supervisor_and_named(
    game: str, decks: int, before: str, foreign: str, reason: str
) -> None:
    service = make_service(game, decks=decks, **_without_bonus(game))
    _new_shoe(service)
    drawn(service, "2C")  # the burn
    _open_round(service, game)
    drawn(service, before)
    out = drawn(service, foreign)
    [alarm] = bodies(out, "/surveillance/foreign_card")
    assert (alarm["card"], alarm["reason"], alarm["named_to_pit"]) == (foreign, reason, True)
    [notice] = bodies(out, "/notice/foreign_card")
    assert f"({foreign})" in notice["message"]  # face up: the pit may see it
    assert bodies(out, "/event/card_dealt") == []  # given to no seat
    snapshot = bodies(out, "/round")[-1]
    assert snapshot["doubt"] == "foreign_card"
    assert "foreign_card" in snapshot["review"]
    # The next card waits for the supervisor, then is dealt in the foreign card's place.
    held = drawn(service, "5D")
    assert bodies(held, "/event/card_dealt") == []
    assert bodies(held, "/round")[-1]["cards_held"] == 1
    resumed = request(service, "resume")
    assert response(resumed)["status"] == "ok"
    round_ = service.engine.round
    if round_ is not None and round_.betting_open:  # a wager window opened after the upcard
        resumed += request(service, "close_betting")
    assert [b["card"] for b in bodies(resumed, "/event/card_dealt")] == ["5D"]


def test_a_foreign_hole_card_is_named_to_surveillance_only() -> None:
    service = make_service(
        "blackjack", decks=1, **_without_bonus("blackjack"), hole_card_reader=False
    )
    _new_shoe(service)
    drawn(service, "2C")
    _open_round(service, "blackjack")
    drawn(service, "AH 5C 9D")  # seat 1, the upcard, seat 1: the next card is the hole card
    out = drawn(service, "AH")
    [alarm] = bodies(out, "/surveillance/foreign_card")
    assert (alarm["card"], alarm["named_to_pit"]) == ("AH", False)
    [notice] = bodies(out, "/notice/foreign_card")
    assert "AH" not in notice["message"]
    assert "named to surveillance only" in notice["message"]
    # Voided, the round returns its wagers; the card went nowhere.
    voided = request(service, "void")
    assert response(voided)["status"] == "ok"
    assert [b["voided"] for b in bodies(voided, "/event/round_ended")] == [True]


def test_a_burn_before_its_shoe_is_announced_is_judged_by_its_rank_only() -> None:
    """An ENQ shoe announces no shuffle: its new shoe's burn may come before the console's
    shuffle, and may be a card the old shoe gave every one of."""
    service = make_service("blackjack", decks=1, **_without_bonus("blackjack"), protocol="enq")
    _new_shoe(service)
    drawn(service, "2C")  # the burn of the first shoe
    _open_round(service, "blackjack")
    drawn(service, "QH 7C 9D KS")  # seat 1 stands on 19, the dealer on 17
    request(service, "action", seat=1, action="stand")
    out = service.on_shoe_event(shoe.CardDrawn("Q", "H", 0, burned=True), seen_at=SEEN)
    assert bodies(out, "/surveillance/foreign_card") == []
    answer = request(service, "shuffle")
    assert response(answer)["status"] == "ok"
    [ended] = bodies(answer, "/surveillance/shoe_ended")
    assert ended["census"]["by_rank"]["Q"] == 1  # the old shoe's queen; the burn is the new one's
    assert dict(service.surveillance.census.seen) == {Card.parse("QH"): 1}


# ------------------------------------------------------------------ the census
def test_every_shuffle_tells_surveillance_what_the_shoe_gave() -> None:
    service = make_service("blackjack")
    first = _new_shoe(service)
    assert bodies(first, "/surveillance/") == []  # no shoe before the first was seen
    censuses: list[dict[str, Any]] = []
    for cards in ("KD 7S KH QC", "9D 7D 9S KD"):  # seat 1 stands, the dealer has 17
        drawn(service, "2C")  # the burn
        _open_round(service, "blackjack")
        drawn(service, cards)
        request(service, "action", seat=1, action="stand")
        out = _new_shoe(service)
        [ended] = bodies(out, "/surveillance/shoe_ended")
        censuses.append(ended["census"])
    assert [c["shoe"] for c in censuses] == [1, 2]
    assert [c["cards_seen"] for c in censuses] == [5, 5]  # the burn and four cards
    assert [c["cards_left"] for c in censuses] == [312 - 5, 312 - 5]
    assert censuses[0]["by_rank"]["K"] == 2
    assert censuses[1]["by_suit"]["D"] == 3
    assert all(c["complete"] and c["impossible"] == [] and c["foreign"] == [] for c in censuses)


def test_a_foreign_card_is_in_its_shoes_census_with_the_impossible_count() -> None:
    service = make_service("double_attack", decks=1)
    _new_shoe(service)
    drawn(service, "2C")
    _open_round(service, "double_attack")
    drawn(service, "10H")
    request(service, "void")
    out = _new_shoe(service)
    [ended] = bodies(out, "/surveillance/shoe_ended")
    census = ended["census"]
    assert census["foreign"] == ["10H"]
    assert {"what": "10H", "seen": 1, "holds": 0} in census["impossible"]
    assert {"what": "10", "seen": 1, "holds": 0} in census["impossible"]
    assert census["cards_seen"] == 1  # the burn: the foreign card is not the shoe's


def test_surveillance_survives_a_checkpoint() -> None:
    service = make_service("blackjack", decks=1, **_without_bonus("blackjack"))
    _new_shoe(service)
    drawn(service, "2C")
    _open_round(service, "blackjack")
    drawn(service, "QH")
    restored = make_service("blackjack", decks=1, **_without_bonus("blackjack"))
    restored.restore(service.checkpoint())
    out = drawn(restored, "QH")
    assert [b["card"] for b in bodies(out, "/surveillance/foreign_card")] == ["QH"]


def test_the_summary_is_a_report_section() -> None:
    service = make_service("blackjack")
    _new_shoe(service)
    drawn(service, "2C")
    _open_round(service, "blackjack", seats=2)
    summary = service.surveillance.summary()
    assert summary["shoe"]["cards_seen"] == 1
    lines = render_summary(summary)
    assert lines[0].startswith("table bj1: shoe 1, 1 cards seen, 311 left")


def test_the_surveillance_messages_match_their_channels() -> None:
    document = build(base="casino")
    service = make_service("blackjack", decks=1, readable_ids=False, **_without_bonus("blackjack"))
    _new_shoe(service)
    drawn(service, "2C")
    _open_round(service, "blackjack", seats=2)
    out = drawn(service, "KD 7S KH 9C 2C")  # 2C again: a foreign card
    request(service, "void")
    out += _new_shoe(service)
    kinds = {m.topic.rsplit("/", 1)[1]: m for m in out if "/surveillance/" in m.topic}
    assert set(kinds) == {"foreign_card", "shoe_ended"}
    for kind, message in kinds.items():
        [payload] = document["channels"][f"surveillance_{kind}"]["messages"].values()
        jsonschema.validate(json.loads(message.payload), payload["payload"])


def test_a_table_restored_from_its_checkpoint_weighs_the_seats_as_the_live_one_does() -> None:
    live = make_service("blackjack")
    _new_shoe(live)
    drawn(live, "2C")
    # Seat 1 raises its wager; both seats stand, the dealer has 17.
    for amount, cards in (("25", "KD 5C 7S KH 6C QC"), ("100", "9D 4H 7D 9S 3H KD")):
        request(live, "wager", seat=1, kind="blackjack", amount=amount)
        request(live, "wager", seat=2, kind="blackjack", amount="25")
        request(live, "close_betting")
        drawn(live, cards)
        for seat in (1, 2):
            assert response(request(live, "action", seat=seat, action="stand"))["status"] == "ok"
    restored = make_service("blackjack")
    restored.restore(live.checkpoint())
    ended = [
        [
            {k: v for k, v in json.loads(m.payload).items() if k != "id"}  # each its own ids
            for m in _new_shoe(service)
            if "/surveillance/" in m.topic
        ]
        for service in (live, restored)
    ]
    assert ended[0] == ended[1]
    [body] = ended[0]
    assert [r["seats"]["1"]["main_cents"] for r in body["rounds"]] == [2500, 10000]
    assert {(e["seat"], e["test"]) for e in body["evidence"]} >= {(1, "bet_count"), (2, "wonging")}
