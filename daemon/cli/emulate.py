"""`shoe2mqtt emulate`: a shoe on a virtual serial port, in front of a dealer.

It deals nothing until a host has the port open (`--deal-without-host` deals regardless,
for fault tests), then deals at `--pace` (0: as fast as the host takes the cards), or, with
`--step`, one card each time Enter is pressed: a person deals, at the pace of the game. At the end
of a `--cards` script it waits until the host has taken every frame (reference protocol:
acknowledged it; ENQ: read it), then stays plugged in until Ctrl-C, as a shoe stays on the
table, or exits with `--exit-at-end`. The first lines printed say which port (and link) a
host should open.

`--playback FILE` plays a capture (`listen --record`, docs/captures.md) instead: the bytes
the recorded shoe sent, with their timing (`--speed`), once a host has the port open; then
it waits until the host has read them, and stays plugged in likewise."""

from __future__ import annotations

import asyncio
import logging
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from daemon.cli.command import Command, until_signalled, usage_error
from daemon.cli.exit_codes import ExitCode
from daemon.cli.output import event_record, json_line, print_line
from drivers.codecs.reference import KEPT_FRAMES_MIN
from drivers.emulator import PROTOCOLS, SCRIPT_HELP
from drivers.errors import DriverError

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import TextIO

    from drivers.emulator import CapturePlayback, Dealt, EmulatedShoe, EmulatorSettings

_LINE_FAULTS: Final = (
    ("noise", "junk bytes before a frame"),
    ("drop", "a frame lost (the host sees a sequence gap)"),
    ("bad-checksum", "a frame with one check-value bit flipped"),
    ("split", "a frame written in pieces with short pauses"),
    ("repeat", "a frame sent twice"),
    ("unreadable", "a card whose face cannot be read (per card)"),
)


def _fault_fields() -> list[str]:
    """`FaultRates`' fields, as argparse names the options above (`--bad-checksum`)."""
    return [option.replace("-", "_") for option, _ in _LINE_FAULTS]


