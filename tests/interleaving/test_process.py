"""Ground truth through the real process: `shoe2mqtt run` (daemon.testing.DaemonProcess) with
a real mosquitto and two tables, each read from an emulated reference shoe on a pty whose
script is the truth's cards, and a console whose requests each wait up to 300 ms before they
go out (docs/testing.md, "Ground truth").

The dealers deal at four times a person's pace, so the shoe's cards overtake the console's
taps (the table keeps them until their place is declared) and taps go out having seen less
than the table placed: what the process makes of the two streams is held to the same
invariant as the harness's in-process tables.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from typing import TYPE_CHECKING

import pytest

from daemon.request_gate import AUTOMATED_CONSOLE
from daemon.simulator.tables import DEMO_TABLES
from daemon.testing import Collector, DaemonProcess, until, write_service_config
from daemon.testing.interleaving import check
from daemon.testing.interleaving.live import LiveTable, script
from daemon.testing.interleaving.truth import TruthTable
from daemon.wire.round_message import ROUND_CONTRACT, STATE_CONTRACT, unbundled_outbound
from drivers.emulator import EmulatedShoe, EmulatorSettings
from rules.config import TableConfig
from rules.games import Game

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from daemon.testing import Mosquitto
    from daemon.testing.interleaving.session import Outcome
    from daemon.wire.envelope import Outbound

SEED = 20261201
GAMES = (Game.BLACKJACK, Game.TRIPLE_ATTACK)
ROUNDS = 4  # a table
SEATS = 3  # at most, a round


@pytest.mark.timeout(60)
@pytest.mark.parametrize("contract", [STATE_CONTRACT, ROUND_CONTRACT])
async def test_the_daemon_process_keeps_the_promise_with_a_console_that_lags(
    tmp_path: Path, mosquitto: Mosquitto, contract: int
) -> None:
    rng = random.Random(SEED)  # noqa: S311 - a seeded table, not a secret
    configs = [TableConfig.from_mapping(DEMO_TABLES[game]) for game in GAMES]
    truths = [TruthTable(config, rng, seats=SEATS) for config in configs]
    rounds = [[truth.next_round() for _ in range(ROUNDS)] for truth in truths]
    async with contextlib.AsyncExitStack() as stack:
        shoes = [
            await stack.enter_async_context(EmulatedShoe(EmulatorSettings(
                protocol="reference", script=script(dealt), link=tmp_path / f"shoe{index}"
            )))
            for index, dealt in enumerate(rounds)
        ]  # fmt: skip
        config_file = write_service_config(
            tmp_path / "shoe2mqtt.toml", mosquitto, node="live", state_directory=tmp_path / "state",
            tables=[(DEMO_TABLES[g], s.path) for g, s in zip(GAMES, shoes, strict=True)],
            requests=AUTOMATED_CONSOLE, contract=contract,
        )  # fmt: skip
        collector = await stack.enter_async_context(
            Collector(mosquitto.host, mosquitto.port, identifier="live")
        )
        daemon = DaemonProcess(config_file, tmp_path / "daemon.log")
        try:
            mark = collector.mark()
            await daemon.start()
            # A loaded machine (the suite beside other work) starts the process slowly.
            await until(lambda: all(shoe.stats.host_opens for shoe in shoes), within=30)
            await collector.wait_online(mark)
            tables = [
                LiveTable(config, dealt, shoe, collector, random.Random(f"{SEED}:{n}"))  # noqa: S311 - a seeded dealer
                for n, (config, dealt, shoe) in enumerate(zip(configs, rounds, shoes, strict=True))
            ]  # fmt: skip
            outcomes: list[Outcome] = list(await asyncio.gather(*(t.play() for t in tables)))
        finally:
            assert await daemon.stop() == 0, daemon.tail()
    for outcome in outcomes:
        verdict = check(outcome)
        assert verdict.ok, verdict.explain()
        assert verdict.rounds == ROUNDS
        assert verdict.settlements == verdict.truth_settlements > 0
    # The two streams did cross: some card reached a table before the tap that places it,
    # which placed it: its `card_dealt` came out of the tap's own event, before its response
    # (one event's messages are numbered in a row and share its journaled `ts`).
    assert any(_placed_by_a_tap(o.published) for o in outcomes)


def _placed_by_a_tap(published: Sequence[Outbound]) -> bool:
    numbered = sorted((m for m in published if m.seq), key=lambda m: m.seq)
    # Under contract 4, what each round message carried, as contract 3 numbered it.
    parts = [part for m in numbered for part in unbundled_outbound(m) if part.seq]
    bodies = [json.loads(m.payload) for m in parts]
    for index, body in enumerate(bodies):
        if body["type"] != "response" or body["command"] not in ("action", "close_betting"):
            continue
        before = index
        while before > 0 and bodies[before - 1]["ts"] == body["ts"]:
            before -= 1
            if bodies[before]["type"] == "response":
                break
            if bodies[before]["type"] == "card_dealt":
                return True
    return False
