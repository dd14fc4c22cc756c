"""A blackjack table played by hand: its ENQ shoe's frames written on a socat cable, its dealer
console's requests sent over MQTT as docs/mqtt.md says (console contract 2: wagers, "No more
bets" declared with `close_betting`, each hand's decision declared with `action`).

    table = EnqTable("bj-2", cable, collector)
    seconds = await table.play_round()    # one whole round; how long each card took to the pit

The round is always the same deal: seats 1 to 3 wager $10 on blackjack; burn 9H; seat 1 gets
10C 7H, seat 2 KH 2D, seat 3 KS QD; the dealer 6S up, 9C down; everyone stands; the dealer
draws 8D and busts. Every round begins with a new shoe (`shuffle`), so any number of them can
be played. The shoe says `S` (start of communication) before the first, and only then: an
`S` while cards are at stake is a restart, a doubt.
"""

from __future__ import annotations

import itertools
import json
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from daemon.testing.recorder import Stalled, response_to
from drivers.codecs import enq
from drivers.events import CardDrawn, CommunicationStarted

if TYPE_CHECKING:
    from collections.abc import Callable

    from daemon.testing.recorder import Collector, Received
    from daemon.testing.socat import SocatPair
    from drivers.codecs.enq import DeviceMessage

WAIT: Final = 15.0  # seconds the daemon has for one step
TABLE: Final[dict[str, Any]] = {
    "game": "blackjack",
    "decks": 6,
    "seats": 7,
    "paytable": "A",
    "hole_card_reader": True,
    "limits": {
        "blackjack": {"min": "10", "max": "1000"},
        "twenty_point_bonus": {"min": "5", "max": "100"},
    },
}
BURN: Final = "9H"
DEAL: Final = ("10C", "KH", "KS", "6S", "7H", "2D", "QD", "9C")  # seats 1-3, dealer, twice
DEALER_DRAWS: Final = "8D"
SEATS: Final = (1, 2, 3)


@dataclass
class EnqTable:
    """One table: its shoe's end of the cable, and the console's MQTT client."""

    table: str
    cable: SocatPair
    collector: Collector
    base: str = "shoe2mqtt"
    _seq: itertools.count[int] = field(default_factory=lambda: itertools.count(0x30))
    _transactions: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _started: bool = False  # the shoe said `S` on this link

    # ---------------------------------------------------------------- the shoe
    def frame(self, message: DeviceMessage) -> bytes:
        """`message` as the shoe sends it, numbered next (the numbers wrap at 256)."""
        return enq.encode_device_frame(message, seq=next(self._seq) % 256)

    def card(self, code: str, *, burned: bool = False) -> bytes:
        rank, suit = code[:-1], code[-1]
        seq = next(self._seq) % 256
        return enq.encode_device_frame(CardDrawn(rank, suit, seq=seq, burned=burned))  # type: ignore[arg-type]

    async def timed_card(self, code: str, *, burned: bool = False) -> float:
        """Write a card; the seconds until the pit has its `card_dealt` (or `card_burned`)."""
        kind = "card_burned" if burned else "card_dealt"
        topic = f"{self.base}/{self.table}/event/{kind}"
        mark = self.collector.mark()
        written = time.monotonic()
        self.cable.write(self.card(code, burned=burned))
        await self.collector.wait(lambda m: m.topic == topic, after=mark, within=WAIT)
        return time.monotonic() - written

    # ---------------------------------------------------------------- the console
    async def request(self, command: str, **body: object) -> dict[str, Any]:
        """A request as a console sends it (with what it had seen), and the daemon's answer."""
        transaction = f"{self.table}-{next(self._transactions)}"
        mark = self.collector.mark()
        payload = {"transaction": transaction, "seen": self.collector.seen(self.table), **body}
        topic = f"{self.base}/{self.table}/request/{command}"
        await self.collector.publish(topic, json.dumps(payload))
        answer = await self.collector.wait(response_to(transaction), after=mark, within=WAIT)
        return answer.body

    async def ok(self, command: str, **body: object) -> dict[str, Any]:
        answer = await self.request(command, **body)
        assert answer["status"] == "ok", (self.table, command, answer)
        return answer

    async def until(self, test: Callable[[dict[str, Any]], bool], after: int = 0) -> dict[str, Any]:
        """The first round snapshot from `after` on (seen so far or to come) that passes."""
        topic = f"{self.base}/{self.table}/round"

        def match(message: Received) -> bool:
            return message.topic == topic and test(message.body)

        try:
            found = await self.collector.wait(match, after=after, within=WAIT)
        except Stalled as stalled:
            snapshots = self.collector.on(self.table, "round")
            last = snapshots[-1].body if snapshots else {}
            where = {k: last.get(k) for k in ("round", "doubt", "awaiting", "cards_held")}
            raise Stalled(f"{stalled}; the table stands at {json.dumps(where)}") from None
        return found.body

    # ---------------------------------------------------------------- a round
    async def play_round(self) -> list[float]:
        """One whole round from a new shoe; the seconds each card took to reach the pit."""
        mark = self.collector.mark()
        await self.ok("shuffle")
        if not self._started:  # the shoe's first words on a new link; later, a restart
            self.cable.write(self.frame(CommunicationStarted()))
            self._started = True
        seconds = [await self.timed_card(BURN, burned=True)]
        for seat in SEATS:
            await self.ok("wager", seat=seat, kind="blackjack", amount="10.00")
        await self.ok("close_betting")
        seconds += [await self.timed_card(code) for code in DEAL]
        for seat in SEATS:
            await self.until(_turn_of(seat), after=mark)
            await self.ok("action", seat=seat, action="stand")
        seconds.append(await self.timed_card(DEALER_DRAWS))
        await self.until(lambda s: _stage(s) == "over", after=mark)
        return seconds


def _stage(snapshot: dict[str, Any]) -> str | None:
    round_ = snapshot.get("round")
    return None if round_ is None else round_["stage"]


def _turn_of(seat: int) -> Callable[[dict[str, Any]], bool]:
    return lambda snapshot: _turn(snapshot) == seat


def _turn(snapshot: dict[str, Any]) -> int | None:
    round_ = snapshot.get("round")
    if round_ is None or round_["turn"] is None or snapshot["doubt"] is not None:
        return None
    return int(round_["turn"]["seat"])
