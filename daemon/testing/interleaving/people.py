"""The people at the table: the dealer, who works at a person's pace, and the floorperson, who
resolves every doubt from what happened on the felt.

The dealer makes the truth's steps one after another, a few hundred milliseconds to a few
seconds apart (`pace`), whatever the table makes of them: a daemon that is down does not stop
the deal. Only the console does: once it shows a doubt or a card to enter, the dealer stops
(after noticing it) until the floorperson has resolved it; no card is dealt while "No more
bets" waits for its answer; and a round begins only once the console shows the last one
over.

The floorperson comes a few seconds after the console shows trouble, asks the table for its
`status`, and does what a floorperson who saw the deal does: enters each card the table
waits for (an unreadable one, then the cards that went by unread, in the order dealt), sets
aside the held cards that belong to no round (`resume` with `discard`), and confirms; or voids
the round where entering cannot put the cards in their places (a card lost between two the
table has), where a card of no round is held behind one of the round (`discard` sets aside
only the first), or where the round cannot be finished.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import random
    from collections.abc import Callable

    from daemon.testing.interleaving.console import Request
    from daemon.testing.interleaving.session import Session
    from daemon.testing.interleaving.shoe_line import PhysicalCard
    from daemon.testing.interleaving.truth import Step, TruthRound

    Answered = Callable[[dict[str, Any]], None]

BETWEEN_ROUNDS: Final = (3.0, 8.0)  # seconds: payouts, then the next round's first wager
REACTION: Final = (0.5, 1.5)  # seconds before the dealer notices what the console shows
ARRIVAL: Final = (3.0, 8.0)  # seconds before the floorperson is at the table
POLL: Final = 0.5  # how often a waiting person looks again
RETAP_PATIENCE: Final = 10.0  # seconds the dealer waits to tap a refused request again
STUCK_AFTER: Final = 45.0  # a round dealt out and still open this long: the floorperson
VISITS_BEFORE_VOID: Final = 4  # visits in one round before the floorperson voids it


def pace(previous: Step | None, step: Step, rng: random.Random) -> float:
    """Seconds between two steps of the dealer's, by what they are."""
    if step.kind == "shuffle":
        return rng.uniform(3.0, 6.0)
    if previous is None or previous.kind == "shuffle":
        return rng.uniform(2.0, 4.0)
    if previous.round_id != step.round_id:  # a burn, then the round's first wager
        return rng.uniform(1.0, 3.0)
    if step.kind == "card":
        # the next card of the deal; after a tap (no more bets, a hit), the card it calls for
        return rng.uniform(0.3, 0.9) if previous.kind == "card" else rng.uniform(0.2, 1.0)
    if previous.kind == "card":
        return rng.uniform(0.25, 3.0)  # a decision: the player looks at the card first
    return rng.uniform(0.3, 1.5)  # taps one after another


class Dealer:
    """Deals the truth's rounds at the table, one step at a time."""

    def __init__(self, session: Session, rounds: int, rng: random.Random) -> None:
        self.session = session
        self.rounds = rounds
        self.rng = rng
        self.played = 0
        self.finished = False
        self.round: TruthRound | None = None
        self._steps: list[Step] = []
        self._previous: Step | None = None
        self._noticed: float | None = None  # when the dealer saw the console's trouble
        self._retaps_since: float | None = None
        self._dealt_out = 0.0

    def begin(self) -> None:
        self.session.clock.after(1.0, self._next_round)

    def _next_round(self) -> None:
        if self.played == self.rounds:
            self.finished = True
            return
        self.round = self.session.truth_round()
        self._steps = list(reversed(self.round.steps))
        self.session.round_begins(self.round)
        self._schedule()

    def _schedule(self) -> None:
        clock = self.session.clock
        if not self._steps:
            self._dealt_out = clock.now
            clock.after(POLL, self._await_end)
            return
        clock.after(pace(self._previous, self._steps[-1], self.rng), self._act)

    def _paused(self) -> bool:
        """The console shows trouble, the floorperson is at the table, or a refused tap waits
        to be tapped again (the dealer does not go on past it)."""
        session = self.session
        if session.supervisor.busy:
            return True
        if session.console.retaps:
            if self._retaps_since is None:
                self._retaps_since = session.clock.now
            if session.clock.now - self._retaps_since < RETAP_PATIENCE:
                return True
            session.console.retaps.clear()  # the table never caught up: the dealer goes on
        self._retaps_since = None
        since = session.console.trouble_since
        if since is None:
            self._noticed = None
            return False
        if self._noticed is None:
            self._noticed = since + self.rng.uniform(*REACTION)
        return session.clock.now >= self._noticed

    def _act(self) -> None:
        if not self._steps:  # the round was voided meanwhile
            self._schedule()
            return
        if self._paused() or self._waits_for_close():
            self.session.clock.after(POLL, self._act)
            return
        step = self._steps.pop()
        self.session.perform(step)
        self._previous = step
        self._schedule()

    def _waits_for_close(self) -> bool:
        """The dealer deals a card only once "No more bets" is answered (the console's
        contract, rule 6): while the console waits for the answer, so does the dealer."""
        round_ = self.round
        return (
            round_ is not None
            and self._steps[-1].kind == "card"
            and self.session.console.awaiting_close(round_.round_id)
        )

    def abandon(self) -> None:
        """The floorperson voided the round: its remaining cards are never dealt."""
        self._steps.clear()

    def _await_end(self) -> None:
        session, clock = self.session, self.session.clock
        if not self._paused() and session.console.round_over():
            self.played += 1
            session.round_ends()
            self._previous = None
            clock.after(self.rng.uniform(*BETWEEN_ROUNDS), self._next_round)
            return
        if clock.now - self._dealt_out > STUCK_AFTER and not session.supervisor.busy:
            self._dealt_out = clock.now
            session.supervisor.visit(stuck=True)
        clock.after(POLL, self._await_end)


