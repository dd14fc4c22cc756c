"""The shoe link across an absence of the host, over real ptys: the recovery tests.

One blackjack round, written down in advance (`INTENDED`): two seats with the 20 point
bonus, the initial deal, two stands and the dealer's draw. The daemon runs as a process
(`python -m daemon.cli run`), the shoe is the emulator on a pty behind a link, and in the
middle of the initial deal the host goes away for three seconds while the dealer goes on
dealing: the daemon is SIGKILLed and started again, or the cable is pulled and put back in
while the daemon sits in its reconnect back-off.

- The reference protocol's shoe keeps every frame until the daemon acknowledges it (after
  committing it): every card reaches its seat in order, the settlements are those of the
  intended round applied to a fresh rules engine, and nothing needs review.
- An ENQ-family shoe keeps nothing: the cards dealt meanwhile are gone. The round is flagged
  and noticed, and every later card is held, never given to a seat: the dealer console
  enters what was missed and resumes (the round then settles as intended, flagged), or
  voids the round.
- A reference shoe whose buffer overflowed: the daemon sees the gap, places every card it
  can be sure of, and holds the rest.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from typing import TYPE_CHECKING, Any, Final

import pytest

from daemon.testing import TABLE_ID, content, recovery_run, table_config, verify
from drivers.emulator import EmulatedShoe, EmulatorSettings
from rules.cards import Card
from rules.engine import TableEngine
from rules.events import CloseBetting, DealCard, PlaceWager, PlayerAction, Shuffle
from rules.games import Action, WagerKind
from rules.outputs import Settlement

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable
    from pathlib import Path

    from daemon.testing import Mosquitto, Received, RecoveryRun
    from drivers.emulator import ProtocolName
    from rules.events import TableEvent

DOWN: Final = 3.0  # seconds the host is away
PACE: Final = 0.5  # seconds between the cards the dealer deals meanwhile
WAGERS: Final = [
    PlaceWager(seat, kind, amount)
    for seat in (1, 2)
    for kind, amount in ((WagerKind.BLACKJACK, 2500), (WagerKind.TWENTY_POINT_BONUS, 500))
]
# The initial deal: seat 1, seat 2, the dealer's upcard, seat 1, seat 2, the hole card.
DEAL: Final = ["KD", "10S", "7S", "KH", "10S", "9C"]
DRAW: Final = "5D"  # the dealer, on 16
BURN: Final = "2C"
INTENDED: Final[list[TableEvent]] = [
    Shuffle(),
    DealCard(Card.parse(BURN), burned=True),
    *WAGERS,
    CloseBetting(),
    *(DealCard(Card.parse(code)) for code in DEAL),
    PlayerAction(Action.STAND, 1, 1),
    PlayerAction(Action.STAND, 2, 1),
    DealCard(Card.parse(DRAW)),
]
SEATS_AT_THE_END: Final = {1: ["KD", "KH"], 2: ["10S", "10S"], None: ["7S", "9C", "5D"]}


def intended_settlements() -> list[dict[str, Any]]:
    """The round as the rules core settles it, straight from the intended events: the
    oracle no shoe, link or journal touches."""
    engine = TableEngine(table_config())
    out = [o for event in INTENDED for o in engine.apply(event) if isinstance(o, Settlement)]
    return [settlement.to_mapping() for settlement in out]


def settled(body: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in content(body).items() if k != "review"}


def seats(snapshot: dict[str, Any]) -> dict[int | None, list[str | None]]:
    round_ = snapshot["round"]
    cards: dict[int | None, list[str | None]] = {
        seat["seat"]: [c for hand in seat["hands"] for c in hand["cards"]]
        for seat in round_["seats"]
    }
    cards[None] = round_["dealer"]["cards"]
    return cards


def snapshot_where(
    run: RecoveryRun, test: Callable[[dict[str, Any]], bool]
) -> Callable[[Received], bool]:
    topic = run.collector.topics.round_snapshot(TABLE_ID)
    return lambda m: m.topic == topic and m.body["round"] is not None and test(m.body)


def _link_faults(run: RecoveryRun, after: int) -> int:
    topic = run.collector.topics.table_state(TABLE_ID)
    return sum(
        1
        for m in run.collector.messages[after:]
        if m.topic == topic and m.body["reader"]["link"] == "fault"
    )


class Table:
    """The dealer's side of the intended round, over MQTT and the emulated shoe."""

    def __init__(self, run: RecoveryRun, shoe: EmulatedShoe, protocol: ProtocolName) -> None:
        self.run = run
        self.shoe = shoe
        self.protocol = protocol

    async def open_round(self) -> None:
        """The daemon up, a new shoe, its burn card, the wagers."""
        run = self.run
        await run.start_daemon()
        await run.dealer.resync()
        if self.protocol == "enq":  # the family has no new-shoe frame: the dealer says so
            await run.dealer.step_request("shuffle", {})
        await run.dealer.step(DealCard(Card.parse(BURN), burned=True))  # the shoe's own cards
        for wager in WAGERS:
            await run.dealer.step(wager)
        await run.dealer.step(CloseBetting())  # "No more bets": then the dealer deals

    async def deal(self, count: int) -> None:
        """`count` cards from the shoe, each answered by the daemon."""
        for _ in range(count):
            await self.run.dealer.step(DealCard(Card.parse("AS")))  # the shoe's own cards

    async def deal_unheard(self, count: int) -> None:
        """`count` cards dealt at the table's pace while the daemon cannot hear them."""
        for _ in range(count):
            await asyncio.sleep(PACE)
            await self.shoe.next_card()

    async def kill_and_deal(self, count: int) -> None:
        """SIGKILL the daemon, deal `count` cards, start it again after DOWN seconds."""
        await asyncio.wait_for(self.shoe.wait_taken(), 5)  # what came before is acknowledged
        await self.run.daemon.kill()
        started = asyncio.get_running_loop().time()
        await self.deal_unheard(count)
        await asyncio.sleep(max(0.0, DOWN - (asyncio.get_running_loop().time() - started)))
        await self.run.start_daemon()

    async def unplug_and_deal(self, unplugged: int, in_backoff: int) -> None:
        """Pull the cable for about DOWN seconds dealing `unplugged` cards, put it back in
        while the daemon sits in its reconnect back-off (three failed attempts behind it,
        the next seconds away), and deal `in_backoff` cards before it opens the port."""
        run, shoe = self.run, self.shoe
        mark = run.collector.mark()
        opens = shoe.stats.host_opens
        await shoe.unplug()
        await self.deal_unheard(unplugged)
        async with asyncio.timeout(15):
            while _link_faults(run, mark) < 3:  # noqa: ASYNC110 - the daemon's own retries
                await asyncio.sleep(0.05)
        await shoe.replug()
        await self.deal_unheard(in_backoff)
        assert shoe.stats.host_opens == opens, "the daemon opened the port before its back-off"
        async with asyncio.timeout(15):
            await shoe.wait_for_host()

    async def finish_round(self) -> None:
        for action in INTENDED[-3:-1]:
            await self.run.dealer.step(action)
        await self.deal(1)  # the dealer's draw


