"""The dealer console's side of the request topics: the request that asks for a table event.

A request's command is the event's type and its body the event's record (rules.events)
without the type, which is exactly what the table service parses back with
`event_from_mapping` (docs/mqtt.md). The demo's simulated consoles, the tests and the
benchmarks all send their wagers and actions through this one mapping.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rules.events import CloseBetting, DealCard, PlaceWager, TableEvent, event_to_mapping

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence

__all__ = ["Layout", "console_request", "layout_request", "with_layouts"]


@dataclass(frozen=True, slots=True)
class Layout:
    """A window's wagers and its "No more bets", sent as one request (`layout_request`)."""

    wagers: tuple[PlaceWager, ...]

    @property
    def events(self) -> list[TableEvent]:
        """What the table makes of it: each wager in its order, then the close."""
        return [*self.wagers, CloseBetting()]


def console_request(event: TableEvent) -> tuple[str, dict[str, Any]]:
    """The command and JSON body (without a transaction) of the request for `event`.

    A card is not requested: the shoe deals it (the `card` command only enters a card the
    shoe could not read, and takes no burn flag).
    """
    if isinstance(event, DealCard):
        raise TypeError(f"a card comes from the shoe, not from a request: {event!r}")
    body = event_to_mapping(event)
    command = body.pop("type")
    assert isinstance(command, str)
    return command, body


def layout_request(wagers: Sequence[PlaceWager]) -> tuple[str, dict[str, Any]]:
    """The command and JSON body of a "No more bets" that carries the layout: the window's
    wagers as the dealer keyed them, placed and closed in one request, all or none."""
    layout = []
    for wager in wagers:
        body = event_to_mapping(wager)
        del body["type"]
        layout.append(body)
    return "close_betting", {"wagers": layout}


def with_layouts(events: Iterable[TableEvent]) -> Iterator[TableEvent | Layout]:
    """`events` as a console that sends layouts sends them: each window's wagers with the
    "No more bets" after them as one `Layout`, every other event as it is (wagers that no
    close follows, each alone)."""
    wagers: list[PlaceWager] = []
    for event in events:
        if isinstance(event, PlaceWager):
            wagers.append(event)
            continue
        if wagers and isinstance(event, CloseBetting):
            yield Layout(tuple(wagers))
        else:
            yield from wagers
            yield event
        wagers = []
    yield from wagers
