"""The display's broker connection: subscribe as the read-only display user, feed the model.

Subscribes to what a display may read and needs (docs/mosquitto/acl): the daemons' bridge
states, each table's availability, state, round state, round events, settlements and
notices. Never a request topic: a display cannot move money, and a hand-entered hole card
travels there. It never publishes and sets no will. A lost broker is retried with the
daemon's backoff; each new connection replaces what the display knew of availability with
what the retained messages say now (PitModel.broker_connected).

The pages are woken once for the messages that arrived together, when the last of them is
taken, not once each: a round's end is some thirty messages within 2 ms (its settlements,
its events, its state, the shift's numbers), and waking the pages for each had every page
stream build, send and draw the table thirty times while the settlements waited their turn.
A flood that never lets the queue empty still wakes them every `WAKE_EVERY` changes.
"""

from __future__ import annotations

import asyncio
import random
from typing import TYPE_CHECKING, Final, NoReturn

import aiomqtt
import structlog

from daemon.mqtt.client import connected, new_client, raise_if_cancelled, subscribe
from daemon.mqtt.paho_hooks import write_without_waking
from daemon.mqtt.paho_socket import batch_socket_io
from daemon.wire.topics import Topics
from drivers.backoff import Backoff

if TYPE_CHECKING:
    from collections.abc import Callable

    from daemon.display.model import PitModel
    from daemon.mqtt.settings import MqttSettings

log = structlog.get_logger("display")

WAKE_EVERY: Final = 64  # changes taken at most before the pages are woken, queue empty or not


def display_filters(base: str, only_table: str | None = None) -> list[str]:
    """The topic filters the display subscribes to, each within the display user's ACL."""
    topics = Topics(base)
    table = "+" if only_table is None else only_table
    return [
        topics.bridge_state_filter,
        topics.availability(table),
        topics.journal_state(table),
        topics.stats(table),
        topics.days(table),
        topics.table_state(table),
        topics.round_snapshot(table),
        topics.event(table, "+"),  # followed after the round state (display/following.py)
        topics.settlement(table),
        topics.notice(table, "#"),
    ]


async def follow_broker(
    settings: MqttSettings,
    model: PitModel,
    on_change: Callable[[], None],
    *,
    rng: random.Random | None = None,
) -> NoReturn:
    """Keep `model` up to date from the broker until cancelled, reconnecting for ever."""
    backoff = Backoff(settings.reconnect, rng or random.Random())  # noqa: S311 - jitter
    filters = display_filters(model.base, model.only_table)
    while True:
        try:
            async with connected(new_client(settings)) as client:
                # What the broker sent together is read in one `recv` and queued together
                # (and the acknowledgements written in one `send`), so a burst is taken,
                # and the pages woken, at once.
                write_without_waking(client)
                batch_socket_io(client)
                await subscribe(client, [(topic_filter, 1) for topic_filter in filters])
                model.broker_connected()
                on_change()
                backoff.reset()
                log.info("display.broker_connected", host=settings.host, port=settings.port)
                unseen = 0  # changes taken since the pages were last woken
                async for message in client.messages:
                    payload = message.payload
                    if isinstance(payload, bytes) and model.apply(message.topic.value, payload):
                        unseen += 1
                    if unseen and (len(client.messages) == 0 or unseen >= WAKE_EVERY):
                        on_change()
                        unseen = 0
        except aiomqtt.MqttError as exc:
            reason = str(exc) or type(exc).__name__
        else:  # the iteration ended without an error: the client closed
            reason = "closed"
        # A stop may have been swallowed by aiomqtt on the way out (see raise_if_cancelled).
        raise_if_cancelled()
        model.broker_lost()
        on_change()
        delay = backoff.next_delay()
        log.warning("display.broker_lost", reason=reason, retry_in=round(delay, 1))
        await asyncio.sleep(delay)
