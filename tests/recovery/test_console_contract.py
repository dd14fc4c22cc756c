"""Every case that once paid the wrong seat in silence, against the daemon as a user runs it.

`shoe2mqtt run` as a process, a real mosquitto, one socat pty pair per table with the shoe's
frames written by hand on the shoe's end (the ENQ captures in examples/captures/enq/, and
frames built here for the races), the dealer console played over MQTT as docs/mqtt.md says.
Each table of one daemon plays one case, all at once. The physical deal of every case:
seats 1-3 each wager $10 on blackjack and $10 on the 20 point bonus; burn 9H; seat 1 10C 7H,
seat 2 KH 2D, seat 3 KS QD; dealer 6S up and 9C down; everyone stands; the dealer draws 8D.
So seat 3's KS QD is an any 20 at 4 to 1 and seats 1 and 2 lose their bonus (13:69F-2.24(f),
(g)3). Every case either settles exactly that (`review: false`) or holds the round, tells the
pit and settles it right once a supervisor has resolved it (`review: true`): never a wrong
settlement, and never a flag without a notice (docs/rules.md, decisions 15 and 16).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pytest

from daemon.testing import DaemonProcess, write_service_config
from daemon.testing.recorder import Collector, Received, Stalled, response_to
from daemon.testing.socat import SocatPair
from drivers.captures import read_capture
from drivers.codecs import enq
from drivers.events import CardDrawn, CommunicationStarted

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable

    from daemon.testing import Mosquitto

CAPTURES: Final = Path(__file__).parents[2] / "examples" / "captures" / "enq"
BASE: Final = "shoe2mqtt"
WAIT: Final = 15.0
TABLE: Final = {
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
TRUTH: Final = [
    (3, "twenty_point_bonus", "any_20", "win", "40.00"),
    (2, "twenty_point_bonus", "no_20", "lose", "0.00"),
    (1, "twenty_point_bonus", "no_20", "lose", "0.00"),
]
# The true deal after the burn, and where each card goes.
DEAL: Final = ("10C", "KH", "KS", "6S", "7H", "2D", "QD", "9C", "8D")
HANDS: Final = {1: ["10C", "7H"], 2: ["KH", "2D"], 3: ["KS", "QD"]}


@dataclass
class Table:
    """One table of the daemon: its shoe's end of the cable, and its dealer console."""

    table: str
    cable: SocatPair
    collector: Collector
    _seq: itertools.count[int] = field(default_factory=lambda: itertools.count(0x30))
    _transactions: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    # ---------------------------------------------------------------- the shoe
    def write(self, data: bytes) -> None:
        self.cable.write(data)

    def card(self, code: str, *, burned: bool = False) -> bytes:
        """The next frame of this shoe: a card (D, or the burn)."""
        card = CardDrawn(code[:-1], code[-1], seq=next(self._seq), burned=burned)  # type: ignore[arg-type]
        return enq.encode_device_frame(card)

    def greet(self) -> bytes:
        return enq.encode_device_frame(CommunicationStarted(seq=next(self._seq)))

    def deal(self, codes: str) -> None:
        for code in codes.split():
            self.write(self.card(code))

    # ---------------------------------------------------------------- the console
    async def request(self, command: str, **body: Any) -> dict[str, Any]:
        """A request as a console sends it (with what it had seen), and the daemon's answer."""
        transaction = f"{self.table}-{next(self._transactions)}"
        mark = self.collector.mark()
        payload = {"transaction": transaction, "seen": self.collector.seen(self.table), **body}
        topic = f"{BASE}/{self.table}/request/{command}"
        await self.collector.publish(topic, json.dumps(payload))
        answer = await self.collector.wait(response_to(transaction), after=mark, within=WAIT)
        return answer.body

    async def ok(self, command: str, **body: Any) -> dict[str, Any]:
        answer = await self.request(command, **body)
        assert answer["status"] == "ok", (self.table, command, answer)
        return answer

    async def wagers(self, seats: tuple[int, ...] = (1, 2, 3)) -> None:
        for seat in seats:
            await self.ok("wager", seat=seat, kind="blackjack", amount="10.00")
            await self.ok("wager", seat=seat, kind="twenty_point_bonus", amount="10.00")

    async def stands(self) -> None:
        for seat in (1, 2, 3):
            await self.until(_turn_of(seat))
            await self.ok("action", seat=seat, action="stand")

    async def until(self, test: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The first round snapshot (seen so far or to come) that passes `test`."""
        topic = f"{BASE}/{self.table}/round"
        try:
            found = await self.collector.wait(
                lambda m: m.topic == topic and test(m.body), within=WAIT
            )
        except Stalled as stalled:
            raise Stalled(f"{stalled}; the table stands at {self._where()}") from None
        return found.body

    def _where(self) -> str:
        """The latest snapshot and the notices: what a failed wait shows."""
        snapshots = self.of("round")
        last = snapshots[-1] if snapshots else {}
        notices = [m.topic.rsplit("/", 1)[-1] for m in self.collector.messages
                   if m.topic.startswith(f"{BASE}/{self.table}/notice/")]  # fmt: skip
        return (
            json.dumps({k: last.get(k) for k in ("round", "doubt", "awaiting", "cards_held")})
            + f" notices {notices}"
        )

    async def burned(self) -> None:
        topic = f"{BASE}/{self.table}/event/card_burned"
        await self.collector.wait(lambda m: m.topic == topic, within=WAIT)

    # ---------------------------------------------------------------- what came out
    def of(self, suffix: str) -> list[dict[str, Any]]:
        return [m.body for m in self.collector.on(self.table, suffix)]

    async def verdict(self, *, review: bool) -> None:
        """The round ended, settled as the physical deal says, flagged as expected; a flag
        always beside a notice that says why."""
        ended = await self.until(lambda s: _stage(s) == "over")
        settled = [
            (b["seat"], b["wager"], b["outcome"], b["result"], b["won"])
            for b in self.of("settlement")
        ]
        assert settled == TRUTH, (self.table, settled)
        assert {b["review"] for b in self.of("settlement")} == {review}, self.table
        hands = {s["seat"]: s["hands"][0]["cards"] for s in ended["round"]["seats"]}
        assert hands == HANDS, (self.table, hands)
        if review:
            reasons = ended["review"]
            kinds = {n["kind"] for n in self.of(f"notice/{reasons[0]}")}
            assert kinds == {reasons[0]}, (self.table, reasons)


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


def _held_or_waiting(snapshot: dict[str, Any]) -> bool:
    """The table holds its cards for a doubt, or plays on to the first decision."""
    return snapshot["doubt"] is not None or _turn(snapshot) == 1


# ---------------------------------------------------------------- the ENQ captures
def _split(name: str) -> tuple[list[bytes], list[bytes]]:
    """A capture's frames before the console's wagers (the greeting and the burn) and after
    (the half second it leaves for them)."""
    chunks = read_capture(CAPTURES / f"{name}.jsonl").received
    gap = next(i for i in range(1, len(chunks)) if chunks[i].t - chunks[i - 1].t >= 0.4)
    return [c.data for c in chunks[:gap]], [c.data for c in chunks[gap:]]


async def _capture_case(table: Table, name: str, resolve: list[tuple[str, dict[str, Any]]]) -> None:
    """A capture played as the shoe, the console around it; the supervisor's `resolve`
    (requests) if the table holds its cards."""
    before, after = _split(name)
    await table.ok("shuffle")  # the family reports no shuffle: the console does
    for frame in before:
        table.write(frame)
    await table.burned()
    await table.wagers()
    await table.ok("close_betting")
    for frame in after:
        table.write(frame)
    held = await table.until(_held_or_waiting)
    if held["doubt"] is not None:
        assert resolve, (table.table, name, held["doubt"])
        for command, body in resolve:
            await table.ok(command, **body)
    else:
        assert not resolve, (table.table, name, "no doubt where one was due")
    await table.stands()
    await table.verdict(review=bool(resolve))


RESUME: Final[list[tuple[str, dict[str, Any]]]] = [("resume", {})]
CAPTURE_CASES: Final[dict[str, list[tuple[str, dict[str, Any]]]]] = {
    "clean-round": [],
    "exact-repeats": [],
    # Seat 1's 7H went by unread: the floorperson enters it, in its place, and resumes.
    "error-can-not-read": [("card", {"card": "7H"}), ("resume", {})],
    "error-reverse-run-at-exit": RESUME,  # 7H went back into the shoe and came out again
    "retransmitted-unseen-card": RESUME,  # the R frame was 7H, which the table never had
    "card-outside-game": RESUME,  # the d frame was 7H, dealt to seat 1
    "same-seq-after-lock": [],
    "two-cards-one-seq": RESUME,
    "restart-after-burn": RESUME,  # the shoe restarted after "No more bets": nothing lost
    "restart-mid-round": RESUME,
}


# ---------------------------------------------------------------- the races
async def _wagers_after_the_first_card(table: Table) -> None:
    """The first card arrives before any wager: held, with the round it would join, until
    the floorperson says it was that round's first card."""
    await _burn(table)
    table.deal("10C")
    await table.until(lambda s: s["doubt"] == "card_before_round")
    await table.wagers()
    await table.ok("close_betting")
    await table.ok("resume")
    table.deal(" ".join(DEAL[1:]))
    await table.stands()
    await table.verdict(review=True)


async def _a_wager_just_after_the_first_card(table: Table) -> None:
    """Seat 2's wagers reach the daemon just after the first card: betting is still open
    (the console had not called "No more bets"), so seat 2 is dealt in."""
    await _burn(table)
    await table.wagers((1, 3))
    table.deal("10C")
    await table.until(lambda s: s["cards_held"] == 1)
    await table.wagers((2,))
    await table.ok("close_betting")
    table.deal(" ".join(DEAL[1:]))
    await table.stands()
    await table.verdict(review=False)


async def _requests_queued_ahead_of_the_first_card(table: Table) -> None:
    """36 status requests, the wagers and "No more bets" sent at once, the first card 20 ms
    after the last: nothing jumps the queue, nothing is refused as too late. (On a loaded
    machine the card can truly reach the daemon before the first wager: then the table holds
    it, says so, and the floorperson says it was the round's first card.)"""
    await _burn(table)
    mark = table.collector.mark()
    seen = table.collector.seen(table.table)
    for _ in range(36):
        await table.collector.publish(f"{BASE}/{table.table}/request/status", "{}")
    for seat in (1, 2, 3):
        for kind in ("blackjack", "twenty_point_bonus"):
            body = {"seat": seat, "kind": kind, "amount": "10.00", "seen": seen}
            await table.collector.publish(f"{BASE}/{table.table}/request/wager", json.dumps(body))
    close = {"transaction": "close", "seen": seen}
    await table.collector.publish(f"{BASE}/{table.table}/request/close_betting", json.dumps(close))
    await asyncio.sleep(0.02)
    table.deal(" ".join(DEAL))
    answer = await table.collector.wait(response_to("close"), after=mark, within=WAIT)
    assert answer.body["status"] == "ok", answer.body
    held = await table.until(_held_or_waiting)
    if held["doubt"] is not None:
        assert held["doubt"] == "card_before_round", held["doubt"]
        await table.ok("resume")
    await table.stands()
    await table.verdict(review=held["doubt"] is not None)


async def _a_hit_card_ahead_of_the_stand_before_it(table: Table) -> None:
    """Seat 2's hit card reaches the daemon 20 ms before the console's "stand seat 1": it
    waits for seat 1's stand and seat 2's hit, and is never seat 1's."""
    await _burn(table)
    await table.wagers()
    await table.ok("close_betting")
    table.deal(" ".join(DEAL[:8]))
    await table.until(lambda s: _turn(s) == 1)
    table.deal("4S")  # seat 2's hit, dealt before the console's taps arrive
    await asyncio.sleep(0.02)
    await table.ok("action", seat=1, action="stand")
    await table.ok("action", seat=2, action="hit")
    await table.until(lambda s: _turn(s) == 2)
    await table.ok("action", seat=2, action="stand")
    await table.ok("action", seat=3, action="stand")
    table.deal("8D")
    ended = await table.until(lambda s: _stage(s) == "over")
    hands = {s["seat"]: s["hands"][0]["cards"] for s in ended["round"]["seats"]}
    assert hands == {1: ["10C", "7H"], 2: ["KH", "2D", "4S"], 3: ["KS", "QD"]}
    assert {b["review"] for b in table.of("settlement")} == {False}


async def _burn(table: Table) -> None:
    await table.ok("shuffle")
    table.write(table.greet())
    table.write(table.card("9H", burned=True))
    await table.burned()


CASES: Final[dict[str, Callable[[Table], Awaitable[None]]]] = {
    "wagers-after-the-first-card": _wagers_after_the_first_card,
    "a-wager-just-after-the-first-card": _a_wager_just_after_the_first_card,
    "requests-queued-ahead-of-the-first-card": _requests_queued_ahead_of_the_first_card,
    "a-hit-card-ahead-of-the-stand-before-it": _a_hit_card_ahead_of_the_stand_before_it,
}


# ---------------------------------------------------------------- one daemon, every table
@dataclass
class Pit:
    tables: list[Table]
    daemon: DaemonProcess
    collector: Collector


@contextlib.asynccontextmanager
async def _pit(directory: Path, broker: Mosquitto, names: list[str]) -> AsyncIterator[Pit]:
    async with contextlib.AsyncExitStack() as stack:
        cables = []
        for index in range(len(names)):
            (directory / f"cable-{index}").mkdir()
            cables.append(await stack.enter_async_context(SocatPair(directory / f"cable-{index}")))
        tables = [{"id": f"case-{index:02d}", **TABLE} for index in range(len(names))]
        config = write_service_config(
            directory / "shoe2mqtt.toml",
            broker,
            node="pit-a",
            state_directory=directory / "state",
            tables=[(t, c.host_path) for t, c in zip(tables, cables, strict=True)],
            protocol="enq",
        )
        collector = await stack.enter_async_context(
            Collector(broker.host, broker.port, identifier="console-contract")
        )
        daemon = DaemonProcess(config, directory / "daemon.log")
        mark = collector.mark()
        await daemon.start()
        try:
            await collector.wait_online(mark)
            await _connected(collector, [str(t["id"]) for t in tables])
            played = [
                Table(str(t["id"]), c, collector) for t, c in zip(tables, cables, strict=True)
            ]
            yield Pit(played, daemon, collector)
        finally:
            assert await daemon.stop() == 0, daemon.tail()


async def _connected(collector: Collector, tables: list[str]) -> None:
    """Every table's reader has its line open: what is written now is heard."""

    def connected(table: str) -> Callable[[Received], bool]:
        topic = f"{BASE}/{table}/state"
        return lambda m: m.topic == topic and m.body["reader"]["link"] == "connected"

    for table in tables:
        await collector.wait(connected(table), within=WAIT)


@pytest.mark.timeout(120)
async def test_every_case_settles_right_or_holds_flags_and_tells_the_pit(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    names = [*CAPTURE_CASES, *CASES]
    async with _pit(tmp_path, mosquitto, names) as pit:
        tables = pit.tables
        plays: list[Awaitable[None]] = []
        for name, table in zip(names, tables, strict=True):
            if name in CAPTURE_CASES:
                plays.append(_capture_case(table, name, CAPTURE_CASES[name]))
            else:
                plays.append(CASES[name](table))
        results = await asyncio.gather(*plays, return_exceptions=True)
    failed = {
        name: repr(result)
        for name, result in zip(names, results, strict=True)
        if isinstance(result, BaseException)
    }
    assert failed == {}


@pytest.mark.timeout(90)
async def test_a_restart_between_rounds_holds_the_round_a_console_opened_unanswered(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    """The daemon restarts between rounds (an ENQ shoe keeps nothing): the console's wagers
    go unanswered, the dealer deals seat 1's first card meanwhile, the daemon comes back and
    the console sends its wagers again as it had them. The round is held, the pit told, and
    the floorperson enters the card that went by unheard."""
    async with _pit(tmp_path, mosquitto, ["restart"]) as pit:
        [table] = pit.tables
        await _burn(table)
        seen = table.collector.seen(table.table)
        assert await pit.daemon.stop() == 0, pit.daemon.tail()
        requests = [
            ("wager", {"seat": seat, "kind": kind, "amount": "10.00"})
            for seat in (1, 2, 3)
            for kind in ("blackjack", "twenty_point_bonus")
        ]
        for command, body in [*requests, ("close_betting", {})]:
            topic = f"{BASE}/{table.table}/request/{command}"
            await table.collector.publish(topic, json.dumps({**body, "seen": seen}))
        table.deal("10C")  # nobody reads the line: gone
        mark = table.collector.mark()
        await pit.daemon.start()
        await table.collector.wait_online(mark)
        await _connected(table.collector, [table.table])
        for command, body in [*requests, ("close_betting", {})]:  # unanswered: sent again
            answer = await table.request(command, **body, seen=seen)
            assert answer["status"] == "ok", answer
        table.deal(" ".join(DEAL[1:]))
        held = await table.until(lambda s: s["doubt"] is not None)
        assert held["doubt"] == "unheard_round"
        await table.ok("card", card="10C")
        await table.ok("resume")
        await table.stands()
        await table.verdict(review=True)
