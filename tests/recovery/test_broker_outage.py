"""Stop mosquitto mid-session for a while, deal cards meanwhile, and start it again.

The daemon keeps reading the shoe while its broker is away: the cards are journaled and
applied, and what they cause waits for the broker. The journal knows it waits: those
messages are past the table's delivered watermark, and a replay of the journal makes them
(the test reads them so while the broker is down). When the broker is back, all of it
arrives at a subscriber with a persistent session, in order: the table's seq goes 1, 2, 3...
without a gap or a reordering among distinct messages, and every settlement is the
journal's, envelope and all.
"""

from __future__ import annotations

import asyncio
import random
from typing import TYPE_CHECKING, Any

import pytest

from daemon.testing import (
    TABLE_ID,
    journal_events_done,
    journal_pending,
    recovery_run,
    until,
    verify,
)
from daemon.wire.topics import has_envelope
from drivers.emulator import EmulatedShoe, EmulatorSettings

if TYPE_CHECKING:
    from pathlib import Path

    from daemon.testing import Disturbance, Mosquitto, Received

SEED = 7
OUTAGES = 2
CARDS_DURING_OUTAGE = 3
OUTAGE = 1.0  # seconds the broker stays away after the cards: the daemon retries meanwhile


def _first_deal_to_come(view: dict[str, Any]) -> int:
    """Cards the round's first deal still takes, by the round state: two a seat and two for
    the dealer once betting is closed (blackjack), none when a card would wait for anything."""
    round_ = view.get("round")
    if round_ is None or round_["betting_open"] or round_["stage"] not in ("betting", "dealing"):
        return 0
    if view.get("awaiting") is not None or view.get("cards_held"):
        return 0
    seats = round_["seats"]
    dealt = sum(len(hand["cards"]) for seat in seats for hand in seat["hands"])
    return 2 * len(seats) + 2 - dealt - len(round_["dealer"]["cards"])


@pytest.mark.timeout(60)
async def test_what_waits_for_the_broker_arrives_in_order_after_it_returns(
    tmp_path: Path, persistent_mosquitto: Mosquitto
) -> None:
    broker = persistent_mosquitto
    rng = random.Random(SEED)  # noqa: S311 - a seeded table, not a secret
    shoe_settings = EmulatorSettings(protocol="reference", seed=SEED, link=tmp_path / "shoe0")
    queued_meanwhile: list[list[int]] = []  # seq numbers past the watermark meanwhile
    marks: list[int] = []
    async with (
        EmulatedShoe(shoe_settings) as shoe,
        recovery_run(tmp_path, broker, rng, shoe=shoe) as run,
    ):
        state = run.state

        async def outage() -> None:
            done = journal_events_done(state)
            broker.stop()
            for _ in range(CARDS_DURING_OUTAGE):
                await shoe.next_card()
            # The daemon has read, journaled and applied every card; what they caused waits.
            await until(lambda: journal_events_done(state) >= done + CARDS_DURING_OUTAGE)
            queued_meanwhile.append(journal_pending(state, TABLE_ID))
            await asyncio.sleep(OUTAGE)  # the outage goes on; the daemon keeps retrying
            run.daemon.check()
            marks.append(await run.start_broker())

        def disturb() -> Disturbance | None:
            # An outage in a round's first deal, one a round, with more than its cards still
            # to come: what the dealer deals while the broker is away is the round's own.
            # (Three cards dealt where the round wanted a decision were held, rightly, and
            # left the next round holding every card for the dealer until it was voided.)
            due = len(marks) < min(OUTAGES, run.dealer.rounds + 1)
            if due and _first_deal_to_come(run.dealer.view) > CARDS_DURING_OUTAGE:
                return outage
            return None

        await run.begin()
        while len(marks) < OUTAGES or run.dealer.rounds < OUTAGES + 1:
            await run.dealer.play_round(disturb)
        assert await run.finish() == 0, run.daemon.tail()
    verdict = verify(run.collector.messages, run.replay())
    assert verdict.ok, verdict.explain()
    assert verdict.expected > 0
    assert run.collector.connections > OUTAGES  # the collector was cut off too, and came back
    for mark, pending in zip(marks, queued_meanwhile, strict=True):
        assert pending, "nothing waited for the broker"
        arrived = _arrived_after(run.collector.messages[mark:], run.collector.topics.base)
        # Everything that waited came after the outage, in the order it was made.
        assert [seq for seq in arrived if seq in pending][: len(pending)] == pending


def _arrived_after(messages: list[Received], base: str) -> list[int]:
    """The table's numbered messages as a subscriber takes them: its requests and states
    left out, and a QoS 1 repeat (the broker did not see our PUBACK before it went down)
    dropped by its id, as docs/mqtt.md says."""
    prefix = f"{base}/{TABLE_ID}/"
    arrived: list[int] = []
    seen: set[str] = set()
    for m in messages:
        if not m.topic.startswith(prefix) or "/request/" in m.topic or not has_envelope(m.topic):
            continue
        if m.body["id"] not in seen:
            seen.add(m.body["id"])
            arrived.append(m.body["seq"])
    return arrived
