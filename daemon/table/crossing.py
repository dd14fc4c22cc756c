"""A console request that crossed a card: applied where it changes nothing, or a doubt.

The dealer console says with each request what it had seen of the table (`seen`: the
highest `seq` of the table's messages it had received). A request sent before the console
saw a card the table has already placed may have crossed that card on the way: the dealer
may have declared it before dealing the card. The table tries it there, on a copy of the
round: from the engine's state when the round opened, every event of the round up to that
place, the request, then the cards after it (docs/rules.md, decision 15):

- refused there: it cannot have been meant there (the dealer declared it having seen the
  cards, which reach the console later than they reach the dealer's eyes): it is taken
  where it arrived, like any request;
- accepted there, and every card after it makes exactly the messages it made: its place
  does not matter, and it is taken where it arrived;
- accepted there, and a card after it would have made other messages: what was published
  may be wrong, so it is refused and the round becomes a doubt for the dealer console.

Only the round in progress is kept, and only what trying a request again needs: the
engine's state at the round's first event and each event with the first `seq` its messages
took and what the engine made of it (as plain data, as published before `review`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rules.engine_state import engine_state, restore_engine
from rules.errors import EventError
from rules.events import event_from_mapping, event_to_mapping

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from rules.config import TableConfig
    from rules.engine import TableEngine
    from rules.events import TableEvent
    from rules.outputs import Output


@dataclass(frozen=True, slots=True)
class RoundStep:
    """One event of the round in progress, as it was applied."""

    event: TableEvent
    from_shoe: bool  # a card the shoe dealt; else the console's own request
    first_seq: int  # the `seq` of the first message it caused
    outputs: tuple[dict[str, Any], ...]  # what the engine made of it, as plain data


@dataclass(frozen=True, slots=True)
class Placement:
    """A request tried before the cards it may have crossed."""

    crossed: int  # how many cards it may have crossed
    # Accepted there, and a card after it would have made other messages: a doubt.
    conflict: bool = False


class RoundHistory:
    """The events of the round in progress, enough to try a request again where it belongs."""

    def __init__(self) -> None:
        self.base: dict[str, Any] | None = None  # the engine's state before the round
        self.steps: list[RoundStep] = []

    def opening(self, engine: TableEngine) -> dict[str, Any] | None:
        """The engine's state before an event that may open a round (None in a round)."""
        return None if engine.round_open else engine_state(engine)

    def record(
        self,
        engine: TableEngine,
        before: dict[str, Any] | None,
        event: TableEvent,
        outputs: list[Output],
        *,
        from_shoe: bool,
        first_seq: int,
    ) -> None:
        """After `event` was applied: keep it while a round is open (`before`: from
        `opening`); forget the round once it is over."""
        if not engine.round_open:
            self.base, self.steps = None, []
            return
        if before is not None:  # it opened the round
            self.base, self.steps = before, []
        if self.base is None:
            return  # a round already open when this table's history began (an upgrade)
        mappings = tuple(output.to_mapping() for output in outputs)
        self.steps.append(RoundStep(event, from_shoe, first_seq, mappings))

    def crossed(self, seen: int | None) -> int:
        """Where a request sent having seen `seen` belongs: after every request of the round
        and every card whose messages the console had seen; `len(steps)` when it crossed
        nothing (or says nothing of what it had seen)."""
        steps = self.steps
        place = len(steps)
        if seen is None or self.base is None:
            return place
        while place > 0 and steps[place - 1].from_shoe and steps[place - 1].first_seq > seen:
            place -= 1
        return place

    def place(self, config: TableConfig, events: Sequence[TableEvent], at: int) -> Placement:
        """Try `events` (one request's: a layout's wagers and its "No more bets" go together)
        at index `at` of the round (< len(steps)) on a copy of it."""
        assert self.base is not None
        after = self.steps[at:]
        engine = restore_engine(config, self.base)
        for step in self.steps[:at]:
            engine.apply(step.event)
        try:
            for event in events:
                engine.apply(event)
        except EventError:
            return Placement(len(after))
        for step in after:
            try:
                again = engine.apply(step.event)
            except EventError:
                return Placement(len(after), conflict=True)
            if tuple(output.to_mapping() for output in again) != step.outputs:
                return Placement(len(after), conflict=True)
        return Placement(len(after))

    # ---------------------------------------------------------------- checkpoints
    def state(self) -> dict[str, Any]:
        return {
            "base": self.base,
            "steps": [
                {
                    "event": event_to_mapping(step.event),
                    "from_shoe": step.from_shoe,
                    "first_seq": step.first_seq,
                    "outputs": list(step.outputs),
                }
                for step in self.steps
            ],
        }

    @classmethod
    def from_state(cls, data: Mapping[str, Any] | None) -> RoundHistory:
        """From `state()`; a checkpoint without one starts with no history (a request that
        crossed a card in that round is then applied where it arrives, as before)."""
        history = cls()
        if data is None:
            return history
        history.base = data["base"]
        history.steps = [
            RoundStep(
                event_from_mapping(step["event"]),
                bool(step["from_shoe"]),
                int(step["first_seq"]),
                tuple(step["outputs"]),
            )
            for step in data["steps"]
        ]
        return history