def shoe_settings(tmp_path: Path, protocol: ProtocolName, **settings: Any) -> EmulatorSettings:
    script = ("SHUFFLE " if protocol == "reference" else "") + " ".join(["BURN", BURN, *DEAL, DRAW])
    return EmulatorSettings(
        protocol=protocol, script=script, link=tmp_path / "shoe0", seed=12, **settings
    )


@contextlib.asynccontextmanager
async def round_under_way(
    tmp_path: Path, mosquitto: Mosquitto, protocol: ProtocolName, **settings: Any
) -> AsyncIterator[Table]:
    """The daemon, a shoe speaking `protocol`, the round opened and two cards dealt: the
    moment the host goes away in every test here. The daemon is stopped on the way out."""
    rng = random.Random(12)  # noqa: S311 - the dealer draws nothing from it here
    async with (
        EmulatedShoe(shoe_settings(tmp_path, protocol, **settings)) as shoe,
        recovery_run(tmp_path, mosquitto, rng, shoe=shoe, protocol=protocol) as run,
    ):
        table = Table(run, shoe, protocol)
        await table.open_round()
        await table.deal(2)  # KD to seat 1, 10S to seat 2
        yield table


def assert_as_intended(run: RecoveryRun, *, review: list[str]) -> dict[str, Any]:
    """Every card at its seat, the settlements the intended round's, and the verdict of the
    journal's replay; returns the last snapshot."""
    collector = run.collector
    last = run.dealer.latest_snapshot()
    assert seats(last) == SEATS_AT_THE_END
    assert last["round"]["stage"] == "over"
    assert last["review"] == review
    delivered = [m.body for m in collector.on(TABLE_ID, "settlement")]
    assert [settled(body) for body in delivered] == intended_settlements()
    assert {body["review"] for body in delivered} == {bool(review)}
    verdict = verify(collector.messages, run.replay())
    assert verdict.ok, verdict.explain()
    return last


async def _kill_for_3s(table: Table) -> None:
    await table.kill_and_deal(4)  # four cards while it is dead or restarting: kept


async def _cable_out_for_3s(table: Table) -> None:
    await table.unplug_and_deal(unplugged=2, in_backoff=2)  # four cards: kept