class Supervisor:
    """The floorperson: comes when the console shows trouble, resolves it from the truth."""

    def __init__(self, session: Session, rng: random.Random) -> None:
        self.session = session
        self.rng = rng
        self.busy = False
        self.visits: dict[int, int] = {}  # truth round -> visits
        self.marker = 0  # the ledger's length at the last resolution
        self._due: float | None = None
        self._stuck = False
        self._unsure = False  # a card entry went unanswered

    def watch(self) -> None:
        """Looks at the console every second; comes some seconds after it shows trouble."""
        session = self.session
        since = session.console.trouble_since
        if since is None or self.busy:
            self._due = None
        elif self._due is None:
            self._due = since + self.rng.uniform(*ARRIVAL)
        elif session.clock.now >= self._due and session.daemon.up:
            self._due = None
            self.visit(stuck=False)
        if not session.dealer.finished:
            session.clock.after(1.0, self.watch)

    def visit(self, *, stuck: bool) -> None:
        self.busy, self._stuck = True, stuck
        round_id = self.session.current_round
        self.visits[round_id] = self.visits.get(round_id, 0) + 1
        self._status()

    def _status(self) -> None:
        self._request("status", {}, self._decide, resolves=False)

    def _request(
        self, command: str, body: dict[str, Any], then: Answered, *, resolves: bool = True
    ) -> None:
        session = self.session
        if resolves:
            session.supervised.add(session.current_round)
        request = session.console.tap(
            command, body, session.current_round, on_answer=then, retap=False
        )
        session.clock.after(60.0, lambda: self._abandoned(request))

    def _abandoned(self, request: Request) -> None:
        """Never answered: the floorperson walks away, and comes back if the console still
        shows trouble. A card entered without an answer may or may not be in: the round is
        then voided rather than the card entered twice."""
        if request.answer is None and self.busy:
            self.busy = False
            self._unsure = self._unsure or request.command == "card"

    def _decide(self, answer: dict[str, Any]) -> None:
        view = answer.get("data", {}).get("round")
        if answer["status"] != "ok" or view is None:
            self.busy = False
            return
        ledger = self.session.ledger
        if view["awaiting_card_entry"]:  # a burned card needs none: it went to the rack
            unread = next(
                (
                    c
                    for c in ledger[self.marker :]
                    if c.fate == "unreadable" and not c.entered and not c.card.burned
                ),
                None,
            )
            if unread is not None:
                self._enter(unread)
                return
        if view["doubt"] is not None:
            self._resolve(view)
        elif self._stuck and not _over(view):
            self._void()
        else:
            self.busy = False

    def _resolve(self, view: dict[str, Any]) -> None:
        """Enter what went by unread, set aside what is no round's, and confirm; void when
        entering or setting aside cannot put the cards where they were dealt."""
        session = self.session
        lost = [c for c in session.ledger[self.marker :] if c.fate == "lost" and not c.stray]
        lost = [c for c in lost if not c.entered]
        round_id = session.current_round
        session.note(f"FLOORPERSON doubt {view['doubt']}: lost {[(c.index, c.code) for c in lost]}")
        unsure, self._unsure = self._unsure, False
        discard, stray_behind = session.held_strays(view)
        if (
            unsure
            or stray_behind
            or self.visits.get(round_id, 0) > VISITS_BEFORE_VOID
            or not session.enterable(lost)
        ):
            self._void()
        elif lost and all(c.card.burned for c in lost):  # burns dealt while no one heard
            self._request("resume", {"burned": len(lost)}, self._resumed)
        elif lost:
            self._enter(lost[0])
        else:
            self._request("resume", {"discard": discard} if discard else {}, self._resumed)

    def _enter(self, card: PhysicalCard) -> None:
        def entered(answer: dict[str, Any]) -> None:
            if answer["status"] != "ok":
                self._void()
                return
            card.entered = True
            self._status()

        self._request("card", {"card": card.code}, entered)

    def _resumed(self, answer: dict[str, Any]) -> None:  # noqa: ARG002 - ok or not, it is done
        self.marker = len(self.session.ledger)
        self.busy = False

    def _void(self) -> None:
        self.session.note("FLOORPERSON voids the round")

        def voided(answer: dict[str, Any]) -> None:  # noqa: ARG001 - voided, or nothing to void
            self.marker = len(self.session.ledger)
            self.session.round_voided()
            self.busy = False

        self._request("void", {"reason": "the floorperson voided the round"}, voided)


def _over(view: dict[str, Any]) -> bool:
    round_ = view["round"]
    return round_ is None or round_["stage"] == "over"
