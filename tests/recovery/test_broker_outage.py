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
from typing import TYPE_CHECKING

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

# A time or memory figure: measured alone, not beside the parallel run (scripts/test).
pytestmark = pytest.mark.serial

if TYPE_CHECKING:
    from pathlib import Path

    from daemon.testing import Disturbance, Mosquitto

SEED = 7
OUTAGES = 2
CARDS_DURING_OUTAGE = 3
OUTAGE = 1.0  # seconds the broker stays away after the cards: the daemon retries meanwhile


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

        steps = iter(range(1000))

        def disturb() -> Disturbance | None:
            # An outage at the 4th step of the first rounds: mid-deal, cards still to come.
            return outage if next(steps) % 12 == 3 and len(marks) < OUTAGES else None

        await run.begin()
        while len(marks) < OUTAGES or run.dealer.rounds < OUTAGES + 1:
            await run.dealer.play_round(disturb)
        assert await run.finish() == 0, run.daemon.tail()
    verdict = verify(run.collector.messages, run.replay())
    assert verdict.ok, verdict.explain()
    assert verdict.expected > 0
    assert run.collector.connections > OUTAGES  # the collector was cut off too, and came back
    prefix = f"{run.collector.topics.base}/{TABLE_ID}/"
    for mark, pending in zip(marks, queued_meanwhile, strict=True):
        assert pending, "nothing waited for the broker"
        enveloped = [
            m.body
            for m in run.collector.messages[mark:]
            if m.topic.startswith(prefix)
            and "/request/" not in m.topic
            and has_envelope(m.topic)  # not a state without envelope
        ]
        # QoS 1 may hand a message over twice (the broker did not see our PUBACK before it
        # went down); a subscriber drops the repeat by its id, as docs/mqtt.md says.
        arrived: list[int] = []
        seen: set[str] = set()
        for body in enveloped:
            if body["id"] not in seen:
                seen.add(body["id"])
                arrived.append(body["seq"])
        # Everything that waited came after the outage, in the order it was made.
        assert [seq for seq in arrived if seq in pending][: len(pending)] == pending