@pytest.mark.parametrize(
    "host_away", [_kill_for_3s, _cable_out_for_3s], ids=["daemon-killed", "cable-out-backoff"]
)
@pytest.mark.timeout(60)
async def test_reference_host_away_3s_mid_deal_loses_and_moves_no_card(
    tmp_path: Path, mosquitto: Mosquitto, host_away: Callable[[Table], Awaitable[None]]
) -> None:
    """The daemon SIGKILLed and started 3 s later; the cable out about 3 s and put back in
    while the daemon sits in its back-off. The shoe kept everything: nothing to review."""
    async with round_under_way(tmp_path, mosquitto, "reference") as table:
        run = table.run
        await host_away(table)
        await run.collector.wait(snapshot_where(run, lambda body: len(seats(body)[None]) == 2))
        await run.dealer.resync()
        await table.finish_round()  # the stands, and the dealer's draw once it is back
    assert_as_intended(run, review=[])
    for kind in ("sequence_gap", "reader_restarted", "daemon_restarted", "reader_reconnected"):
        assert run.collector.on(TABLE_ID, f"notice/{kind}") == [], kind


@pytest.mark.timeout(60)
async def test_enq_daemon_killed_mid_deal_holds_the_round_and_shifts_no_card(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    async with round_under_way(tmp_path, mosquitto, "enq") as table:
        run = table.run
        await table.kill_and_deal(2)  # 7S and KH: gone, the shoe keeps nothing
        mark = run.collector.mark()
        await table.deal_unheard(2)  # 10S and 9C, heard: held, for the dealer
        held = await run.collector.wait(
            snapshot_where(run, lambda body: body["cards_held"] == 2), after=mark
        )
        assert held.body["doubt"] == "daemon_restarted"
        assert seats(held.body) == {1: ["KD"], 2: ["10S"], None: []}  # nobody got 10S or 9C
        [notice] = run.collector.on(TABLE_ID, "notice/daemon_restarted")
        assert "request/resume" in notice.body["message"]
        # The dealer enters the two cards the daemon missed, in the order they were dealt,
        # and confirms: the held cards follow them.
        for missed in ("7S", "KH"):
            response = await run.dealer.step_request("card", {"card": missed})
            assert response["status"] == "ok", response
        response = await run.dealer.step_request("resume", {})
        assert response["data"] == {"released": 2}
        await table.finish_round()
    assert_as_intended(run, review=["daemon_restarted"])


@pytest.mark.timeout(60)
async def test_enq_cable_out_and_back_in_the_backoff_holds_the_round_until_voided(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    async with round_under_way(tmp_path, mosquitto, "enq") as table:
        run = table.run
        await table.unplug_and_deal(unplugged=1, in_backoff=1)  # 7S and KH: gone
        mark = run.collector.mark()
        await table.deal_unheard(2)
        held = await run.collector.wait(
            snapshot_where(run, lambda body: body["cards_held"] == 2), after=mark
        )
        assert held.body["doubt"] == "reader_reconnected"
        assert seats(held.body) == {1: ["KD"], 2: ["10S"], None: []}
        response = await run.dealer.step_request("void", {"reason": "the reader lost cards"})
        assert response["status"] == "ok", response
    collector = run.collector
    last = run.dealer.latest_snapshot()
    assert (last["round"]["stage"], last["doubt"], last["cards_held"]) == ("over", None, 0)
    assert seats(last) == {1: ["KD"], 2: ["10S"], None: []}
    assert last["review"] == ["reader_reconnected"]
    voided = [m.body for m in collector.on(TABLE_ID, "settlement")]
    assert sorted((b["seat"], b["result"], b["review"]) for b in voided) == [
        (1, "void", True),
        (2, "void", True),
    ]
    [dropped] = collector.on(TABLE_ID, "notice/held_cards_dropped")
    assert dropped.body["message"].startswith("2 held cards dropped")
    verdict = verify(collector.messages, run.replay())
    assert verdict.ok, verdict.explain()


@pytest.mark.timeout(60)
async def test_an_overflowing_shoe_buffer_is_a_gap_notice_and_misplaces_nothing(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    # A buffer of three frames, and a heartbeat that tells the daemon at once what is gone.
    settings = {"kept_frames": 3, "heartbeat_interval": 0.5}
    async with round_under_way(tmp_path, mosquitto, "reference", **settings) as table:
        run, shoe = table.run, table.shoe
        await table.kill_and_deal(4)  # 7S, KH and 10S kept; 9C, the hole card, discarded
        assert shoe.stats.discarded == 1
        await run.collector.wait(lambda m: m.topic.endswith("/notice/sequence_gap"))
        await run.dealer.resync()
        view = run.dealer.view
        assert view["doubt"] == "sequence_gap"
        # Every card it is sure of is in its place; the hole card is not invented.
        assert seats(view) == {1: ["KD", "KH"], 2: ["10S", "10S"], None: ["7S"]}
        await run.dealer.step_request("card", {"card": "9C"})  # the dealer enters it
        response = await run.dealer.step_request("resume", {})
        assert response["data"] == {"released": 0}
        await table.finish_round()
    assert_as_intended(run, review=["sequence_gap"])