def _add_arguments(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument(
        "--protocol",
        choices=PROTOCOLS,
        default="reference",
        help="the protocol the shoe speaks (default reference; docs/protocol.md)",
    )
    cmd.add_argument("--decks", type=int, default=6, help="decks in the shoe (default 6)")
    cmd.add_argument("--spanish", action="store_true", help="48-card decks without tens")
    cmd.add_argument(
        "--penetration",
        type=float,
        default=0.75,
        help="fraction of the shoe dealt before the cut card (default 0.75)",
    )
    cmd.add_argument("--seed", type=int, help="shuffle and fault seed: the same seed deals alike")
    cmd.add_argument("--cards", metavar="SCRIPT", help=f"deal exactly these cards: {SCRIPT_HELP}")
    _add_pace_arguments(cmd)
    cmd.add_argument(
        "--deal-without-host",
        action="store_true",
        help="deal from the start, even before a host opens the port (for fault tests)",
    )
    cmd.add_argument(
        "--exit-at-end",
        action="store_true",
        help="exit once the host has taken every card of the --cards script, instead of "
        "staying plugged in until Ctrl-C",
    )
    cmd.add_argument(
        "--kept-frames",
        type=int,
        default=KEPT_FRAMES_MIN,
        metavar="N",
        help="frames the shoe keeps until acknowledged (reference protocol; default "
        f"{KEPT_FRAMES_MIN}); fewer makes an overflow to test",
    )
    cmd.add_argument(
        "--copies", type=int, default=1, help="send every frame this many times (ENQ shoes: 3)"
    )
    cmd.add_argument(
        "--heartbeat",
        type=float,
        default=2.0,
        metavar="SECONDS",
        help="heartbeat after this much silence (reference protocol; 0: never; default 2)",
    )
    cmd.add_argument("--link", type=Path, help="keep a symlink here to the port, e.g. /tmp/shoe0")
    cmd.add_argument(
        "--verbose", "-v", action="store_true", help="print every card dealt as a JSON line"
    )
    _add_fault_arguments(cmd)
    _add_playback_arguments(cmd)


def _add_pace_arguments(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument(
        "--pace",
        type=float,
        default=1.0,
        metavar="CARDS_PER_S",
        help="cards per second (default 1); 0: each card as soon as the host has taken the last",
    )
    cmd.add_argument(
        "--step",
        action="store_true",
        help="deal one card each time Enter is pressed (a person deals), instead of at --pace",
    )


def _add_playback_arguments(cmd: argparse.ArgumentParser) -> None:
    playback = cmd.add_argument_group(
        "playback", "a capture (listen --record) played as the shoe it recorded, instead of dealing"
    )
    playback.add_argument(
        "--playback", type=Path, metavar="FILE", help="the capture to play (docs/captures.md)"
    )
    playback.add_argument(
        "--speed",
        type=float,
        default=1.0,
        metavar="FACTOR",
        help="1 as recorded (default), 2 twice as fast, 0 each chunk once the last is read",
    )


def _add_fault_arguments(cmd: argparse.ArgumentParser) -> None:
    faults = cmd.add_argument_group("line faults", "each a chance per frame, 0 to 1")
    for name, text in _LINE_FAULTS:
        faults.add_argument(f"--{name}", type=float, default=0.0, metavar="RATE", help=text)
    faults.add_argument(
        "--unplug-every", type=float, metavar="SECONDS", help="pull the virtual cable this often"
    )
    faults.add_argument(
        "--unplug-for", type=float, default=1.0, metavar="SECONDS", help="and for this long"
    )


def emulator_settings(args: argparse.Namespace) -> EmulatorSettings:
    """The settings `emulate` runs with; raises `EmulatorError` saying which option is wrong."""
    from drivers.emulator import EmulatorSettings, FaultRates

    return EmulatorSettings(
        protocol=args.protocol,
        decks=args.decks,
        spanish=args.spanish,
        penetration=args.penetration,
        script=args.cards,
        seed=args.seed,
        pace=args.pace or None,
        faults=FaultRates(**{field: getattr(args, field) for field in _fault_fields()}),
        copies=args.copies,
        heartbeat_interval=args.heartbeat or None,
        kept_frames=args.kept_frames,
        link=args.link,
        unplug_every=args.unplug_every,
        unplug_for=args.unplug_for,
    )


def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> ExitCode:
    logging.basicConfig(level=logging.INFO, stream=err, format="%(message)s")
    dealing = Dealing(
        wait_for_host=not args.deal_without_host,
        exit_at_end=args.exit_at_end,
        verbose=args.verbose,
        step=args.step,
    )
    if args.playback is not None:
        return asyncio.run(until_signalled(play_capture(args, out, err, dealing)))
    try:
        settings = emulator_settings(args)
    except DriverError as exc:
        return usage_error(err, "emulate", exc)
    return asyncio.run(until_signalled(emulate(settings, out, err, dealing)))


@dataclass(frozen=True, slots=True)
class Dealing:
    """How `emulate` deals, beside the shoe's own settings."""

    wait_for_host: bool = True  # deal nothing until a host has the port open
    exit_at_end: bool = False  # exit once a script's cards are all taken, not at Ctrl-C
    verbose: bool = False  # print every card dealt as a JSON line
    step: bool = False  # one card per line read from standard input, not at the pace


def _how_it_stops(dealing: Dealing) -> str:
    return "it exits when the host has taken all" if dealing.exit_at_end else "Ctrl-C to stop"


async def emulate(
    settings: EmulatorSettings, out: TextIO, err: TextIO, dealing: Dealing | None = None
) -> ExitCode:
    """Run one emulated shoe until cancelled (or its script is taken, with `exit_at_end`);
    print where to find it."""
    from drivers.emulator import EmulatedShoe, EmulatorError

    dealing = dealing or Dealing()
    try:
        shoe = EmulatedShoe(settings)  # a script that does not parse fails here
        async with shoe:  # and a link that cannot be made, here
            print_line(out, f"port: {shoe.port_path}")
            if shoe.link is not None:
                print_line(out, f"link: {shoe.link}")
            print_line(out, f"seed: {shoe.seed}")
            log = logging.getLogger("drivers.emulator")
            log.info(
                "emulating a shoe (%s protocol); open %s; %s",
                settings.protocol,
                shoe.path,
                _how_it_stops(dealing),
            )
            await _deal_until_done(shoe, out, dealing, log)
    except EmulatorError as exc:
        return usage_error(err, "emulate", exc)
    return ExitCode.OK


async def _deal_until_done(
    shoe: EmulatedShoe, out: TextIO, dealing: Dealing, log: logging.Logger
) -> None:
    def show(dealt: Dealt) -> None:
        print_line(out, json_line(_dealt_record(dealt)))

    if dealing.wait_for_host:
        log.info("waiting for a host to open %s before dealing", shoe.path)
        await shoe.wait_for_host()
    if dealing.step:
        count = await _deal_on_enter(shoe, show if dealing.verbose else None, log)
    else:
        count = await shoe.run(show if dealing.verbose else None)
    # A script ran out: the shoe is done only once the host has every card of it.
    log.info("the script's %d cards are dealt; waiting for the host to take them", count)
    await shoe.wait_taken()
    if dealing.exit_at_end:
        log.info("the host has taken every card; exiting")
        return
    log.info("the host has taken every card; still plugged in: Ctrl-C to stop")
    await asyncio.Event().wait()  # like a shoe left on the table: until Ctrl-C or SIGTERM


async def _deal_on_enter(
    shoe: EmulatedShoe, on_card: Callable[[Dealt], None] | None, log: logging.Logger
) -> int:
    """One card each time a line comes on standard input (Enter, at a terminal), until a
    script runs out or the input ends; the number dealt. The face is not printed (unless
    --verbose): the person at the shoe sees no more of the hole card than a dealer does."""
    loop = asyncio.get_running_loop()
    lines = asyncio.StreamReader()
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(lines), sys.stdin
    )
    dealt = 0
    try:
        log.info("Enter deals the next card; Ctrl-C stops")
        while await lines.readline():
            card = await shoe.next_card()
            if card is None:
                break
            dealt += 1
            if on_card is not None:
                on_card(card)
            log.info("card %d dealt; Enter deals the next", dealt)
        else:
            log.info("the input has ended: no more cards")
    finally:
        transport.close()
    return dealt


async def play_capture(
    args: argparse.Namespace, out: TextIO, err: TextIO, dealing: Dealing
) -> ExitCode:
    """Play the capture `--playback` names onto a virtual serial port, as its shoe."""
    from drivers.captures import read_capture
    from drivers.emulator import CapturePlayback, EmulatorError

    try:
        capture = read_capture(args.playback)
        shoe = CapturePlayback(capture, link=args.link, speed=args.speed)
        async with shoe:  # a link that cannot be made fails here
            print_line(out, f"port: {shoe.port_path}")
            if shoe.link is not None:
                print_line(out, f"link: {shoe.link}")
            print_line(out, f"capture: {args.playback}")
            await _play_until_done(shoe, dealing, logging.getLogger("drivers.emulator"))
    except OSError as exc:
        return usage_error(err, "emulate", f"--playback {args.playback}: {exc.strerror or exc}")
    except (DriverError, EmulatorError) as exc:  # a capture that does not read, a bad speed
        return usage_error(err, "emulate", exc)
    return ExitCode.OK


async def _play_until_done(shoe: CapturePlayback, dealing: Dealing, log: logging.Logger) -> None:
    capture = shoe.capture
    log.info(
        "playing a capture (%s protocol, %d chunks, %.1f s recorded); open %s; %s",
        capture.header.protocol,
        len(capture.received),
        capture.duration,
        shoe.path,
        _how_it_stops(dealing),
    )
    if dealing.wait_for_host:
        log.info("waiting for a host to open %s before playing", shoe.path)
        await shoe.wait_for_host()
    count = await shoe.play()
    log.info("the capture's %d chunks are played; waiting for the host to read them", count)
    await shoe.wait_read()
    if dealing.exit_at_end:
        log.info("the host has read every byte; exiting")
        return
    log.info("the host has read every byte; still plugged in: Ctrl-C to stop")
    await asyncio.Event().wait()  # like a shoe left on the table: until Ctrl-C or SIGTERM


def _dealt_record(dealt: Dealt) -> dict[str, object]:
    record = event_record(dealt.event)
    record["fate"] = dealt.fate  # null: it waits behind an unacknowledged frame
    for flag in ("kept", "discarded", "lost_unplugged"):
        if getattr(dealt, flag):
            record[flag] = True
    return record


COMMAND: Final = Command(
    description="Open a pseudo-terminal that behaves like a shoe's serial port and, once a "
    "host has it open, deal cards into it (at --pace, or one each time Enter is pressed "
    "with --step) until Ctrl-C or SIGTERM. After a --cards script "
    "it waits until the host has taken every card, then stays plugged in (--exit-at-end: "
    "exits). The first lines printed say which port (and link) a host should open. "
    "--playback FILE plays a capture (listen --record) instead, as the shoe it recorded.",
    add_arguments=_add_arguments,
    run=_run,
)
