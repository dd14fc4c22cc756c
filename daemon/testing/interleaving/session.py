"""One table for some rounds: the truth dealt by the dealer, carried by the wires to the daemon
and back to the console, with the faults of a `Mix`; everything the daemon published is kept
for the invariant (daemon.testing.interleaving.invariant).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from daemon.configuration.service_config import TimingConfig
from daemon.testing.interleaving.console import Console
from daemon.testing.interleaving.host import SimulatedDaemon
from daemon.testing.interleaving.people import Dealer, Supervisor
from daemon.testing.interleaving.shoe_line import (
    ENQ_FAULTS,
    REFERENCE_FAULTS,
    Frame,
    PhysicalCard,
    ShoeLine,
)
from daemon.testing.interleaving.truth import TruthTable
from daemon.testing.interleaving.wires import OPEN_DELAY, Broker, Clock, ShoeWire
from daemon.wire.round_message import DEFAULT_CONTRACT, unbundled_outbound
from drivers.events import CardUnreadable, frame_number
from rules.cards import Card, DeckKind, deck
from rules.events import DealCard

if TYPE_CHECKING:
    from collections.abc import Callable

    from daemon.testing.interleaving.mixes import Mix
    from daemon.testing.interleaving.shoe_line import LineFault
    from daemon.testing.interleaving.truth import Step, TruthRound
    from daemon.wire.envelope import Outbound
    from rules.config import TableConfig

EVENT_LIMIT: Final = 2_000_000  # actions of the clock one session may take: a harness bug else
_ROUND_OPENED: Final = b'"type":"round_opened"'
_NO_DOUBT: Final = b'"doubt":null'


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one session leaves for the invariant."""

    config: TableConfig
    protocol: str
    truth: tuple[TruthRound, ...]
    published: tuple[Outbound, ...]  # every message the daemon handed to the broker
    round_map: dict[int, int]  # the daemon's round -> the truth's round it is
    supervised: frozenset[int]  # truth rounds in which the floorperson sent a request
    voided: frozenset[int]  # truth rounds the floorperson voided
    finished: bool  # False: the clock's limit ended it (a harness bug)
    trace: tuple[str, ...] = ()  # with `Session(trace=True)`: what happened, line by line


