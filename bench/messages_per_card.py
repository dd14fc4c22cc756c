"""QoS 1 messages the daemon publishes per card dealt, over whole rounds, under each console
contract (docs/performance.md, "The round snapshot as a state" and "One message an input").

    uv run python -m bench.messages_per_card [--rounds 2000] [--pace 1.25] [--games ...]

The goals bench's load (bench/e2e/load.py: basic-strategy rounds, two to five seats with
their bonus wagers, each card at `pace` cards a second and the requests between two cards
sent together half way between them) is applied through the daemon's own table service, as
the daemon applies journaled events (`TableService.apply`), and every message it would hand the
broker is counted, by kind:
- contract 2: every message is numbered, the round snapshot after each event that changed
  the round among them;
- contract 3: the numbered messages, and the round states `daemon.table.round_state` lets go on
  the load's own clock (a change of phase at once, else at most every 250 ms);
- contract 4: one numbered round message an input, and the table's own state and the
  surveillance's messages beside it.
Sans-I/O and deterministic: no broker, no sleeping; the same seed gives the same figures.
Only whole rounds count (the last round is played to its end).
"""

from __future__ import annotations

import argparse
import collections
import json
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import structlog

from bench.e2e.harness import table_mapping
from bench.e2e.load import CardStep, TableLoad
from daemon.table.records import event_body
from daemon.table.round_state import RoundStates
from daemon.table.service import TableService
from daemon.wire.envelope import Envelopes
from daemon.wire.requests import request_record
from daemon.wire.round_message import ROUND_CONTRACT, STATE_CONTRACT, unbundled_outbound
from daemon.wire.topics import Topics
from drivers import events as shoe
from rules.config import TableConfig
from rules.games import Game

if TYPE_CHECKING:
    from collections.abc import Sequence

    from bench.e2e.load import Step
    from daemon.journal import EventKind
    from daemon.wire.envelope import Outbound

AT = "2026-12-01T18:00:00.000Z"
CONTRACTS = (2, STATE_CONTRACT, ROUND_CONTRACT)


@dataclass
class Count:
    game: Game
    contract: int
    cards: int = 0
    rounds: int = 0
    kinds: collections.Counter[str] = field(default_factory=collections.Counter)
    numbered_bytes: int = 0  # the numbered messages' payloads: what the journal and archive keep

    @property
    def per_card(self) -> float:
        return sum(self.kinds.values()) / max(self.cards, 1)

    def line(self) -> str:
        top = ", ".join(
            f"{kind} {n / max(self.cards, 1):.2f}" for kind, n in self.kinds.most_common(6)
        )
        kept = self.numbered_bytes / max(self.cards, 1)
        return (
            f"{self.game.value:14} contract {self.contract}: {self.per_card:.2f} messages a card, "
            f"{kept:,.0f} numbered bytes a card ({self.rounds} rounds, {self.cards} cards; {top})"
        )


def _records(step: Step) -> list[tuple[EventKind, dict[str, object]]]:
    if isinstance(step, CardStep):
        out: list[tuple[EventKind, dict[str, object]]] = []
        if step.shuffled:
            out.append(("shoe", event_body(shoe.NewShoe())))
        code = str(step.card)
        drawn = shoe.CardDrawn(code[:-1], code[-1], 0, burned=step.burned)  # type: ignore[arg-type]
        return [*out, ("shoe", event_body(drawn))]
    payload = json.dumps(step.body).encode()
    return [("request", request_record(step.command, payload))]


def count(game: Game, rounds: int, *, pace: float, contract: int, seed: int = 1) -> Count:
    """The messages of `rounds` whole rounds at one table of `game`."""
    config = TableConfig.from_mapping(table_mapping(game, "t1"))
    service = TableService(config, Topics("bench"), Envelopes("t1"))
    result = Count(game, contract)
    published: list[Outbound] = []
    states = RoundStates(published.append)
    start = {"protocol": "reference", "node": "bench", "contract": contract}
    service.apply_body("start", start, AT)
    states.applied("t1", service, 0.0)
    for step in TableLoad(config, seed, pace=pace, phase=0.0).steps():
        states.publish_due(step.at)
        for kind, record in _records(step):
            published += service.apply_body(kind, json.loads(json.dumps(record)), AT)
            states.applied("t1", service, step.at)
        result.cards += isinstance(step, CardStep)
        ended = any(
            part.topic.endswith("/event/round_ended")
            for message in published
            for part in unbundled_outbound(message)  # under contract 4, what it carried
        )
        for message in published:
            result.kinds[_kind(message.topic)] += 1
            result.numbered_bytes += len(message.payload) if message.seq else 0
        published.clear()
        if ended:
            result.rounds += 1
            if result.rounds >= rounds:
                break
    states.flush()
    for message in published:
        result.kinds[_kind(message.topic)] += 1
    return result


def _kind(topic: str) -> str:
    """`event/card_dealt`, `response/wager`, `settlement`, `round`: the topic under the table."""
    return topic.split("/", 2)[2]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2000, help="whole rounds per game")
    parser.add_argument("--pace", type=float, default=1.25, help="cards a second at the table")
    parser.add_argument(
        "--games", nargs="+", type=Game, default=list(Game), help="games to count (all)"
    )
    args = parser.parse_args(argv)
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.ERROR))
    totals = {contract: [0, 0] for contract in CONTRACTS}
    for game in args.games:
        for contract in CONTRACTS:
            result = count(game, args.rounds, pace=args.pace, contract=contract)
            print(result.line())
            totals[contract][0] += sum(result.kinds.values())
            totals[contract][1] += result.cards
    for contract, (messages, cards) in totals.items():
        print(
            f"all games, contract {contract}: {messages / max(cards, 1):.2f} QoS 1 messages "
            f"a card at {args.pace:g} cards/s"
        )


if __name__ == "__main__":
    main()
