"""What a committed event caused reaches the publisher before the daemon counts it.

At a round's end the commit also counts the round into the shift's numbers (their bands
solved), may take a checkpoint and makes the round state: milliseconds that the round's
settlement, already in the outbox, must not wait behind (docs/performance.md, "The pit's
message before what is derived"). The daemon here is the real one, its journal a real file,
run step by step (tests/daemon/test_shoe_line.py); the publisher is played by a sender
registered with the outbox as the connected link's is (daemon.mqtt.drain).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from daemon.parts.items import RequestItem
from tests.daemon.test_shoe_line import started

if TYPE_CHECKING:
    from pathlib import Path

    from daemon.table.runner import Applied
    from daemon.table.service import TableService
    from rules.config import TableConfig


async def test_the_publisher_runs_before_the_numbers_and_the_round_state(tmp_path: Path) -> None:
    async with started(tmp_path, "reference") as (daemon, table):
        order: list[str] = []
        numbers = daemon.commits.on_applied
        assert numbers is not None  # the daemon counts its tables' shifts

        def counted(table_id: str, applied: Applied, settings: TableConfig) -> None:
            order.append("numbers")
            numbers(table_id, applied, settings)

        daemon.commits.on_applied = counted
        round_states = daemon.commits.round_states
        make_state = round_states.applied

        def made_state(table_id: str, service: TableService, now: float) -> None:
            order.append("round state")
            make_state(table_id, service, now)

        round_states.applied = made_state  # type: ignore[method-assign]
        daemon.outbox.send_with(lambda: order.append(f"sent, {len(daemon.outbox)} waiting"))
        try:
            waiting = len(daemon.outbox)
            await daemon.commits.take(table, RequestItem("shuffle", b"{}"))
            caused = len(daemon.outbox) - waiting
            assert caused > 0
            # Sent at once, with everything it caused, before the table counts it.
            assert order == [f"sent, {waiting + caused} waiting", "numbers", "round state"]
        finally:
            daemon.outbox.send_with(None)
