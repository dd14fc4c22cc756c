"""A "No more bets" that carries the layout (`close_betting` with `wagers`, docs/mqtt.md):
one request for a window's wagers and its close, taken whole or not at all.

The oracle is the same wagers sent the old way, one request each and then `close_betting`,
to a second table: what that table accepts and publishes is what the layout must come to,
and where that table refuses a first wager (or the close), the layout is refused with that
refusal's code and changes nothing at all.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from daemon.wire.console import layout_request
from daemon.wire.payload_schemas import REQUESTS
from rules.events import PlaceWager
from rules.games import WagerKind
from tests.daemon.tables import bodies, drawn, make_service, request, response

if TYPE_CHECKING:
    from daemon.table.service import TableService
    from daemon.wire.envelope import Outbound

_KINDS = {
    "blackjack": ("blackjack", "twenty_point_bonus"),
    "double_attack": ("initial", "optional_bonus"),
    "triple_attack": ("first_attack",),
}
# Amounts around every base table's limits (tests/rules/tables.py): below, at and above.
_AMOUNTS = ("1", "5", "10", "25", "100", "500", "1000", "5000")
_DEAL = "KD 7S KH QH 9C 8D 5H 4S 3C 2D JH 6S"
_ENVELOPE = ("id", "seq", "ts")


@st.composite
def layouts(draw: st.DrawFn) -> tuple[str, list[dict[str, Any]]]:
    """A game and a layout of its first window: seats 0 to 8 (the tables have 1 to 7), each
    wager named once, in any order (a bonus before the wager it needs is refused)."""
    game = draw(st.sampled_from(sorted(_KINDS)))
    named = draw(
        st.lists(
            st.tuples(st.integers(0, 8), st.sampled_from(_KINDS[game])),
            min_size=1,
            max_size=6,
            unique=True,
        )
    )
    return game, [
        {"seat": seat, "kind": kind, "amount": draw(st.sampled_from(_AMOUNTS))}
        for seat, kind in named
    ]


def _said(out: list[Outbound]) -> list[dict[str, Any]]:
    """What the table published besides answers, without the envelope's numbers."""
    return [
        {k: v for k, v in body.items() if k not in _ENVELOPE}
        for body in bodies(out)
        if body["type"] != "response"
    ]


def _seats(service: TableService) -> list[int]:
    """The seats holding wagers in the table's round (none without a round)."""
    round_ = service.engine.round
    return [] if round_ is None else sorted(round_.seats)


