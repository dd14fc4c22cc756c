"""What a committed event caused reaches the publisher before the daemon counts it, before
the shoe's frame is acknowledged and before the settlements' lines are logged.

At a round's end the commit also counts the round into the shift's numbers (their bands
solved), may take a checkpoint and makes the round state: milliseconds that the round's
settlement, already in the outbox, must not wait behind (docs/performance.md, "The pit's
message before what is derived"). The daemon here is the real one, its journal a real file,
run step by step (tests/daemon/test_shoe_line.py); the publisher is played by a sender
registered with the outbox as the connected link's is (daemon.mqtt.drain).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from daemon.parts.items import RequestItem, ShoeItem
from drivers import events as shoe
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


async def test_a_settlement_is_with_the_publisher_before_the_shoe_is_acknowledged_and_logged(
    tmp_path: Path,
) -> None:
    async with started(tmp_path, "reference") as (daemon, table):
        order: list[str] = []
        write_lines = table.service.write_held_lines

        def wrote_lines() -> None:
            held = [event for event, _ in table.service.held_lines]
            if held:
                order.append(", ".join(held))
            write_lines()

        table.service.write_held_lines = wrote_lines  # type: ignore[method-assign]

        async def acknowledged(frame: bytes) -> None:
            order.append("acknowledged" if frame else "nothing to acknowledge")

        table.driver.deliver = acknowledged  # type: ignore[method-assign]
        numbers = daemon.commits.on_applied
        assert numbers is not None

        def counted(table_id: str, applied: Applied, settings: TableConfig) -> None:
            order.append("numbers")
            numbers(table_id, applied, settings)

        daemon.commits.on_applied = counted
        make_state = daemon.commits.round_states.applied

        def made_state(table_id: str, service: TableService, now: float) -> None:
            order.append("round state")
            make_state(table_id, service, now)

        daemon.commits.round_states.applied = made_state  # type: ignore[method-assign]
        daemon.outbox.send_with(lambda: order.append("sent"))
        try:
            for command, body in (
                ("wager", b'{"seat": 1, "kind": "blackjack", "amount": "25"}'),
                ("wager", b'{"seat": 1, "kind": "twenty_point_bonus", "amount": "10"}'),
                ("close_betting", b"{}"),
            ):
                await daemon.commits.take(table, RequestItem(command, body))
            # Seat 1: KD KH (any 20, paid at once); the dealer's 7S up, QH down.
            for seq, code in enumerate(("KD", "7S", "KH", "QH"), start=1):
                order.append(code)
                card = shoe.CardDrawn(code[:-1], code[-1], seq)  # type: ignore[arg-type]
                await daemon.commits.take(table, ShoeItem(card))
            # The card that settles: its messages, then the line, and the shoe's
            # acknowledgement last (decisions P13, P14).
            settling = order[order.index("QH") + 1 :]
            assert settling[:4] == ["sent", "table.settled", "numbers", "round state"], order
            assert settling[-1] == "acknowledged", order
            assert settling.count("acknowledged") == 1, order
        finally:
            daemon.outbox.send_with(None)
