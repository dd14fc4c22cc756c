"""`shoe2mqtt watch`: the pit display in a terminal, built from the MQTT topics alone.

It knows nothing the broker does not tell it, which is the point: what it shows is what a
display at the pit podium shows (retained state and round snapshots first, then settlements
and notices as they come). A table is shown live only by the rule of daemon/availability.py:
its availability says `online` and so does the bridge state of the daemon it names. The
model is pure and tested by feeding it messages; `rich` draws it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import aiomqtt
from rich.console import Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from daemon.availability import Liveness
from daemon.cli.command import Command, broker_address, usage_error, write_config_errors
from daemon.cli.exit_codes import ExitCode
from daemon.mqtt.client import new_client

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import TextIO

    from rich.console import RenderableType

    from daemon.mqtt.settings import MqttSettings

KEEP = 8  # settlements and notices shown per table


@dataclass(slots=True)
class TableView:
    table: str
    game: str = "?"
    reader: dict[str, Any] = field(default_factory=dict)
    round: dict[str, Any] | None = None
    review: list[str] = field(default_factory=list)
    settlements: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=KEEP))
    notices: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=KEEP))
    seen_ids: deque[str] = field(default_factory=lambda: deque(maxlen=512))


@dataclass(slots=True)
class PitView:
    """Every table the broker told us about, keyed by table id."""

    base: str = "shoe2mqtt"
    only_table: str | None = None
    broker: str = "connecting"
    tables: dict[str, TableView] = field(default_factory=dict)
    liveness: Liveness = field(default_factory=Liveness)

    def apply(self, topic: str, payload: bytes) -> bool:
        """Take one message; True when the view changed."""
        route = self._route(topic)
        if route is None:
            return False
        match route:
            case ["bridge", node, "state"]:
                self.liveness.on_bridge_state(node, payload)
                return True
            case [table, "availability"]:
                self.tables.setdefault(table, TableView(table))
                self.liveness.on_availability(table, payload)
                return True
        body = _json_object(payload)
        if body is None:
            return False
        view = self.tables.setdefault(route[0], TableView(route[0]))
        event_id = body.get("id")
        if isinstance(event_id, str):
            if event_id in view.seen_ids:  # a QoS 1 resend: seen already
                return False
            view.seen_ids.append(event_id)
        return _apply_to_table(view, route[1:], body)

    def _route(self, topic: str) -> list[str] | None:
        """The topic's segments under the base, or None when it is none of ours."""
        parts = topic.split("/")
        base = self.base.split("/")
        rest = parts[len(base) :]
        if parts[: len(base)] != base or len(rest) < 2:
            return None
        if rest[0] != "bridge" and self.only_table and rest[0] != self.only_table:
            return None
        return rest


def _json_object(payload: bytes) -> dict[str, Any] | None:
    try:
        body = json.loads(payload)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    return body if isinstance(body, dict) else None


def _apply_to_table(view: TableView, rest: list[str], body: dict[str, Any]) -> bool:
    match rest:
        case ["state"]:
            view.game = str(body.get("game", view.game))
            view.reader = dict(body.get("reader") or {})
        case ["round"]:
            view.round = body.get("round")
            view.review = list(body.get("review") or [])
            view.settlements.clear()
            view.settlements.extend(body.get("settlements") or [])
            view.notices.clear()
            view.notices.extend(body.get("notices") or [])
        case ["settlement"]:
            view.settlements.append(body)
        case ["notice", _]:
            view.notices.append(body)
        case _:
            return False
    return True


# ---------------------------------------------------------------------- drawing
def render(pit: PitView) -> RenderableType:
    header = Text(f"shoe2mqtt  broker: {pit.broker}", style="bold")
    if not pit.tables:
        return Group(header, Text("waiting for tables…", style="dim"))
    return Group(
        header,
        *(render_table(view, pit.liveness) for _, view in sorted(pit.tables.items())),
    )


def render_table(view: TableView, liveness: Liveness) -> Panel:
    round_ = view.round or {}
    live = liveness.is_live(view.table)
    # Not live: what follows is the last the daemon said, and the title says so first.
    title = "" if live else f"OFFLINE: {liveness.describe(view.table)} · "
    title += f"{view.table} · {view.game} · reader {view.reader.get('link', '?')}"
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
    settled = Table(box=None, show_header=True, header_style="bold")
    for column in ("seat", "wager", "outcome", "result", "won"):
        settled.add_column(column)
    for item in list(view.settlements)[-KEEP:]:
        style = {"win": "green", "lose": "red", "push": "yellow"}.get(item.get("result", ""), "")
        settled.add_row(
            str(item.get("seat")),
            str(item.get("wager")),
            str(item.get("outcome")) + (" ★floor" if item.get("floorperson") else ""),
            Text(str(item.get("result")), style=style),
            str(item.get("won")),
        )
    notices = [
        Text(f"! {n.get('kind')}: {n.get('message')}", style="magenta")
        for n in list(view.notices)[-3:]
    ]
    return Panel(
        Group(
            Text(f"dealer: {dealer_cards}  ({_or_dash(dealer.get('total'))})"),
            seats,
            settled,
            *notices,
        ),
        title=title,
        title_align="left",
        border_style="" if live else "red",
    )


def _or_dash(value: object) -> str:
    return "—" if value is None else str(value)


# ---------------------------------------------------------------------- the loop
async def watch(
    client_factory: Callable[[], aiomqtt.Client],
    pit: PitView,
    on_change: Callable[[], None],
    *,
    retry: float = 2.0,
) -> None:
    """Subscribe and feed `pit` until cancelled; reconnect after a lost broker."""
    while True:
        try:
            async with client_factory() as client:
                await client.subscribe(f"{pit.base}/#", qos=1)
                pit.broker = "connected"
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
            pit.broker = "unreachable"
            on_change()
            await asyncio.sleep(retry)


async def run_watch(
    settings: MqttSettings, *, table: str | None, duration: float | None, out: TextIO | None = None
) -> None:
    """Draw the live view until Ctrl-C (or for `duration` seconds, then print it once)."""
    from rich.console import Console
    from rich.live import Live

    pit = PitView(settings.base_topic, table)
    identifier = f"shoe2mqtt-watch-{os.getpid()}"
    console = Console(file=out)
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
    where.add_argument("--config", type=Path, help="take the broker settings from this file")
    where.add_argument(
        "--broker", default="127.0.0.1:1883", help="HOST[:PORT] (default: 127.0.0.1:1883)"
    )
    cmd.add_argument("--base-topic", default="shoe2mqtt", help="with --broker (default: shoe2mqtt)")
    cmd.add_argument("--table", help="show only this table")
    cmd.add_argument("--duration", type=float, help="stop after this many seconds")


def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> ExitCode:
    from daemon.config import ConfigErrors, load_config
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
    name="watch",
    help="a live pit view of the tables, built from the MQTT topics alone",
    description="Show tables, seats, revealed cards, settlements and notices live, as a "
    "pit display would, from the broker's topics alone.",
    add_arguments=_add_arguments,
    run=_run,
)
