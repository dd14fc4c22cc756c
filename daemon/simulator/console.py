"""The console simulator: a table's dealer and players, talking to the daemon as a console.

One implementation for the demo, the tests and the benchmarks. Each round is worked out by
`rules.player.SimulatedRound` (basic strategy) from the latest round state; wagers, "No more
bets" and the players' decisions go out as requests by the dealer console's contract
(`daemon.wire.console`: each with its `transaction` and the `seen` it had read, docs/mqtt.md);
cards come out of an `EmulatedShoe`, and the shoe decides which. Every step waits until the
daemon shows it (`daemon.simulator.sight`), so a table is driven as fast as the daemon answers
and no faster. After anything that may have lost a step (a kill, a broker restart, an unplug:
a `Disturbance`) it asks the daemon for its `status` and goes on from what the daemon says, as
a real dealer console would.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias

import aiomqtt
import structlog

from daemon.simulator.sight import (
    STEP_TIMEOUT,
    Stalled,
    answer_shown,
    card_taken,
    held,
    response_to,
)
from daemon.wire.console import Layout, console_request, layout_request
from rules.cards import Card
from rules.events import DealCard, PlaceWager, VoidRound
from rules.games import GAMES
from rules.player import SimulatedRound

if TYPE_CHECKING:
    import random
    from collections.abc import Awaitable, Callable

    from daemon.simulator.sight import Received, Sight
    from drivers.emulator import EmulatedShoe
    from rules.config import TableConfig
    from rules.events import TableEvent
    from rules.games import WagerKind
    from rules.money import Cents
    from rules.player import WagerPlan

log = structlog.get_logger("simulator")

STATUS_TRIES: Final = 5  # status requests before a resync gives up
MAX_STEPS: Final = 120  # steps one round may take before the dealer voids it
SHUFFLE: Final = "shuffle"  # a step that is not a rules event: the dealer reshuffles the shoe
BURN: Final = DealCard(Card.parse("AS"), burned=True)  # the shoe decides which card it is
BONUS_ODDS: Final = 0.7  # how often a seat makes each bonus wager its main wager allows

# Called in the middle of a step: does something bad to the pit, and repairs it.
Disturbance: TypeAlias = "Callable[[], Awaitable[None]]"


def wager_plan(
    config: TableConfig, rng: random.Random, bonus_odds: float = BONUS_ODDS
) -> WagerPlan:
    """Two to five seats (all the table has, if fewer), each with the main wager and, each
    with chance `bonus_odds`, the bonus wagers the table offers, every one a wager the table
    must accept: within its posted limits, no more than the wager it requires where the game
    says so (26.6(b)), equal to it where the game says so (Triple Attack's second and third
    attack wagers, docs/procedures.md)."""
    rules = GAMES[config.game]
    most = min(5, config.seats)
    seats = sorted(rng.sample(range(1, config.seats + 1), rng.randint(min(2, most), most)))
    plan: dict[int, dict[WagerKind, Cents]] = {}
    for seat in seats:
        main_limit = config.limits[rules.main_wager]
        wagers = {rules.main_wager: min(main_limit.minimum * rng.randint(1, 5), main_limit.maximum)}
        for rule in rules.wagers:
            if rule.requires is None or rng.random() >= bonus_odds:
                continue
            limit, required = config.limits.get(rule.kind), wagers.get(rule.requires)
            if limit is None or required is None:  # a wager the table does not offer
                continue
            amount = required if rule.equal_to_requirement else limit.minimum * rng.randint(1, 3)
            if rule.at_most_requirement:
                amount = min(amount, required)
            if not rule.equal_to_requirement:
                amount = min(amount, limit.maximum)
            if limit.minimum <= amount <= limit.maximum:  # else the seat cannot make it
                wagers[rule.kind] = amount
        plan[seat] = wagers
    return plan


@dataclass
class ConsoleSimulator:
    """The dealer and players of one table, over MQTT (`sight`) and the emulated shoe.

    Without a shoe (`None`), the caller deals frames itself and the simulator only sends
    requests. `step_delay` is a pause after each step, so a person can follow the view.
    """

    config: TableConfig
    shoe: EmulatedShoe | None
    sight: Sight
    rng: random.Random
    step_delay: float = 0.0
    bonus_odds: float = BONUS_ODDS
    # Each window's wagers sent with its "No more bets" in one request (the layout,
    # docs/mqtt.md), rather than each wager as its own request first.
    layout: bool = False
    view: dict[str, Any] = field(default_factory=lambda: {"round": None})
    rounds: int = 0
    steps: int = 0
    resyncs: int = 0
    refused: int = 0  # requests the daemon refused
    cut_cards_handled: int = 0
    _transactions: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    @property
    def table(self) -> str:
        return self.config.table_id

    @property
    def round_id(self) -> int | None:
        round_ = self.view.get("round")
        return None if round_ is None else int(round_["id"])

    async def run(self, rounds: int | None) -> None:
        """The new shoe's burn card, then `rounds` rounds (None: until cancelled)."""
        await self.step(BURN)  # the shoe shuffles first, then burns
        while rounds is None or self.rounds < rounds:
            await self.play_round()

    async def play_round(self, disturb: Callable[[], Disturbance | None] = lambda: None) -> None:
        """One round from its first wager to its end; `disturb()` is asked before each step
        for something to do in the middle of it. After the round that brought out the cut
        card, a new shoe and its burn card."""
        plan = wager_plan(self.config, self.rng, self.bonus_odds)
        simulated = SimulatedRound(self.config, itertools.repeat(Card.parse("AS")), plan, self.rng)
        steps = 0
        while (event := simulated.next_event(self.view)) is not None:
            steps += 1
            if steps > MAX_STEPS:  # a round that cannot end (cards refused): the dealer voids it
                event = VoidRound("the round could not be finished")
            if self.layout and isinstance(event, PlaceWager):
                # The window's other wagers are due next, then its close: all in one request.
                await self.step(Layout((event, *simulated.take_window())), disturb())
                continue
            await self.step(event, disturb())
            if isinstance(event, VoidRound):
                break
        self.rounds += 1
        shoe = self._shoe()
        if shoe.stats.cut_cards > self.cut_cards_handled:
            self.cut_cards_handled = shoe.stats.cut_cards
            await self.step(SHUFFLE, disturb())
            await self.step(BURN, disturb())

    async def step(
        self,
        event: TableEvent | Layout | Literal["shuffle"],
        disturbance: Disturbance | None = None,
    ) -> None:
        """Do one thing at the table and wait for the daemon's answer; with a disturbance,
        do it half-way and then ask the daemon where things stand."""
        self.steps += 1
        mark = self.sight.mark()
        before = held(self.sight.latest_state(self.table) or {})
        answered: Callable[[Received], bool] | None = None  # None: a card, taken or held
        if isinstance(event, str):  # SHUFFLE
            await self._shoe().shuffle()
            answered = self._snapshot_or_notice
        elif isinstance(event, DealCard):
            await self._shoe().next_card()
        else:
            command, body = (
                layout_request(event.wagers)
                if isinstance(event, Layout)
                else console_request(event)
            )
            answered = response_to(await self.request(command, body))
        if disturbance is not None:
            await disturbance()
            await self.resync()
            return
        if answered is None:
            await card_taken(self.sight, self.table, after=mark, held_before=before)
        else:
            answer = await self.sight.wait(answered, after=mark)
            self._note_refusal(answer)
            await answer_shown(self.sight, self.table, answer.body, after=mark)
        self.view = self.latest_snapshot()
        if self.step_delay:
            await asyncio.sleep(self.step_delay)

    async def step_request(self, command: str, body: dict[str, Any]) -> dict[str, Any]:
        """A request that is no rules event (`card`, `resume`, ...), answered; returns the
        response's body, after which the view is the latest round state."""
        self.steps += 1
        mark = self.sight.mark()
        transaction = await self.request(command, body)
        response = await self.sight.wait(response_to(transaction), after=mark)
        await answer_shown(self.sight, self.table, response.body, after=mark)
        self.view = self.latest_snapshot()
        return response.body

    async def resync(self) -> None:
        """Ask the daemon for its status until it answers; take its round as the view."""
        self.resyncs += 1
        for _ in range(STATUS_TRIES):
            mark = self.sight.mark()
            try:
                transaction = await self.request("status", {})
                response = await self.sight.wait(
                    response_to(transaction), after=mark, within=STEP_TIMEOUT / 2
                )
            except (aiomqtt.MqttError, TimeoutError):  # Stalled is a TimeoutError
                continue
            round_ = response.body["data"]["round"]
            assert isinstance(round_, dict)
            self.view = round_
            return
        raise Stalled("the daemon did not answer `status`")

    def latest_snapshot(self) -> dict[str, Any]:
        latest = self.sight.latest_state(self.table)
        assert latest is not None, "the daemon publishes its tables' round states as it starts"
        return latest

    async def request(self, command: str, body: dict[str, Any]) -> str:
        """Send one request, with what the console had seen (docs/mqtt.md); its transaction."""
        transaction = f"{self.table}-{next(self._transactions)}"
        topic = self.sight.topics.request(self.table, command)
        request = {"transaction": transaction, "seen": self.sight.seen(self.table), **body}
        await self.sight.publish(topic, json.dumps(request))
        return transaction

    def _shoe(self) -> EmulatedShoe:
        if self.shoe is None:
            raise TypeError("this simulator has no shoe: its caller deals the cards")
        return self.shoe

    def _note_refusal(self, answer: Received) -> None:
        body = answer.body
        if body.get("type") == "response" and body.get("status") != "ok":
            self.refused += 1
            log.warning(
                "simulator.request_refused",
                table=self.table,
                command=body.get("command"),
                error=body.get("error"),
            )

    def _snapshot_or_notice(self, message: Received) -> bool:
        topics = self.sight.topics
        return message.topic == topics.round_snapshot(self.table) or message.topic.startswith(
            topics.notice(self.table, "")
        )
