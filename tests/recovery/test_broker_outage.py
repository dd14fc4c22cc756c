"""Stop mosquitto mid-session for a while, deal cards meanwhile, and start it again.

The daemon keeps reading the shoe while its broker is away: the cards are journaled and
applied, and what they cause waits in the journal's outbox (on disk: the test reads it
there while the broker is down). When the broker is back, all of it arrives at a subscriber
with a persistent session, in order: the table's seq goes 1, 2, 3... without a gap or a
reordering among distinct messages, and every settlement is the journal's.
"""

from __future__ import annotations

import asyncio
import random
from typing import TYPE_CHECKING

import pytest

from drivers.emulator import EmulatedShoe, EmulatorSettings
from rules.cards import Card
from rules.events import DealCard
from tests.recovery.harness import (
    BASE,
    TABLE_ID,
    Collector,
    DaemonProcess,
    Dealer,
    Disturbance,
    journal_events_done,
    journal_pending,
    replay_journal,
    start_daemon,
    table_config,
    until,
    verify,
    write_config,
)

if TYPE_CHECKING:
    from pathlib import Path

    from tests.daemon.conftest import Mosquitto

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
    config = table_config()
    state = tmp_path / "state"
    shoe_settings = EmulatorSettings(protocol="reference", seed=SEED, link=tmp_path / "shoe0")
    queued_meanwhile: list[list[int]] = []  # seq numbers on disk while the broker was down
    marks: list[int] = []
    async with (
        EmulatedShoe(shoe_settings) as shoe,
        Collector(broker.host, broker.port) as collector,
    ):
        daemon = DaemonProcess(
            write_config(
                tmp_path / "shoe2mqtt.toml", host=broker.host, port=broker.port,
                shoe_port=shoe.path, state_directory=state,
            ),
            tmp_path / "daemon.log",
        )  # fmt: skip
        dealer = Dealer(config, shoe, collector, rng)

        async def outage() -> None:
            done = journal_events_done(state)
            broker.stop()
            for _ in range(CARDS_DURING_OUTAGE):
                await shoe.next_card()
            # The daemon has read, journaled and applied every card; what they caused waits.
            await until(lambda: journal_events_done(state) >= done + CARDS_DURING_OUTAGE)
            queued_meanwhile.append(journal_pending(state))
            await asyncio.sleep(OUTAGE)  # the outage goes on; the daemon keeps retrying
            daemon.check()
            marks.append(collector.mark())
            broker.start()
            await collector.wait_online(marks[-1])

        steps = iter(range(1000))

        def disturb() -> Disturbance | None:
            # An outage at the 4th step of the first rounds: mid-deal, cards still to come.
            return outage if next(steps) % 12 == 3 and len(marks) < OUTAGES else None

        try:
            await start_daemon(daemon, shoe, collector)
            await dealer.resync()
            await dealer.step(DealCard(Card.parse("AS"), burned=True))
            while len(marks) < OUTAGES or dealer.rounds < OUTAGES + 1:
                await dealer.play_round(disturb)
            await dealer.resync()
            assert await daemon.stop() == 0, daemon.tail()
        finally:
            await daemon.stop()
    verdict = verify(collector.messages, replay_journal(state, config))
    assert verdict.ok, verdict.explain()
    assert verdict.expected > 0
    assert collector.connections > OUTAGES  # the collector was cut off too, and came back
    prefix = f"{BASE}/{TABLE_ID}/"
    for mark, pending in zip(marks, queued_meanwhile, strict=True):
        assert pending, "nothing waited for the broker"
        arrived = [
            m.body["seq"]
            for m in collector.messages[mark:]
            if m.topic.startswith(prefix)
            and "/request/" not in m.topic
            and not m.topic.endswith("/availability")  # a state without envelope
        ]
        # Everything that waited on disk came after the outage, in the order it was made.
        assert [seq for seq in arrived if seq in pending][: len(pending)] == pending