class Session:
    """The table, its people, its wires and its daemon, on one clock."""

    def __init__(
        self,
        seed: int,
        mix: Mix,
        config: TableConfig,
        *,
        protocol: str,
        rounds: int,
        trace: bool = False,
        contract: int = DEFAULT_CONTRACT,
    ) -> None:
        """`trace`: keep a line for everything that happens (`Outcome.trace`), to read a
        finding by. `contract`: the console contract the daemon publishes under."""

        def rng(name: str) -> random.Random:
            return random.Random(f"{seed}:{name}")  # noqa: S311 - a simulation, not a secret

        self.mix, self.config, self.protocol, self.rng = mix, config, protocol, rng("faults")
        self.clock = Clock()
        self._starts = 0  # daemons started: a port opened by one that died meanwhile is not
        self.truth = TruthTable(config, rng("truth"))
        self.line = ShoeLine(protocol, rng("line"), repeats=mix.repeats)
        self.wire = ShoeWire(self.clock, rng("wire"), mix.jitter, reliable=self.line.reliable)
        self.broker = Broker(self.clock, rng("broker"), mix.jitter)
        duplicates = rng("duplicates")
        self.console = Console(
            self.clock, self.broker, lambda: 2 if duplicates.random() < mix.duplicates else 1
        )
        self.daemon = SimulatedDaemon(
            config,
            protocol,
            epoch=f"{seed & (2**128 - 1):032x}",
            timing=TimingConfig().seconds(),
            contract=contract,
        )
        self.dealer = Dealer(self, rounds, rng("dealer"))
        self.supervisor = Supervisor(self, rng("floorperson"))
        self.ledger: list[PhysicalCard] = []
        self.taken: list[PhysicalCard] = []  # cards the daemon took, in the order it took them
        self.published: list[Outbound] = []
        self.rounds: list[TruthRound] = []
        self.round_map: dict[int, int] = {}
        self.supervised: set[int] = set()
        self.voided: set[int] = set()
        self.doubt_mark: int | None = None  # cards taken when the table's doubt began
        self._acknowledged: set[int] = set()
        self._timer_at: float | None = None
        self._crash_after_take = False
        self.trace: list[str] | None = [] if trace else None
        self.wire.take = self._take_frame
        self.broker.to_daemon = self._take_request
        self.broker.to_console = self.console.receive
        self.broker.acknowledged = self._broker_acknowledged

    @property
    def current_round(self) -> int:
        return self.rounds[-1].round_id if self.rounds else 0

    def run(self) -> Outcome:
        self._start_daemon()
        if not self.line.reliable:
            self.clock.at(0.5, lambda: self.wire.send(self.line.power_up()))
        self.dealer.begin()
        self.supervisor.watch()
        finished = self.clock.run(until=lambda: self.dealer.finished, limit=EVENT_LIMIT)
        return Outcome(
            self.config, self.protocol, tuple(self.rounds), tuple(self.published),
            dict(self.round_map), frozenset(self.supervised), frozenset(self.voided), finished,
            tuple(self.trace or ()),
        )  # fmt: skip

    def note(self, what: str) -> None:
        if self.trace is not None:
            self.trace.append(f"{self.clock.now:9.3f} {what}")

    # ---------------------------------------------------------------- the daemon
    def _start_daemon(self) -> None:
        self._publish(self.daemon.start(self.clock.now))
        greeting = self._greeting if self.line.reliable else None
        self._starts += 1
        starts = self._starts
        self.clock.after(self.rng.uniform(*OPEN_DELAY), lambda: self._port_opened(greeting, starts))

    def _port_opened(self, greeting: Callable[[], Frame] | None, starts: int) -> None:
        if not self.daemon.up or starts != self._starts:  # that daemon died before it opened
            return
        self._publish(self.daemon.port_opened(self.clock.now))
        self.wire.opened(greeting)

    def _greeting(self) -> Frame:
        """Who the shoe is, and the frame it sends next: its oldest kept one, or a new one."""
        kept = self.wire.kept
        oldest = frame_number(kept[0].event) if kept else None
        return self.line.identity(self.line.seq if oldest is None else oldest)

    def _crash(self, downtime: float) -> None:
        if not self.daemon.up:
            return
        self.note(f"CRASH for {downtime:.2f} s")
        self.daemon.crash()
        self.wire.closed()
        self.broker.daemon_died()
        self.clock.after(downtime, self._start_daemon)

    def _publish(self, messages: list[Outbound]) -> None:
        if not messages:
            return
        if self.trace is not None:
            for message in messages:
                kind = message.topic.split("/", 2)[2]
                if kind not in ("round", "state"):
                    self.note(f"  daemon -> {message.seq} {kind} {message.payload[120:260]!r}")
        self.published.extend(messages)
        self.broker.publish(messages)
        snapshots = [m for m in messages if m.topic.endswith("/round")]
        if snapshots:
            doubt = _NO_DOUBT not in snapshots[-1].payload
            if not doubt:
                self.doubt_mark = None
            elif self.doubt_mark is None:
                self.doubt_mark = len(self.taken)
        self._follow_timers()

    def _follow_timers(self) -> None:
        deadline = self.daemon.next_deadline()
        if deadline is not None and deadline != self._timer_at:
            self._timer_at = deadline
            self.clock.at(deadline, self._timers_due)

    def _timers_due(self) -> None:
        self._timer_at = None
        if self.daemon.up:
            self._publish(self.daemon.take_due_timers(self.clock.now))
        self._follow_timers()

    def _take_frame(self, frame: Frame) -> bool:
        daemon = self.daemon
        if not daemon.up:
            return False
        self._publish(daemon.take_due_timers(self.clock.now))
        out, taken, _ = daemon.take_shoe(frame.event, self.clock.now)
        self.note(f"daemon takes {frame.event} ({'taken' if taken else 'not taken'})")
        self._publish(out)  # before the card counts as taken: a doubt it began holds it
        card = frame.card
        if taken and card is not None and card.fate == "pending":
            card.fate = "unreadable" if isinstance(frame.event, CardUnreadable) else "taken"
            self.taken.append(card)
        if self._crash_after_take:  # between the commit and the acknowledgement
            self._crash_after_take = False
            self._crash(self.rng.uniform(1.0, 5.0))
        return True

    def _take_request(self, command: str, payload: bytes) -> None:
        daemon = self.daemon
        if not daemon.up:
            return
        now = self.clock.now
        self._publish(daemon.take_due_timers(now))
        self.note(f"daemon takes request/{command} {payload.decode()}")
        out = daemon.take_request(command, payload, now)
        said = [part for m in out for part in unbundled_outbound(m)]  # contract 4's too
        opened = [m for m in said if _ROUND_OPENED in m.payload and "/event/" in m.topic]
        if opened:  # the round this request's tap belongs to
            request = self.console.requests.get(str(json.loads(payload).get("transaction")))
            truth = self.current_round if request is None else request.round_id
            self.round_map[json.loads(opened[0].payload)["round"]] = truth or 0
        self._publish(out)

    def _broker_acknowledged(self, message: Outbound) -> None:
        """The broker has it: the daemon's watermark moves over every message it holds."""
        if not message.seq:
            return  # a round state: outside the numbering, no watermark to move
        self._acknowledged.add(message.seq)
        daemon = self.daemon
        while daemon.delivered_seq + 1 in self._acknowledged:
            daemon.delivered_seq += 1
            self._acknowledged.discard(daemon.delivered_seq)

    # ---------------------------------------------------------------- the dealer's steps
    def truth_round(self) -> TruthRound:
        round_ = self.truth.next_round()
        self.rounds.append(round_)
        return round_

    def perform(self, step: Step) -> None:
        self.note(
            f"DEALER {step.kind} {step.command} {step.body} {step.event} round {step.round_id}"
        )
        if step.kind == "tap":
            self.console.tap(step.command, step.body, step.round_id)
        elif step.kind == "shuffle" and not self.line.reliable:
            self.console.tap("shuffle", {}, step.round_id)  # an ENQ shoe does not say so
        elif step.kind == "shuffle":
            self.wire.send(self.line.new_shoe())
        else:
            self._deal(PhysicalCard(len(self.ledger), step.card, step.round_id))

    def _deal(self, card: PhysicalCard) -> None:
        self.ledger.append(card)
        fault = self._card_fault()
        if fault == "misread":
            phantom = PhysicalCard(len(self.ledger), DealCard(self._any_card()), None, stray=True)
            self.ledger.append(phantom)
            self.wire.send(self.line.misread(phantom, card))
        else:
            self.wire.send(self.line.card(card, fault))

    def _card_fault(self) -> LineFault | None:
        mix = self.mix
        if not mix.card_faults or self.rng.random() >= mix.card_fault_rate:
            return None
        offered = ENQ_FAULTS if self.protocol == "enq" else REFERENCE_FAULTS
        faults = [f for f in mix.card_faults if f in offered]
        return self.rng.choice(faults) if faults else None

    def _any_card(self) -> Card:
        return self.rng.choice(deck(DeckKind.STANDARD))

    # ---------------------------------------------------------------- a round's faults
    def round_begins(self, round_: TruthRound) -> None:
        """What goes wrong during this round, at a random moment of it."""
        mix, rng, clock = self.mix, self.rng, self.clock
        if rng.random() < mix.daemon_restarts:
            if rng.random() < 0.3:
                clock.after(rng.uniform(2.0, 25.0), self._arm_crash_after_take)
            else:
                downtime = rng.uniform(1.0, 5.0)
                clock.after(rng.uniform(2.0, 25.0), lambda: self._crash(downtime))
        if rng.random() < mix.broker_restarts:
            outage = rng.uniform(0.5, 4.0)
            clock.after(rng.uniform(2.0, 25.0), lambda: self.broker.restart(outage))
        if rng.random() < mix.twin_daemon:
            clock.after(rng.uniform(2.0, 20.0), self._twin_claims)
        del round_  # the moments are the round's; its content does not choose them

    def _arm_crash_after_take(self) -> None:
        self._crash_after_take = True

    def _twin_claims(self) -> None:
        if self.daemon.up:
            message = "another daemon claims this table: which cards are its own cannot be told"
            self._publish(
                self.daemon.take_notice("table_claimed", message, self.clock.now, hold=True)
            )

    def round_ends(self) -> None:
        """Between rounds: an ENQ shoe may read a card no round needs (lock mode)."""
        self.console.forget_round(self.current_round)
        if self.protocol == "enq" and self.rng.random() < self.mix.stray_cards:
            stray = PhysicalCard(len(self.ledger), DealCard(self._any_card()), None, stray=True)
            self.ledger.append(stray)
            self.wire.send(self.line.card(stray, "outside_game"))

    def round_voided(self) -> None:
        self.voided.add(self.current_round)
        self.console.forget_round(self.current_round)
        self.dealer.abandon()

    # ---------------------------------------------------------------- the floorperson's eyes
    def enterable(self, lost: list[PhysicalCard]) -> bool:
        """Whether entering `lost` at the doubt puts each where it was dealt: every card the
        table took before the doubt came before them, every card it took since came after."""
        if not lost:
            return True
        mark = len(self.taken) if self.doubt_mark is None else self.doubt_mark
        before, since = self.taken[:mark], self.taken[mark:]
        first, last = lost[0].index, lost[-1].index
        between = [c for c in self.ledger[first : last + 1] if c.fate in ("taken", "unreadable")]
        return (
            not between
            and all(c.index < first for c in before[-50:])
            and all(c.index > last for c in since)
        )

    def held_strays(self, view: dict[str, object]) -> tuple[int, bool]:
        """How many of the first held cards belong to no round the table can still place,
        and whether one such card lies behind a card that does (`resume` cannot set it aside)."""
        held_count = view["cards_held"]
        assert isinstance(held_count, int)
        if not held_count:
            return 0, False
        held = [c for c in self.taken if c.fate == "taken" or c.entered][-held_count:]
        finished = self._finished_round(view.get("round"))
        strays = [c.stray or (c.round_id is not None and c.round_id <= finished) for c in held]
        leading = next((i for i, stray in enumerate(strays) if not stray), len(strays))
        return leading, any(strays[leading:])

    def _finished_round(self, round_: object) -> int:
        """The last truth round the table is done with."""
        if not isinstance(round_, dict):
            return 0
        truth = self.round_map.get(round_["id"], 0)
        return truth if round_["stage"] == "over" else truth - 1
