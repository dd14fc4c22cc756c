"""The example ACL's console users (docs/mosquitto/acl) read what `shoe2mqtt console` shows of
their own table, nothing of another table, never a request; and command their table alone.

The daemon's user publishes each topic (retained, so a late subscriber has it), the console
user subscribes to everything it could want, and the test reads what the broker delivered.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import TYPE_CHECKING

from daemon.dealer_console.link import console_filters
from tests.security.conftest import BASE, CONSOLE_1, DAEMON, NODE

if TYPE_CHECKING:
    import aiomqtt

    from tests.security.conftest import SecureBroker

# What the console shows of a table, each a topic the daemon publishes retained or not.
SHOWN = (
    "round",
    "event/card_dealt",
    "state",
    "availability",
    "journal",
    "settlement",
    "notice/card_unreadable",
)


async def _delivered(client: aiomqtt.Client, seconds: float) -> list[str]:
    topics: list[str] = []
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            async for message in client.messages:
                topics.append(message.topic.value)  # noqa: PERF401 - kept when cancelled
    return topics


async def test_a_console_reads_its_own_table_and_nothing_else(
    secure_broker: SecureBroker,
) -> None:
    async with (
        secure_broker.client(DAEMON) as daemon,
        secure_broker.client(CONSOLE_1) as console,
    ):
        # Everything the console subscribes to, for both tables, and the requests it sends.
        filters = {*console_filters(BASE, "bj-1"), *console_filters(BASE, "bj-2")}
        filters |= {f"{BASE}/bj-1/request/#", f"{BASE}/#"}
        await console.subscribe([(f, 1) for f in sorted(filters)])
        await daemon.publish(f"{BASE}/bridge/{NODE}/state", b"online", qos=1, retain=True)
        for table in ("bj-1", "bj-2"):
            for suffix in SHOWN:
                body = json.dumps({"seq": 1, "table": table}).encode()
                await daemon.publish(f"{BASE}/{table}/{suffix}", body, qos=1)
            await daemon.publish(f"{BASE}/{table}/response/wager", b"{}", qos=1)
        await console.publish(f"{BASE}/bj-1/request/status", b"{}", qos=1)
        await console.publish(f"{BASE}/bj-2/request/status", b"{}", qos=1)
        delivered = await _delivered(console, 0.5)
    expected = {f"{BASE}/bj-1/{suffix}" for suffix in (*SHOWN, "response/wager")}
    assert set(delivered) == {*expected, f"{BASE}/bridge/{NODE}/state"}
    denied = [line for line in secure_broker.log().splitlines() if "Denied PUBLISH" in line]
    assert len(denied) == 1, denied  # its own table's request went through
    assert f"from {CONSOLE_1} " in denied[0]
    assert f"'{BASE}/bj-2/request/status'" in denied[0]
