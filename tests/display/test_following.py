"""The display starts from the round state and follows the numbered events after it.

Fed exactly what the daemon hands the broker, in its order (tests/display/rounds.py,
`as_the_daemon_publishes`): each event's numbered messages, then the round state when the
throttle lets it go.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
import structlog

from daemon.display.model import PitModel
from daemon.table.records import LinkRecord
from daemon.wire.availability import availability_payload
from drivers.driver import Disconnected
from tests.daemon.tables import make_service
from tests.display.rounds import (
    BASE,
    DEALER_STANDS_ON_TWO,
    DOUBLE_ATTACK_1,
    as_the_daemon_publishes,
    example,
)

if TYPE_CHECKING:
    from daemon.wire.envelope import Outbound

# Settlements made once the dealer's cards decide them: the hole card is face up by then.
AFTER_THE_REVEAL = frozenset({"dealer_two_cards", "dealer_third_card"})


@pytest.fixture(autouse=True)
def _quiet() -> Any:
    with structlog.testing.capture_logs():
        yield


def _online(model: PitModel, table: str) -> None:
    model.broker_connected()
    model.apply(f"{BASE}/bridge/pc-a/state", b"online")
    model.apply(f"{BASE}/{table}/availability", availability_payload("online", "pc-a"))


def _views(messages: list[Outbound], table: str, *, events: bool = True) -> list[dict[str, Any]]:
    """The table's view after each message (`events` False: a display that followed the
    round states alone, as it did before)."""
    model = PitModel(BASE)
    _online(model, table)
    views = []
    for message in messages:
        if events or "/event/" not in message.topic:
            model.apply(message.topic, message.payload)
            views.append(model.view(table))
    return views


def _results_beside_a_hidden_hole_card(view: dict[str, Any]) -> bool:
    round_ = view["round"]
    if round_ is None or not view["settlements"]:
        return False
    return None in round_["dealer"]["cards"]


@pytest.mark.parametrize("every", [0.01, 0.1, 1.0])
def test_every_view_that_lists_a_settlement_shows_the_hole_card_face_up(every: float) -> None:
    """The dealer stands on two cards: `hole_card_revealed`, the optional bonus wagers'
    settlements and the round's end, then the state. Every view on the way that lists a
    settlement shows the hole card; a display that follows the states alone does not."""
    messages = as_the_daemon_publishes(DOUBLE_ATTACK_1, DEALER_STANDS_ON_TWO, every=every)
    views = _views(messages, "da-1")
    settled = [v for v in views if v["settlements"]]
    assert settled
    assert {s["phase"] for v in settled for s in v["settlements"]} == {"dealer_two_cards"}
    assert not [v for v in views if _results_beside_a_hidden_hole_card(v)]
    assert settled[0]["round"]["dealer"]["cards"] == ["KD", "7C"]
    # The check can fail: the states alone list the results beside the face-down card.
    alone = _views(messages, "da-1", events=False)
    assert [v for v in alone if _results_beside_a_hidden_hole_card(v)]


@pytest.mark.parametrize("every", [0.01, 1.0])
def test_under_contract_4_every_view_is_a_whole_state_and_ends_where_contract_3_ends(
    every: float,
) -> None:
    """One message an input (console contract 4): no view lists a settlement beside the
    face-down hole card, with nothing to fold; the round ends as contract 3's does."""
    four = as_the_daemon_publishes(DOUBLE_ATTACK_1, DEALER_STANDS_ON_TWO, every=every, contract=4)
    assert all(m.topic.endswith(("/round", "/state")) for m in four)
    views = _views(four, "da-1")
    assert [v for v in views if v["settlements"]]
    assert not [v for v in views if _results_beside_a_hidden_hole_card(v)]
    three = as_the_daemon_publishes(DOUBLE_ATTACK_1, DEALER_STANDS_ON_TWO, every=every)
    assert _shown(views[-1]) == _shown(_views(three, "da-1")[-1])
    assert views[-1]["settlements"] == _views(three, "da-1")[-1]["settlements"]


def _shown(view: dict[str, Any]) -> Any:
    """What of a round the events and the state must agree on: the cards, totals, wagers and
    how each hand ended (the stage, the turn and what waits are the state's to say)."""
    round_ = view["round"]
    if round_ is None:
        return None
    return {
        "id": round_["id"],
        "dealer": round_["dealer"],
        "seats": [
            {
                "seat": seat["seat"],
                "wagers": seat["wagers"],
                "hands": [
                    {k: hand[k] for k in ("hand", "cards", "total", "soft", "doubled", "ended")}
                    for hand in seat["hands"]
                ],
            }
            for seat in round_["seats"]
        ],
        "settlements": [s["key"] for s in view["settlements"]],
    }


@pytest.mark.parametrize(
    "name",
    [
        "blackjack-queen-of-hearts.jsonl",
        "double-attack-three-eights.jsonl",
        "triple-attack-dealer-22.jsonl",
    ],
)
def test_the_events_make_of_a_state_what_the_next_state_says(name: str) -> None:
    """Just before each round state arrives, the view the display made of the state before it
    and the events since is the one the new state shows (cards, totals, wagers, hands'
    ends, settlements): the events are followed, not guessed."""
    table, events, _ = example(name)
    messages = as_the_daemon_publishes(table, events, every=0.1)
    model = PitModel(BASE)
    _online(model, table["id"])
    states = 0
    for message in messages:
        before = _shown(model.view(table["id"]))
        model.apply(message.topic, message.payload)
        if message.topic.endswith("/round") and before is not None:
            states += 1
            assert before == _shown(model.view(table["id"])), message.payload[:200]
    assert states > 3


def test_under_contract_4_a_notice_told_between_rounds_is_shown() -> None:
    """The round message carries it in `events` (the round state keeps a round's only)."""
    service = make_service()
    out = service.apply_body(
        "start", {"protocol": "reference", "contract": 4}, "2026-12-02T09:00:00.000Z"
    )
    out += service.apply(
        LinkRecord(Disconnected("/dev/shoe", "unplugged", 5, 0.5)), "2026-12-02T09:00:01.000Z"
    )
    model = PitModel("casino")
    for message in out:
        model.apply(message.topic, message.payload)
    [notice] = model.tables["bj1"].table_notices
    assert notice["kind"] == "reader_disconnected"
