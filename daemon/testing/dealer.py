"""The dealer and the players of one table, over MQTT and an emulated shoe, that survive chaos.

Each round is worked out by `rules.player.SimulatedRound` (basic strategy) from the latest round
snapshot; wagers and actions go out as requests (`daemon.wire.console`), cards come out of the
`EmulatedShoe`. After anything that may have lost a step (a kill, a broker restart, an
unplug) the dealer asks the daemon for its `status` and goes on from what the daemon says,
as a real dealer console would.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias

import aiomqtt

from daemon.testing.recorder import STEP_TIMEOUT, Stalled, response_to
from daemon.wire.console import console_request
from rules.cards import Card
from rules.events import DealCard, VoidRound
from rules.games import GAMES
from rules.player import SimulatedRound

if TYPE_CHECKING:
    import random
    from collections.abc import Awaitable, Callable

    from daemon.testing.recorder import Collector, Received
    from drivers.emulator import EmulatedShoe
    from rules.config import TableConfig
    from rules.events import TableEvent

STATUS_TRIES: Final = 5  # status requests before a resync gives up
MAX_STEPS: Final = 120  # steps one round may take before the dealer voids it
SHUFFLE: Final = "shuffle"  # a step that is not a rules event: the dealer reshuffles the shoe
BURN: Final = DealCard(Card.parse("AS"), burned=True)  # the shoe decides which card it is

# Called in the middle of a step: does something bad to the pit, and repairs it.
Disturbance: TypeAlias = "Callable[[], Awaitable[None]]"


def wager_plan(config: TableConfig, rng: random.Random) -> dict[int, dict[Any, int]]:
    """Two to five seats, each with the main wager and (mostly) the bonus wagers."""
    rules = GAMES[config.game]
    seats = sorted(rng.sample(range(1, config.seats + 1), rng.randint(2, 5)))
    plan: dict[int, dict[Any, int]] = {}
    for seat in seats:
        main = config.limits[rules.main_wager].minimum * rng.randint(1, 5)
        wagers = {rules.main_wager: main}
        for rule in rules.wagers:  # the bonus wagers: these are what the daemon settles
            if rule.requires is None or rng.random() < 0.1:
                continue
            limit = config.limits[rule.kind]
            wagers[rule.kind] = limit.minimum * rng.randint(1, 3)
        plan[seat] = wagers
    return plan


@dataclass
class Dealer:
    """The dealer and players of the table, over MQTT and the emulated shoe.

    Without a shoe (`None`), the caller deals frames itself and the dealer only sends
    requests.
    """

    config: TableConfig
    shoe: EmulatedShoe | None
    collector: Collector
    rng: random.Random
    view: dict[str, Any] = field(default_factory=lambda: {"round": None})
    rounds: int = 0
    steps: int = 0
    resyncs: int = 0
    cut_cards_handled: int = 0
    _transactions: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    @property
    def table(self) -> str:
        return self.config.table_id

    @property
    def round_id(self) -> int | None:
        round_ = self.view.get("round")
        return None if round_ is None else int(round_["id"])

    async def play_round(self, disturb: Callable[[], Disturbance | None]) -> None:
        """One round from its first wager to its end; `disturb()` is asked before each step
        for something to do in the middle of it."""
        simulated = SimulatedRound(
            self.config, itertools.repeat(Card.parse("AS")), wager_plan(self.config, self.rng),
            self.rng,
        )  # fmt: skip
        steps = 0
        while (event := simulated.next_event(self.view)) is not None:
            steps += 1
            if steps > MAX_STEPS:  # a round that cannot end (cards refused): the dealer voids it
                event = VoidRound("the round could not be finished")
            await self.step(event, disturb())
            if isinstance(event, VoidRound):
                break
        self.rounds += 1
        shoe = self._shoe()
        if shoe.stats.cut_cards > self.cut_cards_handled:
            # The cut card came out during the round: a new shoe, and its burn card.
            self.cut_cards_handled = shoe.stats.cut_cards
            await self.step(SHUFFLE, disturb())
            await self.step(BURN, disturb())

    async def step(
        self, event: TableEvent | Literal["shuffle"], disturbance: Disturbance | None = None
    ) -> None:
        """Do one thing at the table and wait for the daemon's answer; with a disturbance,
        do it half-way and then ask the daemon where things stand."""
        self.steps += 1
        mark = self.collector.mark()
        answered: Callable[[Received], bool] | None = None  # None: a card, taken or held
        if isinstance(event, str):  # SHUFFLE
            await self._shoe().shuffle()
            answered = self._snapshot_or_notice
        elif isinstance(event, DealCard):
            await self._shoe().next_card()
        else:
            command, body = console_request(event)
            answered = response_to(await self._request(command, body))
        if disturbance is not None:
            await disturbance()
            await self.resync()
            return
        if answered is None:
            await self.collector.card_taken(self.table, after=mark)
        else:
            answer = await self.collector.wait(answered, after=mark)
            await self.collector.answer_shown(self.table, answer.body, after=mark)
        self.view = self.latest_snapshot()

    async def step_request(self, command: str, body: dict[str, Any]) -> dict[str, Any]:
        """A request that is no rules event (`card`, `resume`, ...), answered; returns the
        response's body, after which the view is the latest snapshot."""
        self.steps += 1
        mark = self.collector.mark()
        transaction = await self._request(command, body)
        response = await self.collector.wait(response_to(transaction), after=mark)
        await self.collector.answer_shown(self.table, response.body, after=mark)
        self.view = self.latest_snapshot()
        return response.body

    async def resync(self) -> None:
        """Ask the daemon for its status until it answers; take its round as the view."""
        self.resyncs += 1
        for _ in range(STATUS_TRIES):
            mark = self.collector.mark()
            try:
                transaction = await self._request("status", {})
                response = await self.collector.wait(
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
        latest = self.collector.latest_state(self.table)
        assert latest is not None, "the daemon publishes its tables' round states as it starts"
        return latest

    def _shoe(self) -> EmulatedShoe:
        if self.shoe is None:
            raise TypeError("this dealer has no shoe: its caller deals the cards")
        return self.shoe

    async def _request(self, command: str, body: dict[str, Any]) -> str:
        transaction = f"d-{next(self._transactions)}"
        topic = self.collector.topics.request(self.table, command)
        seen = self.collector.seen(self.table)  # what the console had seen (docs/mqtt.md)
        request = {"transaction": transaction, "seen": seen, **body}
        await self.collector.publish(topic, json.dumps(request))
        return transaction

    def _snapshot_or_notice(self, message: Received) -> bool:
        topics = self.collector.topics
        return message.topic == topics.round_snapshot(self.table) or message.topic.startswith(
            topics.notice(self.table, "")
        )