def _one_by_one(service: TableService, wagers: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The old way: each wager its own request, then the close; the first refusal, if any,
    a malformed wager's before any other (a layout's shape is judged before its meaning)."""
    answers = [response(request(service, "wager", **wager)) for wager in wagers]
    answers.append(response(request(service, "close_betting")))
    refused = [(i, a) for i, a in enumerate(answers) if a["status"] == "error"]
    if not refused:
        return None
    malformed = [(i, a) for i, a in refused if a["error"]["code"] == "malformed_request"]
    index, answer = (malformed or refused)[0]
    return {"index": index, **answer["error"]}


@settings(max_examples=150, deadline=None)
@given(layouts())
def test_a_layout_is_its_wagers_then_the_close_or_nothing(
    layout: tuple[str, list[dict[str, Any]]],
) -> None:
    game, wagers = layout
    batched, separate = make_service(game), make_service(game)
    before = batched.engine.public_view()
    answer = response(request(batched, "close_betting", wagers=wagers))
    refused = _one_by_one(separate, wagers)
    if refused is None:
        assert answer["status"] == "ok"
        assert batched.engine.public_view() == separate.engine.public_view()
        assert _said(drawn(batched, _DEAL)) == _said(drawn(separate, _DEAL))
        return
    assert answer["status"] == "error"
    assert answer["error"]["code"] == refused["code"]
    if refused["index"] < len(wagers):  # a wager: named by its place in the layout
        assert answer["error"]["message"].startswith(f"wagers[{refused['index']}]: ")
    assert batched.engine.public_view() == before
    assert _said(drawn(batched, _DEAL)) == _said(drawn(make_service(game), _DEAL))


def test_the_layout_publishes_what_the_wagers_one_by_one_publish() -> None:
    batched, separate = make_service(), make_service()
    wagers = [
        {"seat": 1, "kind": "blackjack", "amount": "25"},
        {"seat": 1, "kind": "twenty_point_bonus", "amount": "10"},
        {"seat": 3, "kind": "blackjack", "amount": "50"},
    ]
    out = request(batched, "close_betting", transaction="c-7", wagers=wagers)
    assert response(out)["status"] == "ok"
    assert response(out)["transaction"] == "c-7"
    kinds = [body["type"] for body in bodies(out) if body["type"] != "response"]
    assert kinds == [
        "round_opened", "wager_accepted", "wager_accepted", "wager_accepted", "betting_closed",
    ]  # fmt: skip
    assert _one_by_one(separate, wagers) is None
    assert _said(drawn(batched, _DEAL)) == _said(drawn(separate, _DEAL))


@pytest.mark.parametrize(
    ("wagers", "says"),
    [
        ([], "wagers: a list"),
        ({"seat": 1}, "wagers: a list"),
        (["1 blackjack 25"], "wagers[0]: an object"),
        (
            [{"seat": 1, "kind": "blackjack", "amount": "25", "type": "withdraw"}],
            "wagers[0]: type: not a field of a layout's wager; its fields: seat, kind, amount",
        ),
        ([{"seat": 1, "kind": "blackjack"}], "wagers[0]: amount"),
        ([{"seat": 1, "kind": "blackjack", "amount": "25", "hand": 1}], "wagers[0]: hand: not"),
        (
            [
                {"seat": 1, "kind": "blackjack", "amount": "25"},
                {"seat": 1, "kind": "blackjack", "amount": "50"},
            ],
            "wagers[1]: seat 1 blackjack is named twice",
        ),
    ],
)
def test_a_malformed_layout_is_refused_and_changes_nothing(wagers: object, says: str) -> None:
    service = make_service()
    before = service.engine.public_view()
    out = service.on_request("close_betting", json.dumps({"wagers": wagers}).encode())
    error = response(out)["error"]
    assert error["code"] == "malformed_request"
    assert error["message"].startswith(says)
    assert service.engine.public_view() == before
    assert _said(out) == []


def test_a_layout_refused_half_way_leaves_none_of_its_wagers_and_tells_the_pit() -> None:
    service = make_service()
    wagers = [
        {"seat": 1, "kind": "blackjack", "amount": "25"},
        {"seat": 9, "kind": "blackjack", "amount": "25"},  # the table has seats 1 to 7
    ]
    out = request(service, "close_betting", wagers=wagers)
    error = response(out)["error"]
    assert error["code"] == "wager_rejected"
    assert error["message"].startswith("wagers[1]: ")
    assert _seats(service) == []
    assert [body["type"] for body in _said(out)] == ["notice"]
    # The dealer corrects the layout and sends it again: it is taken whole.
    wagers[1]["seat"] = 2
    assert response(request(service, "close_betting", wagers=wagers))["status"] == "ok"
    assert _seats(service) == [1, 2]


def test_a_later_window_takes_its_layout_too() -> None:
    """Triple Attack's second attack wager opens after the players' first card
    (13:69F-36.5(f)): its layout comes with that window's "No more bets"."""
    service = make_service("triple_attack")
    first = [
        {"seat": 1, "kind": "first_attack", "amount": "25"},
        {"seat": 2, "kind": "first_attack", "amount": "10"},
    ]
    assert response(request(service, "close_betting", wagers=first))["status"] == "ok"
    drawn(service, "KD 9C")  # each seat's first card
    second = [
        {"seat": 2, "kind": "second_attack", "amount": "10"},
        {"seat": 1, "kind": "second_attack", "amount": "25"},
    ]
    answer = response(request(service, "close_betting", wagers=second))
    assert answer["status"] == "ok", answer
    assert service.engine.round is not None
    stakes = {n: s.wagers for n, s in service.engine.round.seats.items()}
    assert {n: sorted(k.value for k in w) for n, w in stakes.items()} == {
        1: ["first_attack", "second_attack"],
        2: ["first_attack", "second_attack"],
    }


