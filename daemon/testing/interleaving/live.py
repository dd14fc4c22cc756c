"""The same truth and the same invariant, through the real process: `shoe2mqtt run` beside a
real mosquitto and an emulated reference shoe on a pty, dealt by a dealer at a quicker pace
than a person's, with a console whose every request waits a random delay before it goes out.

The shoe plays the truth's cards as a script (`script`): the dealer deals each card when its
step comes, while the console may still be holding the decision before it (never "No more
bets": the dealer deals only once it is answered); so cards overtake decisions, and a tap
goes out having seen less than the table has placed. The console is the one docs/mqtt.md
asks for (one request at a time, asked again after `RESEND_AFTER`, an action only once
`status` shows it was not applied, a refused tap tapped again once the table shows it caught
up); a floorperson, on a device of their own, confirms a doubt (`resume`): nothing is lost
on this line. What the collector received is the
outcome the invariant reads.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from daemon.testing.interleaving.console import LAGGING, RESEND_AFTER, Request, applied, fits
from daemon.testing.interleaving.people import pace
from daemon.testing.interleaving.session import Outcome
from daemon.testing.recorder import Stalled, response_to
from daemon.wire.envelope import Outbound

if TYPE_CHECKING:
    import random
    from collections.abc import Callable

    from daemon.testing.interleaving.truth import Step, TruthRound
    from daemon.testing.recorder import Collector, Received
    from drivers.emulator import EmulatedShoe
    from rules.config import TableConfig

SENDS: Final = 5  # sends of one request before the console gives up on it
CATCH_UP: Final = 10.0  # seconds a refused tap waits for the table to catch up
ROUND_END: Final = 20.0  # seconds the dealer waits for the table to end a dealt round


def script(rounds: list[TruthRound]) -> str:
    """The truth's shoe as an emulator's script (drivers/emulator/shoe_model.py)."""
    words: list[str] = []
    for step in (step for round_ in rounds for step in round_.steps):
        if step.kind == "shuffle":
            words.append("SHUFFLE")
        elif step.kind == "card":
            words += ["BURN", str(step.card.card)] if step.card.burned else [str(step.card.card)]
    return " ".join(words)


@dataclass
class LiveTable:
    """A dealer, a console and a floorperson at a table whose daemon is a real process."""

    config: TableConfig
    rounds: list[TruthRound]
    shoe: EmulatedShoe
    collector: Collector
    rng: random.Random
    speed: float = 4.0  # times a person's pace
    jitter: float = 0.3  # seconds a request may wait before it goes out
    supervised: set[int] = field(default_factory=set)
    _taps: asyncio.Queue[Step] = field(default_factory=asyncio.Queue)
    _current: int = 0
    _closing: int = 0  # "No more bets" taps waiting for their answer
    _hits: dict[tuple[int | None, int, int], int] = field(default_factory=dict)
    _transactions: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    @property
    def table(self) -> str:
        return self.config.table_id

    async def play(self) -> Outcome:
        """Every round dealt and ended; what the collector received, for the invariant."""
        async with asyncio.TaskGroup() as group:
            console = group.create_task(self._console(), name="live-console")
            floorperson = group.create_task(self._floorperson(), name="live-floorperson")
            await self._deal()
            await self._taps.join()
            console.cancel()
            floorperson.cancel()
        return self._outcome()

    # ---------------------------------------------------------------- the dealer
    async def _deal(self) -> None:
        for round_ in self.rounds:
            self._current = round_.round_id
            previous: Step | None = None
            for step in round_.steps:
                await asyncio.sleep(pace(previous, step, self.rng) / self.speed)
                while self._troubled():  # noqa: ASYNC110 - the console shows it; nothing signals
                    await asyncio.sleep(0.1)
                if step.kind == "tap":
                    self._closing += step.command == "close_betting"
                    self._taps.put_nowait(step)
                elif step.kind == "card":
                    while self._closing:  # noqa: ASYNC110 - rule 6: no card before its answer
                        await asyncio.sleep(0.02)
                    await self.shoe.next_card()
                previous = step  # a new shoe is in the script: the burn card brings it
            await self._taps.join()
            await self.collector.wait(self._ended(round_.round_id), within=ROUND_END)

    def _ended(self, round_id: int) -> Callable[[Received], bool]:
        ended = f"{self.collector.topics.base}/{self.table}/event/round_ended"
        return lambda message: message.topic == ended and message.body["round"] == round_id

    def _view(self) -> dict[str, Any] | None:
        return self.collector.latest_state(self.table)

    def _troubled(self) -> bool:
        view = self._view()
        return view is not None and (view["doubt"] is not None or view["awaiting_card_entry"])

    # ---------------------------------------------------------------- the console
    async def _console(self) -> None:
        while True:
            step = await self._taps.get()
            try:
                await self._until_done(step.command, step.body)
            finally:
                self._closing -= step.command == "close_betting"
                self._taps.task_done()

    async def _until_done(self, command: str, body: dict[str, Any]) -> None:
        """Send the tap until it is answered; tap it again once the table has caught up
        when the answer says it had not."""
        for _ in range(SENDS):
            answer = await self._request(command, body, delay=True)
            if answer is None or answer["status"] == "ok":
                return
            if not any(text in answer["error"]["message"] for text in LAGGING):
                return  # refused for good: the dealer goes on
            await self._caught_up(command, body)

    async def _request(
        self, command: str, body: dict[str, Any], *, delay: bool
    ) -> dict[str, Any] | None:
        """One request, sent again after `RESEND_AFTER` without an answer (an action only
        once `status` shows it was not applied: docs/mqtt.md); the answer."""
        request = Request(f"live-{next(self._transactions)}", command, body, self._current)
        view = self._view()
        request.before = None if view is None or view["round"] is None else view["round"]["id"]
        for _ in range(SENDS):
            if delay:
                await asyncio.sleep(self.rng.uniform(0.0, self.jitter))
            answer = await self._send(request)
            if answer is not None:
                if command == "action" and body["action"] == "hit" and answer["status"] == "ok":
                    key = (self._current, body["seat"], body.get("hand") or 1)
                    self._hits[key] = self._hits.get(key, 0) + 1
                return answer
            if command == "action":
                status = await self._send(
                    Request(f"live-{next(self._transactions)}", "status", {}, None)
                )
                if status is not None and applied(request, status["data"]["round"], self._hits):
                    return {"status": "ok", "data": {}, "applied": True}
        return None

    async def _send(self, request: Request) -> dict[str, Any] | None:
        """Publish `request` once; its answer, or None after `RESEND_AFTER`."""
        topic = self.collector.topics.request(self.table, request.command)
        mark = self.collector.mark()
        seen = self.collector.seen(self.table)
        payload = {"transaction": request.transaction, "seen": seen, **request.body}
        await self.collector.publish(topic, json.dumps(payload))
        try:
            answer = await self.collector.wait(
                response_to(request.transaction), after=mark, within=RESEND_AFTER
            )
        except Stalled:
            return None
        return answer.body

    async def _caught_up(self, command: str, body: dict[str, Any]) -> None:
        async with asyncio.timeout(CATCH_UP):
            while True:
                view = self._view()
                if view is not None and not self._troubled() and fits(command, body, view["round"]):
                    return
                await asyncio.sleep(0.05)

    # ---------------------------------------------------------------- the floorperson
    async def _floorperson(self) -> None:
        """Confirms each doubt: on this line no card is ever lost, so there is none to enter."""
        while True:
            await asyncio.sleep(0.2)
            view = self._view()
            if view is None or view["doubt"] is None:
                continue
            await asyncio.sleep(self.rng.uniform(0.3, 1.0))  # on the way to the table
            self.supervised.add(self._current)
            await self._request("resume", {}, delay=False)

    # ---------------------------------------------------------------- the outcome
    def _outcome(self) -> Outcome:
        prefix = f"{self.collector.topics.base}/{self.table}/"
        state = self.collector.topics.round_snapshot(self.table)
        published = [
            # The round state: outside the numbering (seq 0), placed by its `as_of`.
            Outbound(m.topic, m.payload, 1, m.retain, "", 0)
            if m.topic == state and "seq" not in m.body
            else Outbound(m.topic, m.payload, 1, m.retain, m.body["id"], int(m.body["seq"]))
            for m in self.collector.messages
            if m.topic.startswith(prefix)
            and not m.carried  # what a contract 4 round message carried: the verdict reads it
            and m.is_json
            and (m.topic == state or int(m.body.get("seq", 0)) > 0)  # not a gate's refusal
        ]
        numbers = {r.round_id: r.round_id for r in self.rounds}
        return Outcome(
            self.config, "reference", tuple(self.rounds), tuple(published), numbers,
            frozenset(self.supervised), frozenset(), finished=True,
        )  # fmt: skip
