"""The `shoe2mqtt` command line."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from collections.abc import Callable

from daemon.cli import analyze, journal, listen
from daemon.replay import ReplayError, replay

EX_CONFIG = 78


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="shoe2mqtt",
        description="Card-reading blackjack shoe to MQTT, settling New Jersey bonus wagers.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    replay_cmd = commands.add_parser(
        "replay",
        help="run a round log through the rules core and print settlements and notices",
        description="Read a round log (JSON Lines, docs/events.md) and print every settlement "
        "and notice as JSON Lines, in the order they happen at the table.",
    )
    replay_cmd.add_argument("file", help="the round log, or - for standard input")
    replay_cmd.add_argument(
        "--all",
        dest="everything",
        action="store_true",
        help="print every output (cards, hands, round ends), not only settlements and notices",
    )
    run_cmd = commands.add_parser(
        "run",
        help="serve the configured tables: shoes in, settlements out over MQTT",
        description="Run the daemon: read every configured shoe, settle, publish over MQTT.",
    )
    run_cmd.add_argument(
        "--config",
        type=Path,
        default=Path("/etc/shoe2mqtt/shoe2mqtt.toml"),
        help="the configuration file (default: /etc/shoe2mqtt/shoe2mqtt.toml)",
    )
    check_cmd = commands.add_parser(
        "check-config",
        help="check a configuration file and name the line and field of each mistake",
    )
    check_cmd.add_argument("config", type=Path, help="the configuration file")
    watch_cmd = commands.add_parser(
        "watch",
        help="a live pit view of the tables, built from the MQTT topics alone",
        description="Show tables, seats, revealed cards, settlements and notices live, as a "
        "pit display would, from the broker's topics alone.",
    )
    where = watch_cmd.add_mutually_exclusive_group()
    where.add_argument("--config", type=Path, help="take the broker settings from this file")
    where.add_argument(
        "--broker", default="127.0.0.1:1883", help="HOST[:PORT] (default: 127.0.0.1:1883)"
    )
    watch_cmd.add_argument(
        "--base-topic", default="shoe2mqtt", help="with --broker (default: shoe2mqtt)"
    )
    watch_cmd.add_argument("--table", help="show only this table")
    watch_cmd.add_argument("--duration", type=float, help="stop after this many seconds")
    demo_cmd = commands.add_parser(
        "demo",
        help="a whole pit on this machine: broker, emulated shoes, daemon, players, live view",
        description="Start an embedded MQTT broker (unless --broker names one), an emulated "
        "shoe per table on a virtual serial port, the daemon, a table simulator that plays "
        "every hand by basic strategy through the request topics, and the live view.",
    )
    demo_cmd.add_argument("--rounds", type=int, help="stop after N rounds per table")
    demo_cmd.add_argument("--broker", help="HOST[:PORT] of a broker to use instead")
    demo_cmd.add_argument("--seed", type=int, help="deal the same shoes again")
    demo_cmd.add_argument("--pace", type=float, default=0.3, help="seconds per step (default 0.3)")
    demo_cmd.add_argument(
        "--no-view", dest="view", action="store_false", help="print settlements as JSON instead"
    )
    listen.register(commands)  # emulate, listen, ports
    journal.register(commands)  # journal list / show / export
    analyze.register(commands)  # analyze, simulate
    asyncapi_cmd = commands.add_parser(
        "asyncapi",
        help="print the AsyncAPI 3.0 document of every topic and payload",
        description="Print the AsyncAPI 3.0 document (JSON) of every MQTT topic and payload.",
    )
    asyncapi_cmd.add_argument(
        "--base-topic", default="shoe2mqtt", help="the base topic (default: shoe2mqtt)"
    )
    return parser


def _check_config(path: Path, out: TextIO, err: TextIO) -> int:
    from daemon.config import ConfigErrors, load_config

    try:
        config = load_config(path)
    except ConfigErrors as exc:
        err.writelines(f"{error}\n" for error in exc.errors)
        err.write(f"{len(exc.errors)} mistake(s) in {path}\n")
        return 1
    tables = ", ".join(
        f"{t.game.table_id} ({t.game.game.value}, {t.shoe.driver})" for t in config.tables
    )
    out.write(f"{path}: OK: broker {config.mqtt.host}:{config.mqtt.port}; tables: {tables}\n")
    return 0


def _run(path: Path, err: TextIO) -> int:
    from daemon.config import ConfigErrors, load_config
    from daemon.service import run_service

    try:
        config = load_config(path)
    except ConfigErrors as exc:
        err.writelines(f"{error}\n" for error in exc.errors)
        # sysexits' EX_CONFIG: the units list it in RestartPreventExitStatus=, because
        # restarting cannot mend a configuration file; a crash (exit 1) is restarted.
        return EX_CONFIG
    return run_service(config)


def _watch(args: argparse.Namespace, err: TextIO) -> int:
    import asyncio

    from daemon.cli.watch import run_watch
    from daemon.config import ConfigErrors, load_config
    from daemon.mqtt.errors import MqttSettingsError
    from daemon.mqtt.settings import MqttSettings

    try:
        if args.config is not None:
            settings = load_config(args.config).mqtt
        else:
            host, _, port = (
                args.broker.rpartition(":") if ":" in args.broker else (args.broker, "", "1883")
            )
            settings = MqttSettings(host=host, port=int(port), base_topic=args.base_topic)
    except ConfigErrors as exc:
        err.writelines(f"{error}\n" for error in exc.errors)
        return 1
    except (MqttSettingsError, ValueError) as exc:
        err.write(f"shoe2mqtt watch: {exc}\n")
        return 2
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how a person leaves the view
        asyncio.run(run_watch(settings, table=args.table, duration=args.duration))
    return 0


def _demo(args: argparse.Namespace) -> int:
    from daemon.cli.demo import demo_main

    return demo_main(
        rounds=args.rounds, broker=args.broker, seed=args.seed, pace=args.pace, view=args.view
    )


def _asyncapi(base_topic: str, out: TextIO) -> int:
    from daemon.asyncapi import build

    out.write(json.dumps(build(base=base_topic), indent=2) + "\n")
    return 0


def _replay(path: str, *, everything: bool, out: TextIO, err: TextIO) -> int:
    name = "<stdin>" if path == "-" else path
    try:
        # Closed in the finally below; a with-block cannot cover stdin and files alike.
        source = sys.stdin if path == "-" else Path(path).open(encoding="utf-8")  # noqa: SIM115
    except OSError as exc:
        err.write(f"shoe2mqtt replay: cannot read {name}: {exc.strerror}\n")
        return 2
    try:
        out.writelines(
            json.dumps(record, separators=(",", ":")) + "\n"
            for record in replay(source, everything=everything)
        )
    except ReplayError as exc:
        err.write(f"shoe2mqtt replay: {name}: {exc}\n")
        return 1
    finally:
        if source is not sys.stdin:
            source.close()
    return 0


_HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {
    "replay": lambda a: _replay(a.file, everything=a.everything, out=sys.stdout, err=sys.stderr),
    "run": lambda a: _run(a.config, sys.stderr),
    "check-config": lambda a: _check_config(a.config, sys.stdout, sys.stderr),
    "watch": lambda a: _watch(a, sys.stderr),
    "asyncapi": lambda a: _asyncapi(a.base_topic, sys.stdout),
    "demo": _demo,
}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # The tools (emulate, listen, ports) register their own handler with their parser.
    handler: Callable[[argparse.Namespace], int] = (
        getattr(args, "handler", None) or _HANDLERS[args.command]
    )
    return handler(args)
