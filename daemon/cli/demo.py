"""`shoe2mqtt demo`: a whole pit on one machine, from nothing but Python.

An embedded MQTT broker (amqtt, unless `--broker` names one), one emulated shoe per table on
a virtual serial port, the real daemon reading those ports exactly as it reads a real shoe,
a table simulator per table that places wagers and plays every hand by basic strategy
through the request topics, and the live pit view. Runs until Ctrl-C or `--rounds N`.

The console simulator (`daemon.simulator`, the one the tests and the benchmarks play with) is
the dealer and the players: it places the wagers of a round, has the shoe deal a card whenever
the round needs one, and decides each hand from the round snapshot it reads back from the
broker, so every step takes the same path a real table's would.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import functools
import random
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

import structlog

from daemon.cli.command import Command, broker_address, usage_error
from daemon.cli.exit_codes import ExitCode
from daemon.cli.loopback import LOOPBACK, free_port
from daemon.cli.output import counted
from daemon.configuration.service_config import (
    LoggingConfig,
    MetricsConfig,
    ServiceConfig,
    ShoeConfig,
    TableSetup,
)
from daemon.display.config import DisplayConfig, DisplaySettings
from daemon.mqtt.client import new_client, subscribe
from daemon.mqtt.settings import MqttSettings
from daemon.request_gate import AUTOMATED_CONSOLE
from daemon.service import Daemon
from daemon.simulator.pit import SimulatedPit
from daemon.simulator.tables import DEMO_TABLES, demo_shoe
from daemon.wire.topics import Topics
from drivers.emulator import EmulatedShoe
from drivers.transports import SerialSettings
from rules.config import TableConfig

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable
    from typing import TextIO

    import aiomqtt
    from rich.console import Console

    from daemon.display.service import RunningDisplay
    from rules.games import Game


log = structlog.get_logger("demo")

STEP_TIMEOUT = 10.0  # seconds to wait for the daemon's answer to one step of a round


@contextlib.asynccontextmanager
async def embedded_broker(port: int) -> AsyncIterator[None]:
    """amqtt on 127.0.0.1:`port` for the demo: anonymous, in memory, gone when we stop."""
    from amqtt.broker import Broker

    broker = Broker(
        {
            "listeners": {"default": {"type": "tcp", "bind": f"{LOOPBACK}:{port}"}},
            "plugins": {
                "amqtt.plugins.authentication.AnonymousAuthPlugin": {"allow_anonymous": True}
            },
        }
    )
    await broker.start()
    try:
        yield
    finally:
        await broker.shutdown()


def demo_config(
    games: list[Game],
    shoes: dict[str, EmulatedShoe],
    host: str,
    port: int,
    *,
    metrics_port: int | None = None,
) -> ServiceConfig:
    tables = []
    for game in games:
        settings = TableConfig.from_mapping(DEMO_TABLES[game])
        shoe = ShoeConfig(
            "reference", SerialSettings(port=shoes[settings.table_id].path, baudrate=9600)
        )
        tables.append(TableSetup(settings, shoe))
    return ServiceConfig(
        path=Path("<demo>"),
        mqtt=MqttSettings(host=host, port=port, node="demo"),
        tables=tuple(tables),
        logging=LoggingConfig(format="console", level="warning"),
        metrics=MetricsConfig(enabled=metrics_port is not None, port=metrics_port or 0),
        # The players are programs: at --step-delay 0 they play as fast as the daemon answers.
        requests=AUTOMATED_CONSOLE,
    )


@dataclass(frozen=True, slots=True)
class DemoResult:
    rounds: dict[str, int]
    settlements: dict[str, int]
    refused: dict[str, int]  # requests the daemon refused, per table


async def run_demo(  # noqa: PLR0913 - keywords only: what the demo runs and where it shows it
    *,
    rounds: int | None,
    games: list[Game] | None = None,
    broker: tuple[str, int] | None = None,
    seed: int | None = None,
    step_delay: float = 0.0,
    on_view: Callable[[str, bytes], None] | None = None,
    display_port: int | None = None,
    on_display: Callable[[str], None] | None = None,
    metrics_port: int | None = None,
) -> DemoResult:
    """Run the pit; returns when every table has played `rounds` rounds (or on cancel).

    With `display_port`, the pit display serves its pages there too (on 127.0.0.1), and
    `on_display` is told its address once it does. With `metrics_port`, the daemon serves
    its Prometheus metrics on 127.0.0.1 at that port.
    """
    games = games or list(DEMO_TABLES)
    rng = random.Random(seed)  # noqa: S311 - a demo's dealing, not a secret
    async with contextlib.AsyncExitStack() as stack:
        if broker is None:
            host, port = LOOPBACK, free_port()
            await stack.enter_async_context(embedded_broker(port))
        else:
            host, port = broker
        shoes = await _open_shoes(stack, games, rng)
        state = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="shoe2mqtt-demo-")))
        config = dataclasses.replace(
            demo_config(games, shoes, host, port, metrics_port=metrics_port),
            state_directory=state,
        )
        display: RunningDisplay | None = None
        pit = SimulatedPit.of(
            Topics(config.mqtt.base_topic),
            [
                (setup.table, shoes[setup.table.table_id], random.Random(rng.random()))  # noqa: S311 - a demo's players, not a secret
                for setup in config.tables
            ],
            step_delay,
        )
        if display_port is not None:
            # The web server is loaded only for a demo that shows the display.
            from daemon.display.service import running_display

            display = await stack.enter_async_context(
                running_display(_display_config(config, display_port))
            )
            if on_display is not None:
                on_display(display.url)
        await _play(config, shoes, pit, rounds, on_view, display)
    return DemoResult(pit.rounds, pit.settlements, pit.refused)


async def _open_shoes(
    stack: contextlib.AsyncExitStack, games: list[Game], rng: random.Random
) -> dict[str, EmulatedShoe]:
    """An emulated shoe per table on its own virtual serial port, open until `stack` closes."""
    shoes: dict[str, EmulatedShoe] = {}
    for game in games:
        settings = demo_shoe(game, rng.randrange(2**32))
        shoes[DEMO_TABLES[game]["id"]] = await stack.enter_async_context(EmulatedShoe(settings))
    return shoes


async def _play(
    config: ServiceConfig,
    shoes: dict[str, EmulatedShoe],
    pit: SimulatedPit,
    rounds: int | None,
    on_view: Callable[[str, bytes], None] | None,
    display: RunningDisplay | None,
) -> None:
    """Run the daemon, and every table's simulator against it until each has played.

    Ctrl-C (or SIGTERM) stops the daemon, which handles those signals itself; the tables
    then stop with it, and the demo ends as if their rounds were done.
    """
    daemon = Daemon(config)
    async with asyncio.TaskGroup() as group:
        service = group.create_task(daemon.run(), name="daemon")
        following = None
        if display is not None:
            following = group.create_task(display.follow(), name="display-broker")
        async with new_client(config.mqtt, identifier="shoe2mqtt-demo-tables") as client:
            await subscribe(client, [(f"{config.mqtt.base_topic}/#", 1)])
            listener = group.create_task(_listen(client, pit, on_view), name="demo-listener")
            for shoe in shoes.values():
                await asyncio.wait_for(shoe.wait_for_host(), STEP_TIMEOUT)
            playing = group.create_task(pit.play(client, rounds), name="demo-tables")
            await asyncio.wait([service, playing], return_when=asyncio.FIRST_COMPLETED)
            playing.cancel()  # done, or the daemon was stopped: nobody deals any more
            listener.cancel()
        daemon.stop()
        await service
        if following is not None:
            following.cancel()


def _display_config(config: ServiceConfig, port: int) -> DisplayConfig:
    """The pit display of the demo: on this machine only, as its own client."""
    mqtt = dataclasses.replace(config.mqtt, client_id="shoe2mqtt-demo-display")
    return DisplayConfig(
        config.path, mqtt, DisplaySettings(port=port, title="shoe2mqtt demo"), "console", "warning"
    )


async def _listen(
    client: aiomqtt.Client, pit: SimulatedPit, on_view: Callable[[str, bytes], None] | None
) -> None:
    async for message in client.messages:
        payload = (
            message.payload if isinstance(message.payload, bytes) else str(message.payload).encode()
        )
        topic = str(message.topic)
        if on_view is not None:
            on_view(topic, payload)
        pit.take(topic, payload)


# ---------------------------------------------------------------------- the command
def _add_arguments(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("--rounds", type=int, help="stop after N rounds per table")
    cmd.add_argument("--broker", help="HOST[:PORT] of a broker to use instead")
    cmd.add_argument("--seed", type=int, help="deal the same shoes again")
    cmd.add_argument(
        "--step-delay",
        type=float,
        default=0.3,
        metavar="SECONDS",
        help="a pause after each step of a round, so a person can follow the view "
        "(default 0.3; 0: as fast as the daemon answers)",
    )
    # The old name of --step-delay, which `emulate` uses for cards a second: one meaning per
    # option name across the commands.
    cmd.add_argument("--pace", type=float, dest="old_step_delay", help=argparse.SUPPRESS)
    cmd.add_argument(
        "--no-view",
        dest="view",
        action="store_false",
        help="print settlements as JSON Lines instead",
    )
    shown = cmd.add_mutually_exclusive_group()
    shown.add_argument(
        "--display-port",
        type=int,
        help="serve the pit display on 127.0.0.1 at this port (default: a free one; the "
        "address is printed)",
    )
    shown.add_argument(
        "--no-display", dest="display", action="store_false", help="do not serve the pit display"
    )
    cmd.add_argument(
        "--metrics-port",
        type=int,
        metavar="PORT",
        help="serve the daemon's Prometheus metrics on 127.0.0.1 at this port "
        "(http://127.0.0.1:PORT/metrics)",
    )


def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> ExitCode:
    """The pit with the live view (or settlements as JSON Lines), until Ctrl-C or --rounds."""
    from daemon.cli.piped_console import PipedConsole
    from daemon.system import logs

    try:
        address = None if args.broker is None else broker_address(args.broker)
    except ValueError as exc:
        return usage_error(err, "demo", f"--broker={args.broker!r}: {exc}")
    if args.metrics_port is not None and not 1 <= args.metrics_port <= 65535:
        return usage_error(err, "demo", f"--metrics-port={args.metrics_port}: not a TCP port")
    logs.configure(fmt="console", level="warning")
    console = PipedConsole(file=out)
    # With --no-view, standard output is JSON Lines and nothing else (for `jq`): what the
    # demo says about itself (addresses, the summary) goes to standard error.
    said = console if args.view else PipedConsole(file=err)
    if args.metrics_port is not None:
        endpoint = f"http://{LOOPBACK}:{args.metrics_port}/metrics"
        said.print(f"metrics: {endpoint}", highlight=False, soft_wrap=True)
    demo = functools.partial(
        run_demo,
        rounds=args.rounds,
        broker=address,
        seed=args.seed,
        step_delay=step_delay(args, err),
        display_port=(args.display_port or free_port()) if args.display else None,
        metrics_port=args.metrics_port,
        on_display=lambda url: said.print(
            f"pit display: {url}  (one table: {url}table/<id>)", highlight=False, soft_wrap=True
        ),
    )
    try:
        result = asyncio.run(_in_view(demo, console) if args.view else _as_json(demo, console))
    except KeyboardInterrupt:
        return ExitCode.OK
    summary = ", ".join(
        f"{t}: {counted(result.rounds[t], 'round')}, {counted(result.settlements[t], 'settlement')}"
        for t in result.rounds
    )
    said.print(f"demo finished: {summary}", highlight=False, soft_wrap=True)
    return ExitCode.OK


def step_delay(args: argparse.Namespace, err: TextIO) -> float:
    """--step-delay, or its old name --pace with a line that says it is old."""
    if args.old_step_delay is None:
        delay: float = args.step_delay
        return delay
    err.write(
        "shoe2mqtt demo: --pace is now called --step-delay (seconds after each step; "
        "emulate's --pace is cards a second); the old name still works\n"
    )
    old: float = args.old_step_delay
    return old


async def _in_view(demo: Callable[..., Awaitable[DemoResult]], console: Console) -> DemoResult:
    """The demo drawn as `shoe2mqtt watch` draws it, from every message the players see."""
    from rich.live import Live

    from daemon.cli.watch import render
    from daemon.display.model import PitModel

    pit = PitModel()
    with Live(render(pit), console=console, auto_refresh=False) as live:

        def redraw(topic: str, payload: bytes) -> None:
            # The view's messages come through the demo's own client: the first one shows it
            # connected (and before it the model knows nothing that a fresh connection drops).
            if pit.broker != "connected":
                pit.broker_connected()
            if pit.apply(topic, payload):
                live.update(render(pit), refresh=True)

        result = await demo(on_view=redraw)
    if not console.is_terminal:
        # Off a terminal Live leaves its last frame without a line's end, and the summary
        # that follows (on the other stream, often the same file) ran into it.
        console.line()
    return result


async def _as_json(demo: Callable[..., Awaitable[DemoResult]], console: Console) -> DemoResult:
    """The demo's settlements as JSON Lines, one a line as they are published (for `jq`)."""

    def show_settlement(topic: str, payload: bytes) -> None:
        if topic.endswith("/settlement"):
            console.out(payload.decode(), highlight=False)  # as sent: no markup, no wrapping

    return await demo(on_view=show_settlement)


COMMAND: Final = Command(
    description="Start an embedded MQTT broker (unless --broker names one), an emulated "
    "shoe per table on a virtual serial port, the daemon, a table simulator that plays "
    "every hand by basic strategy through the request topics, the live view, and the pit "
    "display (a web page; its address is printed).",
    add_arguments=_add_arguments,
    run=_run,
)
