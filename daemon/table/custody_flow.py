"""The shoe's cards through a table's custody: placed when their place is declared, held
behind an unreadable card or a doubt, released in order when the dealer console resolves
it (daemon.table.custody keeps the held cards; this decides when they move), and the deadlines
a held card or a silent shoe runs (`timers`, kept by the daemon: daemon.table.timers)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from daemon.table.custody import NOTHING_READY
from daemon.table.publishing import Publishing
from daemon.table.state import LIVE
from daemon.wire.surveillance import FOREIGN_CARD
from rules.engine import Awaiting
from rules.errors import EventError
from rules.events import DealCard, Shuffle

if TYPE_CHECKING:
    from daemon.table.records import TimerRecord
    from daemon.wire.envelope import Outbound
    from rules.events import TableEvent
    from rules.outputs import Output


# What the dealer console is asked to do when the table holds cards in doubt.
_HOLD_ADVICE = (
    "; every card from here is held, not given to any seat: enter any card that went by "
    "unread (request/card), then confirm (request/resume), or void the round (request/void)"
)
_AWAITED = {
    "round": "a round: the console's wagers, then no more bets (request/close_betting)",
    "close_betting": "no more bets (request/close_betting)",
    "decision": "the decision of seat {seat} hand {hand} (request/action)",
}


@dataclass(frozen=True, slots=True)
class Timer:
    """A deadline the table has running: the daemon journals `timer` records for it when it
    passes (daemon.parts.commits), naming `key` so that a late one changes nothing.

    `declaration`: a held card waits for the console (key: the wait's number); `silence`: a
    round waits for a card and the shoe says nothing (key: the shoe events taken so far).
    """

    kind: Literal["declaration", "silence"]
    key: int


class CustodyFlow(Publishing):
    """The shoe's cards placed, held or released; the doubts that hold them; the timers."""

    def timers(self) -> tuple[Timer, ...]:
        """The deadlines running now (the daemon keeps the clock: daemon.table.timers)."""
        running: list[Timer] = []
        wait = self.custody.wait
        if wait is not None:
            running.append(Timer("declaration", wait.number))
        if self._expects_card() and self.silence_noticed != self.shoe_events:
            running.append(Timer("silence", self.shoe_events))
        return tuple(running)

    def _expects_card(self) -> bool:
        """A round is being dealt, and its next card needs nothing declared: only the shoe
        is awaited."""
        round_ = self.engine.round
        return (
            round_ is not None
            and round_.stage in LIVE
            and not self.custody.holding
            and self._awaiting() is None
        )

    def on_timer(self, record: TimerRecord) -> list[Outbound]:
        """A deadline the daemon kept has passed (journaled, so a replay sees it too); it
        counts only if what it was set for still stands."""
        kind, key, seconds = record.timer, record.key, record.seconds
        wait = self.custody.wait
        if kind == "declaration" and wait is not None and wait.number == key:
            awaited = _AWAITED[wait.awaiting.declaration].format(
                seat=wait.awaiting.seat, hand=wait.awaiting.hand
            )
            self.custody.begin_doubt("declaration_missing", all_held=True)
            message = (
                f"a card from the shoe has waited {seconds:.0f} s for {awaited}: it is not "
                "given to any seat by guess" + _HOLD_ADVICE
            )
            return self._flag("declaration_missing", message)
        if (
            kind == "silence"
            and key == self.shoe_events
            and self.silence_noticed != key
            and self._expects_card()
        ):
            self.silence_noticed = key
            return [
                self.notice(
                    "reader_silent",
                    f"the round has waited {seconds:.0f} s for a card and the shoe has said "
                    "nothing: check its cable (one pulled on the shoe's side of a USB adapter "
                    "or a device server leaves the PC's port open and silent)",
                )
            ]
        return []

    def _doubt(self, reason: str, message: str, *, always: bool = False) -> list[Outbound]:
        """The table cannot be sure it has every card: the round is flagged, the pit told, and
        where a card could be misplaced (`always`: whatever the table is doing), every card
        from here is held for the dealer."""
        if always or self._at_stake():
            self.custody.begin_doubt(reason)
            message += _HOLD_ADVICE
        return self._flag(reason, message)

    def _unheard(self, reason: str, message: str) -> list[Outbound]:
        """A shoe that keeps nothing went unheard between rounds: nothing is lost unless the
        dealer dealt meanwhile, which only the console can know. The round that opens next
        goes on if the request that opens it comes from a console that had seen this notice
        (its `seen`); else it is a doubt (`_opened`)."""
        self.custody.unheard = self.envelopes.next_seq
        return [
            self.notice(
                reason,
                message + "; the next round is held for the dealer console unless the console "
                "that opens it has seen the table since this notice",
            )
        ]

    def _from_shoe(self, card: DealCard) -> list[Outbound]:
        """A card in the shoe's order: placed now, or kept until its place is declared (or
        its doubt resolved)."""
        # surveillance hook: a card the shoe cannot hold is never placed (decision 17)
        if (foreign := self.surveillance.judge(card, self.engine, self.custody)) is not None:
            message, alarm = self.surveillance.foreign_card(
                card, foreign, self.engine, self.custody
            )
            return [*alarm, *self._doubt(FOREIGN_CARD, message, always=True)]
        awaiting = self._awaiting()
        if not self.custody.holding and (awaiting is None or card.burned):
            return self._apply(card, source="shoe")  # a burn the reader saw goes to the rack
        out: list[Outbound] = []
        if self.declared and awaiting == Awaiting("round") and not self.custody.holding:
            out = self._card_before_round()
        self.custody.hold(card)
        return [*out, self.snapshot()]  # the pit sees the count of cards held

    def _card_before_round(self) -> list[Outbound]:
        """A card came while no round was open. It is the next round's first card, come before
        the console's wagers, or one the dealer drew that no round needed (decision 7): only
        the dealer can say, so it is held with the round it would join."""
        if self.custody.unheard is not None:
            # After the table went unheard: the dealer is dealing a round it did not hear begin.
            self.custody.unheard = None
            return self._doubt(
                "unheard_round",
                "a card came before any wager after the table went unheard: the round may be "
                "missing its first cards",
                always=True,
            )
        return self._doubt(
            "card_before_round",
            "a card came while no round was open: it is the next round's first card, come "
            "before the console's wagers, or a card no round needed; resume deals it as the "
            'round\'s first card, resume with {"discard": 1} sets it aside',
            always=True,
        )

    def _new_shoe(self) -> list[Outbound]:
        """A new shoe: what waited for a round belongs to none; in a round, it waits its turn
        (the engine refuses a shuffle in the middle of one)."""
        round_ = self.engine.round
        if round_ is not None and round_.stage in LIVE:
            self.custody.hold(Shuffle())
            return [self.snapshot()]
        return [*self._drop_held("a new shoe"), *self._apply(Shuffle(), source="shoe")]

    def _unreadable(self, *, burned: bool) -> list[Outbound]:
        if burned:
            # The burn happened, face unseen: the engine must not wait for it still, or it
            # would take the round's first card for it and every card after would move.
            self.engine.burned_unread()
            return [
                self.notice("card_unreadable", "a burned card was unreadable; nothing to enter")
            ]
        self.custody.hold(None)
        return [
            self.notice(
                "card_unreadable",
                "a card left the shoe unread: enter it at the dealer console (request/card); "
                "the cards after it wait until then",
            ),
            self.snapshot(),
        ]

    def _release(self) -> list[Outbound]:
        """Place what waits, in order, while its place is declared: up to the next
        unreadable card, the doubt, or a card whose declaration has not come."""
        out: list[Outbound] = []
        custody = self.custody
        while True:
            round_ = self.engine.round
            live = round_ is not None and round_.stage in LIVE
            item = custody.next_ready(self._awaiting(), live=live)
            if item is NOTHING_READY:
                return out
            assert isinstance(item, DealCard | Shuffle)
            out += self._apply(item, source="shoe")

    def _drop_held(self, why: str) -> list[Outbound]:
        """The round (or shoe) the held cards belonged to is over: they go nowhere."""
        if not self.custody.holding:
            return []
        dropped = self.custody.drop()
        if not dropped:
            return [self.snapshot()]
        notice = self.notice("held_cards_dropped", f"{dropped} held cards dropped: {why}")
        return [notice, self.snapshot()]

    def _apply(self, event: TableEvent, *, source: str) -> list[Outbound]:
        """Apply an event the table produced (not a request): a refusal is a notice."""
        engine = self.engine
        first_seq = self.envelopes.next_seq
        try:
            outputs = engine.apply(event)
        except EventError as exc:
            self._told.rejected(self.table_id, source, exc.code)
            self._log_warning(
                "table.event_refused",
                table=self.table_id,
                round=self.round_id,
                source=source,
                code=exc.code,
                reason=exc.message,
            )
            return [self.notice(exc.code, exc.message)]
        self.history.record(engine, None, event, outputs, from_shoe=True, first_seq=first_seq)
        self._record(event)
        out = self._publish(outputs)
        return out + self.surveillance.applied(event, outputs, engine)  # surveillance hook

    def _publish(self, outputs: list[Output]) -> list[Outbound]:
        """The engine's outputs published; then settings that waited for the round's end, a
        card the ended round did not take, and the snapshot."""
        out, ended = self._seal_outputs(outputs)
        if self.pending_config is not None and not self.engine.round_open:
            self.reconfigure(self.pending_config)
        if ended and self.custody.cards_held and self.custody.doubt is None:
            # A card came during the round that no decision of it took: the next round's
            # first card, early, or one no round needed. As a card with no round open.
            out += self._card_before_round()
        if outputs:
            out.append(self.snapshot())
        return out
