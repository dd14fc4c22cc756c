"""The example round logs played through the daemon's own table service, message by message.

What the display is fed in its unit tests is exactly what the daemon would publish for the
same round (topics, envelopes, retained snapshots), without a broker in between.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from daemon.round_log import replay
from daemon.table.records import event_body
from daemon.table.round_state import RoundStates
from daemon.table.service import TableService
from daemon.table.state import CONSOLE_CONTRACT
from daemon.wire.console import console_request
from daemon.wire.envelope import Envelopes
from daemon.wire.requests import request_record
from daemon.wire.topics import Topics
from drivers import events as shoe
from rules.cards import shoe_composition
from rules.config import TableConfig
from rules.events import DealCard
from rules.games import WagerKind
from rules.player import SimulatedRound

if TYPE_CHECKING:
    from daemon.journal import EventKind
    from daemon.wire.envelope import Outbound

EXAMPLES = Path(__file__).parents[2] / "examples"
BASE = "shoe2mqtt"
SEEN: Final = "2026-11-29T14:00:00.000Z"
# Seven seats of Triple Attack, each with all three attack wagers: 21 settlements a round.
TRIPLE_ATTACK_7: Final = {
    "id": "ta-1",
    "game": "triple_attack",
    "decks": 8,
    "deck_kind": "spanish",
    "seats": 7,
    "limits": {
        "first_attack": {"min": "10", "max": "500"},
        "second_attack": {"min": "10", "max": "500"},
        "third_attack": {"min": "10", "max": "500"},
    },
}
ALL_ATTACKS_7: Final = {
    seat: dict.fromkeys(
        (WagerKind.FIRST_ATTACK, WagerKind.SECOND_ATTACK, WagerKind.THIRD_ATTACK), 2500
    )
    for seat in range(1, 8)
}


def seven_seats_of_triple_attack(seed: int) -> list[Outbound]:
    """Every message of one seven-seat Triple Attack round by basic strategy, dealt from a
    shoe shuffled with `seed`."""
    config = TableConfig.from_mapping(TRIPLE_ATTACK_7)
    service = TableService(config, Topics(BASE), Envelopes(config.table_id))
    rng = random.Random(seed)  # noqa: S311 - a test's shuffle
    cards = list(shoe_composition(config.decks, config.deck_kind).elements())
    rng.shuffle(cards)
    out = [service.state(), *service.on_shoe_event(shoe.NewShoe(), seen_at=SEEN)]
    for seq, card in enumerate(cards[: config.burn_cards], start=1):
        out += service.on_shoe_event(_drawn(str(card), seq, burned=True), seen_at=SEEN)
    seq = config.burn_cards
    dealt = iter(cards[config.burn_cards :])
    simulated = SimulatedRound(config, dealt, ALL_ATTACKS_7, rng)
    while (event := simulated.next_event(service.engine.public_view())) is not None:
        if isinstance(event, DealCard):
            seq += 1
            out += service.on_shoe_event(_drawn(str(event.card), seq), seen_at=SEEN)
        else:
            out += service.on_request(*_encoded(console_request(event)))
    return out


def _drawn(code: str, seq: int, *, burned: bool = False) -> shoe.CardDrawn:
    return shoe.CardDrawn(code[:-1], code[-1], seq, burned=burned)  # type: ignore[arg-type]


def _encoded(request: tuple[str, dict[str, Any]]) -> tuple[str, bytes]:
    return request[0], json.dumps(request[1]).encode()


def example(name: str) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
    """The table line, the events and the raw lines of `examples/<name>`."""
    lines = (EXAMPLES / name).read_text(encoding="utf-8").splitlines()
    table = json.loads(lines[0])
    del table["type"], table["format"]
    return table, [json.loads(line) for line in lines[1:]], lines


def expected_settlements(name: str) -> list[dict[str, Any]]:
    """What `shoe2mqtt replay` settles for the log, in order: the oracle."""
    return [r for r in replay(example(name)[2]) if r["type"] == "settlement"]


def played(name: str, events_played: int | None = None) -> list[Outbound]:
    """Every message the daemon publishes for the log (or its first `events_played` events),
    in order (burn cards as the shoe reports them: a shuffle, then the burn card marked
    burned)."""
    return _playing(name, events_played)[1]


def _playing(name: str, events_played: int | None) -> tuple[TableService, list[Outbound]]:
    table, events, _ = example(name)
    config = TableConfig.from_mapping(table)
    service = TableService(config, Topics(BASE), Envelopes(config.table_id))
    out: list[Outbound] = [service.state(), service.snapshot()]
    burns = 0
    for seq, event in enumerate(events[:events_played], start=1):
        kind = event["type"]
        if kind == "shuffle":
            out += service.on_shoe_event(shoe.NewShoe(), seen_at=SEEN)
            burns = config.burn_cards
        elif kind == "card":
            out += service.on_shoe_event(_drawn(event["card"], seq, burned=burns > 0), seen_at=SEEN)
            burns = max(0, burns - 1)
        else:
            body = {k: v for k, v in event.items() if k != "type"}
            out += service.on_request(kind, json.dumps(body).encode())
    return service, out


def unreadable_card_fault_and_gap(name: str, events_played: int) -> list[Outbound]:
    """The log's first `events_played` events, then an unreadable card, a jammed reader and
    lost frames, as the daemon publishes them."""
    service, out = _playing(name, events_played)
    return [
        *out,
        *service.on_shoe_event(shoe.CardUnreadable(seq=30), seen_at=SEEN),
        *service.on_shoe_event(shoe.FaultSet("jam", 3), seen_at=SEEN),
        *service.on_shoe_event(shoe.SequenceGap(expected=31, got=33), seen_at=SEEN),
    ]


# A Double Attack round in which the dealer stands on two cards (KD, then the hole card 7C:
# 17): `hole_card_revealed`, then the optional bonus wagers' settlements (26.6(d)1), then
# the round's end, all caused by the one `stand` that ends the players' turn.
DOUBLE_ATTACK_1: Final[dict[str, Any]] = {
    "id": "da-1",
    "game": "double_attack",
    "decks": 8,
    "deck_kind": "spanish",
    "seats": 7,
    "limits": {
        "initial": {"min": "10.00", "max": "1000.00"},
        "optional_bonus": {"min": "1.00", "max": "100.00"},
        "double_attack": {"min": "10.00", "max": "1000.00"},
    },
}
DEALER_STANDS_ON_TWO: Final[list[dict[str, Any]]] = [
    {"type": "wager", "seat": 1, "kind": "initial", "amount": "25.00"},
    {"type": "wager", "seat": 1, "kind": "optional_bonus", "amount": "5.00"},
    {"type": "wager", "seat": 4, "kind": "initial", "amount": "50.00"},
    {"type": "wager", "seat": 4, "kind": "optional_bonus", "amount": "10.00"},
    {"type": "close_betting"},
    {"type": "card", "card": "KD"},
    {"type": "wager", "seat": 1, "kind": "double_attack", "amount": "25.00"},
    {"type": "wager", "seat": 4, "kind": "double_attack", "amount": "50.00"},
    {"type": "close_betting"},
    {"type": "card", "card": "9H"},
    {"type": "card", "card": "JS"},
    {"type": "card", "card": "9C"},
    {"type": "card", "card": "8S"},
    {"type": "card", "card": "7C"},
    {"type": "action", "action": "stand", "seat": 1},
    {"type": "action", "action": "stand", "seat": 4},
]


def as_the_daemon_publishes(
    table: dict[str, Any],
    events: list[dict[str, Any]],
    *,
    every: float,
    contract: int = CONSOLE_CONTRACT,
) -> list[Outbound]:
    """Every message the daemon hands the broker for a round log's events, one every
    `every` seconds, in its order: each journaled event's numbered messages, then the round
    state when daemon.table.round_state lets it go (a change of phase at once, else at most every
    250 ms); under `contract` 4, each event's one round message."""
    config = TableConfig.from_mapping(table)
    service = TableService(config, Topics(BASE), Envelopes(config.table_id))
    out: list[Outbound] = []
    states = RoundStates(out.append)
    start = {"protocol": "reference", "node": "pit-pc", "contract": contract}
    journaled: list[tuple[EventKind, dict[str, Any]]] = [("start", start)]
    for seq, event in enumerate(events, start=1):
        if event["type"] == "card":
            journaled.append(("shoe", event_body(_drawn(event["card"], seq))))
        else:
            body = {k: v for k, v in event.items() if k != "type"}
            journaled.append(("request", request_record(event["type"], json.dumps(body).encode())))
    for n, (kind, record) in enumerate(journaled):
        now = n * every
        states.publish_due(now)
        out += service.apply_body(kind, json.loads(json.dumps(record)), SEEN)
        states.applied(config.table_id, service, now)
    states.flush()
    return out
