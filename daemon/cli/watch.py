"""`shoe2mqtt watch`: the pit display in a terminal, built from the MQTT topics alone.

It knows nothing the broker does not tell it, which is the point: it is the pit display's
own model (daemon/display/model.py), drawn by `rich` instead of a browser: retained state and
round snapshots first, then settlements and notices as they come; every settlement of the
round, in the order the rules made them; a table live only by the rule of
daemon/wire/availability.py (its availability and its daemon's bridge state both `online`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Final

import aiomqtt
from rich.console import Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from daemon.cli.command import Command, broker_address, usage_error, write_config_errors
from daemon.cli.exit_codes import ExitCode
from daemon.display.model import PitModel
from daemon.mqtt.client import new_client, subscribe

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import TextIO

    from rich.console import RenderableType

    from daemon.display.table_model import TableModel
    from daemon.mqtt.settings import MqttSettings


# ---------------------------------------------------------------------- drawing
def render(pit: PitModel) -> RenderableType:
    header = Text(f"shoe2mqtt  broker: {pit.broker}", style="bold")
    if not pit.tables:
        return Group(header, Text("waiting for tables…", style="dim"))
    return Group(header, *(render_table(pit, table) for _, table in sorted(pit.tables.items())))


def render_table(pit: PitModel, view: TableModel) -> Panel:
    round_ = view.round or {}
    live = pit.is_live(view.table)
    contested = pit.contested(view.table) is not None
    # Not live: what follows is the last the daemon said, and the title says so first; a
    # table two daemons claim is neither live nor OFFLINE, and the title names them.
    title = "" if live else f"{'CONTESTED' if contested else 'OFFLINE'}: "
    title += "" if live else f"{pit.availability(view.table)} · "
    title += f"{view.table} · {view.game or '?'} · reader {view.reader.get('link', '?')}"
    if round_:
        title += f" · round {round_.get('id')} ({round_.get('stage')})"
    if view.review:
        title += " · REVIEW: " + ", ".join(view.review)
    dealer = round_.get("dealer") or {}
    dealer_cards = " ".join("▒▒" if c is None else c for c in dealer.get("cards", [])) or "—"
    seats = Table(box=None, show_header=True, header_style="bold")
    for column in ("seat", "wagers", "hands"):
        seats.add_column(column)
    turn = round_.get("turn") or {}
    for seat in round_.get("seats", []):
        wagers = ", ".join(f"{k} {v}" for k, v in seat.get("wagers", {}).items())
        hands = "  ".join(
            f"{'▶' if turn == {'seat': seat['seat'], 'hand': h['hand']} else ''}"
            f"{' '.join(h['cards'])} ({h['total']}{', ' + h['ended'] if h.get('ended') else ''})"
            for h in seat.get("hands", [])
        )
        seats.add_row(str(seat["seat"]), wagers, hands)
    settled = _settled(view)
    # The round's latest notices, then the table's own (outside a round: a card refused
    # because no round is open, a reader restarted), so a table that refuses what it is
    # sent never looks merely idle.
    notices = [
        Text(f"! {n.get('kind')}: {n.get('message')}", style="magenta")
        for n in [*list(view.notices)[-3:], *list(view.table_notices)[-3:]]
    ]
    # What the pit display makes stand out (a journal that cannot be written, a reader
    # fault, cards held or awaiting entry, a floorperson), in the same words; the title has
    # said OFFLINE (or CONTESTED) and REVIEW already.
    alerts = [
        Text(f"{alert['label']}: {alert['text']}", style=_ALERT_STYLES.get(alert["class"], "bold"))
        for alert in pit.alerts(view.table)
        if alert["label"] not in _IN_THE_TITLE
    ]
    return Panel(
        Group(
            *alerts,
            Text(f"dealer: {dealer_cards}  ({_or_dash(dealer.get('total'))})"),
            seats,
            settled,
            *notices,
        ),
        title=title,
        title_align="left",
        border_style="" if live else ("yellow" if contested else "red"),
    )


_ALERT_STYLES: Final = {"fault": "bold red", "entry": "bold yellow", "review": "bold yellow"}
_IN_THE_TITLE: Final = frozenset({"OFFLINE", "CONTESTED", "REVIEW"})


def _settled(view: TableModel) -> Table:
    """The whole round's settlements, in the order the rules settled them."""
    settled = Table(box=None, show_header=True, header_style="bold")
    for column in ("seat", "wager", "outcome", "result", "won"):
        settled.add_column(column)
    for item in view.settlements:
        style = {"win": "green", "lose": "red", "push": "yellow"}.get(item.get("result", ""), "")
        settled.add_row(
            str(item.get("seat")),
            str(item.get("wager")),
            str(item.get("outcome")) + (" ★floor" if item.get("floorperson") else ""),
            Text(str(item.get("result")), style=style),
            str(item.get("won")),
        )
    return settled