def test_a_layout_delivered_again_is_answered_again_not_placed_again() -> None:
    service = make_service()
    body = {"transaction": "c-1", "wagers": [{"seat": 1, "kind": "blackjack", "amount": "25"}]}
    first = service.on_request("close_betting", json.dumps(body).encode())
    again = service.on_request("close_betting", json.dumps(body).encode())
    assert response(first)["status"] == "ok"
    assert response(again)["duplicate"] is True
    assert _said(again) == []


def test_the_layout_a_console_builds_is_the_documented_request_and_is_taken() -> None:
    wagers = [
        PlaceWager(2, WagerKind.BLACKJACK, 2500),
        PlaceWager(2, WagerKind.TWENTY_POINT_BONUS, 500),
    ]
    command, body = layout_request(wagers)
    assert command == "close_betting"
    jsonschema.validate({"transaction": "c-1", "seen": 0, **body}, REQUESTS[command])
    service = make_service()
    assert response(request(service, command, **body))["status"] == "ok"
    assert _seats(service) == [2]


def test_a_layout_that_crossed_the_card_opening_its_window_is_taken_where_it_arrived() -> None:
    """Sent before the console saw seat 2's first card (`seen`), the second attack's layout
    is tried before that card first (daemon.table.crossing), where its window was not open
    yet: it cannot have been meant there, so it is taken as it arrived, with no doubt."""
    service = make_service("triple_attack")
    first = [
        {"seat": 1, "kind": "first_attack", "amount": "25"},
        {"seat": 2, "kind": "first_attack", "amount": "10"},
    ]
    assert response(request(service, "close_betting", wagers=first))["status"] == "ok"
    seen = max(m.seq for m in drawn(service, "KD"))  # seat 1's first card, seen
    drawn(service, "9C")  # seat 2's: the window opens; the console has not seen it
    second = [{"seat": 1, "kind": "second_attack", "amount": "25"}]
    out = request(service, "close_betting", seen=seen, wagers=second)
    assert response(out)["status"] == "ok"
    assert service.custody.doubt is None
    assert "notice" not in [body["type"] for body in _said(out)]
    assert _seats(service) == [1, 2]


@pytest.mark.parametrize("wagers", [None, [{"seat": 1, "kind": "blackjack", "amount": "25"}]])
def test_a_close_with_a_field_besides_wagers_is_refused_alike(wagers: object) -> None:
    body = {"fold": 1} if wagers is None else {"fold": 1, "wagers": wagers}
    out = make_service().on_request("close_betting", json.dumps(body).encode())
    assert response(out)["error"] == {
        "code": "malformed_request",
        "message": "fold: close_betting takes only wagers",
    }


def test_a_layout_sent_again_after_its_window_closed_is_refused_as_the_close_alone_is() -> None:
    """The console's answer was lost and it sends the layout again, with its `seen` as now
    (the contract): the bytes differ, so it is no duplicate. The first was taken and closed
    the window; the second is refused as a second `close_betting` is, and the pit is told of
    no refused wager."""
    service = make_service()
    wagers = [{"seat": 1, "kind": "blackjack", "amount": "25"}]
    first = request(service, "close_betting", transaction="c-1", seen=0, wagers=wagers)
    seen = max(m.seq for m in first)
    before = service.engine.public_view()
    out = request(service, "close_betting", transaction="c-1", seen=seen, wagers=wagers)
    alone = request(make_service_closed(), "close_betting")
    assert response(out)["error"] == response(alone)["error"]
    assert response(out)["error"]["code"] == "round_state"
    assert _said(out) == []
    assert service.engine.public_view() == before


def make_service_closed() -> TableService:
    """A table whose round's only window was closed."""
    service = make_service()
    request(service, "wager", seat=2, kind="blackjack", amount="10")
    request(service, "close_betting")
    return service
