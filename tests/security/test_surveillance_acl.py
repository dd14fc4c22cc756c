"""The surveillance topics, against the shipped broker example: only the surveillance user
reads them. A foreign card may be the dealer's hole card, and a seat's evidence of advantage
play is for the surveillance room to weigh: never the pit display, an engineer's watch, or a
dealer's console (docs/mosquitto/acl)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from daemon.testing import STEP_TIMEOUT
from daemon.wire.topics import Topics
from tests.security.conftest import (
    BASE,
    CONSOLE_1,
    DAEMON,
    DISPLAY,
    SURVEILLANCE,
    WATCH,
    SecureBroker,
)

if TYPE_CHECKING:
    import aiomqtt

SPY_FILTERS = ("#", f"{BASE}/#", f"{BASE}/+/surveillance/#", f"{BASE}/bj-1/surveillance/+")
READERS = (DISPLAY, WATCH, CONSOLE_1, SURVEILLANCE)


async def _until_barrier(client: aiomqtt.Client, barrier: str) -> list[str]:
    """The topics a client received, up to and with the barrier (published last)."""
    topics: list[str] = []
    async with asyncio.timeout(STEP_TIMEOUT):
        async for message in client.messages:
            topics.append(message.topic.value)
            if message.topic.value == barrier:
                return topics
    return topics  # not reached: the timeout raises first


async def test_only_the_surveillance_user_reads_the_surveillance_topics(
    secure_broker: SecureBroker,
) -> None:
    topics = Topics(BASE)
    secret = [topics.surveillance("bj-1", kind) for kind in ("foreign_card", "shoe_ended")]
    barrier = topics.round_snapshot("bj-1")  # every reader here may read the round
    async with contextlib.AsyncExitStack() as stack:
        daemon = await stack.enter_async_context(secure_broker.client(DAEMON))
        readers = {
            user: await stack.enter_async_context(secure_broker.client(user)) for user in READERS
        }
        for client in readers.values():
            # mosquitto 2.0's acl_file grants every subscription; what it delivers is the test.
            await client.subscribe([(topic_filter, 1) for topic_filter in SPY_FILTERS])
        for topic in secret:
            await daemon.publish(topic, b'{"card": "QH"}', qos=1)
        await daemon.publish(barrier, b"{}", qos=1)
        received = {user: await _until_barrier(client, barrier) for user, client in readers.items()}
    for user in (DISPLAY, WATCH, CONSOLE_1):
        assert [t for t in received[user] if "/surveillance/" in t] == [], user
        assert received[user][-1] == barrier  # it was listening, and the barrier came last
    assert set(secret) <= set(received[SURVEILLANCE])
    assert f"Denied PUBLISH from {DAEMON}" not in secure_broker.log()  # the daemon may write