def _or_dash(value: object) -> str:
    return "—" if value is None else str(value)


# ---------------------------------------------------------------------- the loop
async def watch(
    client_factory: Callable[[], aiomqtt.Client],
    pit: PitModel,
    on_change: Callable[[], None],
    *,
    retry: float = 2.0,
) -> None:
    """Subscribe and feed `pit` until cancelled; reconnect after a lost broker."""
    while True:
        try:
            async with client_factory() as client:
                await subscribe(client, [(f"{pit.base}/#", 1)])
                pit.broker_connected()
                on_change()
                async for message in client.messages:
                    payload = (
                        message.payload
                        if isinstance(message.payload, bytes)
                        else str(message.payload).encode()
                    )
                    if pit.apply(str(message.topic), payload):
                        on_change()
        except aiomqtt.MqttError:
            pit.broker_lost()
            on_change()
            await asyncio.sleep(retry)


async def run_watch(
    settings: MqttSettings, *, table: str | None, duration: float | None, out: TextIO | None = None
) -> None:
    """Draw the live view until Ctrl-C (or for `duration` seconds, then print it once)."""
    from rich.live import Live

    from daemon.cli.piped_console import PipedConsole

    pit = PitModel(settings.base_topic, table)
    identifier = f"shoe2mqtt-watch-{os.getpid()}"
    console = PipedConsole(file=out)
    with Live(render(pit), console=console, auto_refresh=False, transient=False) as live:

        def redraw() -> None:
            live.update(render(pit), refresh=True)

        try:
            async with asyncio.timeout(duration):
                # A display's client: the daemon's broker settings, its own id, no will.
                await watch(lambda: new_client(settings, identifier=identifier), pit, redraw)
        except TimeoutError:
            redraw()


# ---------------------------------------------------------------------- the command
def _add_arguments(cmd: argparse.ArgumentParser) -> None:
    where = cmd.add_mutually_exclusive_group()
    where.add_argument(
        "--config", type=Path, metavar="FILE", help="take the broker settings from this file"
    )
    where.add_argument(
        "--broker", default="127.0.0.1:1883", help="HOST[:PORT] (default: 127.0.0.1:1883)"
    )
    cmd.add_argument("--base-topic", default="shoe2mqtt", help="with --broker (default: shoe2mqtt)")
    cmd.add_argument("--table", help="show only this table")
    cmd.add_argument("--duration", type=float, help="stop after this many seconds")


def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> ExitCode:
    from daemon.configuration.file import ConfigErrors
    from daemon.configuration.service_config import load_config
    from daemon.mqtt.errors import MqttSettingsError
    from daemon.mqtt.settings import MqttSettings

    try:
        if args.config is not None:
            settings = load_config(args.config).mqtt
        else:
            host, port = broker_address(args.broker)
            settings = MqttSettings(host=host, port=port, base_topic=args.base_topic)
    except ConfigErrors as exc:
        write_config_errors(err, exc)
        return ExitCode.FAILURE
    except (MqttSettingsError, ValueError) as exc:
        return usage_error(err, "watch", exc)
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how a person leaves the view
        asyncio.run(run_watch(settings, table=args.table, duration=args.duration, out=out))
    return ExitCode.OK


COMMAND: Final = Command(
    description="Show tables, seats, revealed cards, settlements and notices live, as a "
    "pit display would, from the broker's topics alone.",
    add_arguments=_add_arguments,
    run=_run,
)
