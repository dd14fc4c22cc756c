"""A table's custody of the shoe's cards: a card is placed only where its place is declared.

Two streams reach a table with no common clock: the shoe's line (cards, in the order the
dealer dealt them) and the dealer console's requests over MQTT (wagers, "No more bets",
each hand's decision). A card's place must follow from what the console declared and from
the order in which the shoe dealt, never from which stream happened to reach the PC first
(docs/rules.md, decision 15). So a card the engine cannot yet place as declared
(`TableEngine.awaiting`: no round, betting still open, no decision for the hand in play) is
kept, in the shoe's order, and placed the moment the declaration comes. Kept as well, until
the dealer console resolves them, are every card behind an unreadable one (until it is
entered) and every card after a doubt (decision 13).

`held` is the shoe's order: cards (`DealCard`), new shoes (`Shuffle`), and None for an
unreadable card waiting to be entered. Of the held items, the first `doubt_at` came before
the doubt began: they may still be placed, and a card the dealer enters for one that went
by unread goes there.

Sans-I/O and clockless: times are the journaled times it is given, so a replay keeps the
same cards in the same order and begins the same waits (decision D4).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from rules.cards import Card
from rules.engine import Awaiting
from rules.events import DealCard, Shuffle

if TYPE_CHECKING:
    from collections.abc import Mapping

# A card or a new shoe from the shoe, or None for an unreadable card.
Held = DealCard | Shuffle | None
# `next_ready` when nothing can be placed now (None is an unreadable card).
NOTHING_READY: Final = object()


@dataclass(frozen=True, slots=True)
class Wait:
    """The first held card waits for a declaration: since when, and for what."""

    number: int  # counts the table's waits: a timer names the wait it was set for
    since: str  # the journaled time the wait began
    awaiting: Awaiting


class Custody:
    """What one table holds back from the engine, and why."""

    def __init__(self) -> None:
        self.held: list[Held] = []
        self.doubt: str | None = None  # why cards are held for the dealer; None: sure of all
        self.doubt_at = 0
        self.wait: Wait | None = None
        self.waits = 0
        # A shoe that keeps nothing went unheard between rounds (the daemon restarted, its
        # link was down): the table's first message after it. A round opened by a request
        # from a console that had not seen that message may have missed its first cards.
        self.unheard: int | None = None

    @property
    def holding(self) -> bool:
        return bool(self.held) or self.doubt is not None

    @property
    def awaiting_entry(self) -> int:
        """Unreadable cards the dealer console must enter."""
        return self.held.count(None)

    @property
    def cards_held(self) -> int:
        return sum(1 for item in self.held if isinstance(item, DealCard))

    def hold(self, item: Held) -> None:
        self.held.append(item)

    def begin_doubt(self, reason: str, *, all_held: bool = False) -> bool:
        """From now on, nothing is placed until the dealer console resolves the doubt; with
        `all_held`, what is held already waits too. False if a doubt was already open."""
        if self.doubt is not None:
            return False
        self.doubt, self.doubt_at = reason, 0 if all_held else len(self.held)
        return True

    def resolve(self) -> None:
        """The dealer console confirmed: the held items go back to being placed as declared."""
        self.doubt, self.doubt_at = None, 0

    def drop(self) -> int:
        """Everything held goes nowhere (its round or shoe is over); the cards it dropped."""
        dropped = self.cards_held
        self.held.clear()
        self.doubt, self.doubt_at, self.wait = None, 0, None
        return dropped

    @property
    def leading_cards(self) -> int:
        """How many cards come first in custody, before anything else held."""
        count = 0
        for item in self.held:
            if not isinstance(item, DealCard):
                break
            count += 1
        return count

    def discard(self, count: object) -> bool:
        """The first `count` held cards belong to no round (the dealer set them aside): they
        are dropped. False, and nothing changes, unless `count` is a whole number of leading
        cards."""
        if isinstance(count, bool) or not isinstance(count, int):
            return False
        if not 0 <= count <= self.leading_cards:
            return False
        del self.held[:count]
        self.doubt_at = max(0, self.doubt_at - count)
        return True

    def next_ready(self, awaiting: Awaiting | None, *, live: bool) -> object:
        """The first held item if it can be placed now (taken off the list), else
        `NOTHING_READY`: an unreadable card waits to be entered, a doubt for the dealer, a
        card for its declaration, a new shoe for the round in play to end."""
        if not self.held or (self.doubt is not None and self.doubt_at == 0):
            return NOTHING_READY
        item = self.held[0]
        if item is None or (isinstance(item, DealCard) and awaiting is not None):
            return NOTHING_READY
        if isinstance(item, Shuffle) and live:
            return NOTHING_READY
        self.held.pop(0)
        self.doubt_at = max(0, self.doubt_at - 1)
        return item

    def enter(self, card: DealCard) -> bool:
        """A card the dealer entered by hand takes its place in the shoe's order: that of the
        oldest unreadable card before the doubt, else, while a doubt is open, the place of a
        card that went by unread (after what was held before the doubt, before the rest).
        False when nothing waits for an entry."""
        if self.held and self.held[0] is None and (self.doubt is None or self.doubt_at > 0):
            self.held[0] = card
            return True
        if self.doubt is None:
            return False
        self.held.insert(self.doubt_at, card)
        self.doubt_at += 1
        return True

    def follow_wait(self, awaiting: Awaiting | None, at: str) -> None:
        """After each event: the first held card waits for `awaiting` (a new wait when what
        it waits for changed), or no wait is running."""
        waiting = (
            awaiting is not None
            and self.doubt is None
            and bool(self.held)
            and isinstance(self.held[0], DealCard)
        )
        if not waiting:
            self.wait = None
        elif self.wait is None or self.wait.awaiting != awaiting:
            assert awaiting is not None
            self.waits += 1
            self.wait = Wait(self.waits, at, awaiting)

    # ---------------------------------------------------------------- checkpoints
    def state(self) -> dict[str, Any]:
        wait = self.wait
        return {
            "held": [_held_state(item) for item in self.held],
            "doubt": self.doubt,
            "doubt_at": self.doubt_at,
            "wait": None
            if wait is None
            else {"number": wait.number, "since": wait.since, **wait.awaiting.to_mapping()},
            "waits": self.waits,
            "unheard": self.unheard,
        }

    @classmethod
    def from_state(cls, data: Mapping[str, Any]) -> Custody:
        """From `state()`, or from a checkpoint written before declarations (only `held`,
        `doubt` and `doubt_at`); raises KeyError, TypeError or ValueError when malformed."""
        custody = cls()
        custody.held = [_held_from_state(item) for item in data["held"]]
        custody.doubt, custody.doubt_at = data["doubt"], int(data["doubt_at"])
        wait = data.get("wait")
        if wait is not None:
            awaiting = Awaiting(wait["declaration"], wait["seat"], wait["hand"])
            custody.wait = Wait(int(wait["number"]), str(wait["since"]), awaiting)
        custody.waits = int(data.get("waits", 0))
        unheard = data.get("unheard")
        custody.unheard = None if unheard is None else int(unheard)
        return custody


def _held_state(item: Held) -> dict[str, Any] | None:
    if item is None:
        return None
    if isinstance(item, Shuffle):
        return {"shuffle": True}
    return {"card": str(item.card), "burned": item.burned}


def _held_from_state(data: Mapping[str, Any] | None) -> Held:
    if data is None:
        return None
    if data.get("shuffle"):
        return Shuffle()
    return DealCard(Card.parse(data["card"]), burned=bool(data["burned"]))
