"""The engineer's tools: `shoe2mqtt emulate`, `shoe2mqtt listen` and `shoe2mqtt ports`.

`register` adds the three subcommands to the main parser; each stores its handler with
`set_defaults(handler=...)`, which takes the parsed arguments and returns the exit code.

    emulate   a shoe on a virtual serial port, dealing until Ctrl-C or the end of a script
    listen    open a shoe with a driver and print what it says as JSON Lines (like candump)
    ports     list serial ports, their stable /dev/serial/by-id names, and known USB devices

Exit codes: 0 done, 1 the device failed (the message says why), 2 a wrong option.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import logging
import signal
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TextIO

from drivers.errors import DriverError
from drivers.events import CardDrawn
from drivers.transports.base import Transport

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Coroutine

    from drivers.driver import DriverEvent
    from drivers.emulator import Dealt, EmulatedShoe, EmulatorSettings
    from drivers.transports import TransportSettings

EXIT_OK: Final = 0
EXIT_DEVICE: Final = 1
EXIT_USAGE: Final = 2
DRAIN_TIMEOUT: Final = 5.0  # seconds a finished script waits for the host to read the rest
BY_ID_DIRECTORY: Final = Path("/dev/serial/by-id")

# USB ids to look for. No shoe vendor has published the ids of a native USB reader, so the
# first table is empty until one does (or a capture shows one); the second holds the
# USB-serial bridges that shoe cables and adapter boards are commonly built on.
KNOWN_READERS: Final[dict[tuple[int, int], str]] = {}
SERIAL_ADAPTERS: Final[dict[tuple[int, int], str]] = {
    (0x0403, 0x6001): "FTDI FT232R USB-serial adapter",
    (0x0403, 0x6015): "FTDI FT-X USB-serial adapter",
    (0x067B, 0x2303): "Prolific PL2303 USB-serial adapter",
    (0x10C4, 0xEA60): "Silicon Labs CP210x USB-serial adapter",
    (0x1A86, 0x7523): "WCH CH340 USB-serial adapter",
}


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `emulate`, `listen` and `ports` to the `shoe2mqtt` command line."""
    _add_emulate(commands)
    _add_listen(commands)
    _add_ports(commands)


def main(argv: list[str] | None = None) -> int:
    """`python -m daemon.cli.listen COMMAND ...`: the same tools without the daemon's parser."""
    parser = argparse.ArgumentParser(prog="shoe2mqtt")
    register(parser.add_subparsers(dest="command", required=True, metavar="COMMAND"))
    args = parser.parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = args.handler
    return handler(args)


# ================================================================ emulate


def _add_emulate(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from drivers.emulator import PROTOCOLS, SCRIPT_HELP

    cmd = commands.add_parser(
        "emulate",
        help="emulate a shoe on a virtual serial port",
        description="Open a pseudo-terminal that behaves like a shoe's serial port and deal "
        "cards into it until Ctrl-C, SIGTERM, or the end of a --cards script. The first "
        "lines printed say which port (and link) a host should open.",
    )
    cmd.add_argument("--protocol", choices=PROTOCOLS, default="reference")
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
    cmd.add_argument(
        "--pace",
        type=float,
        default=1.0,
        metavar="CARDS_PER_S",
        help="cards per second (default 1); 0 deals as fast as the host reads",
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
    faults = cmd.add_argument_group("line faults", "each a chance per frame, 0 to 1")
    for name, text in (
        ("noise", "junk bytes before a frame"),
        ("drop", "a frame lost (the host sees a sequence gap)"),
        ("bad-checksum", "a frame with one check-value bit flipped"),
        ("split", "a frame written in pieces with short pauses"),
        ("repeat", "a frame sent twice"),
        ("unreadable", "a card whose face cannot be read (per card)"),
    ):
        faults.add_argument(f"--{name}", type=float, default=0.0, metavar="RATE", help=text)
    faults.add_argument(
        "--unplug-every", type=float, metavar="SECONDS", help="pull the virtual cable this often"
    )
    faults.add_argument(
        "--unplug-for", type=float, default=1.0, metavar="SECONDS", help="and for this long"
    )
    cmd.add_argument(
        "--verbose", "-v", action="store_true", help="print every card dealt as a JSON line"
    )
    cmd.set_defaults(handler=_emulate_command)


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
        faults=FaultRates(
            noise=args.noise,
            drop=args.drop,
            bad_checksum=args.bad_checksum,
            split=args.split,
            repeat=args.repeat,
            unreadable=args.unreadable,
        ),
        copies=args.copies,
        heartbeat_interval=args.heartbeat or None,
        link=args.link,
        unplug_every=args.unplug_every,
        unplug_for=args.unplug_for,
    )


def _emulate_command(args: argparse.Namespace) -> int:
    _log_to_stderr()
    try:
        settings = emulator_settings(args)
    except DriverError as exc:
        return _usage_error("emulate", exc)
    return asyncio.run(_until_signalled(emulate(settings, sys.stdout, verbose=args.verbose)))


async def emulate(settings: EmulatorSettings, out: TextIO, *, verbose: bool = False) -> int:
    """Run one emulated shoe until cancelled or its script ends; print where to find it."""
    from drivers.emulator import EmulatedShoe, EmulatorError

    try:
        shoe = EmulatedShoe(settings)  # a script that does not parse fails here
        async with shoe:  # and a link that cannot be made, here
            _print_line(out, f"port: {shoe.port_path}")
            if shoe.link is not None:
                _print_line(out, f"link: {shoe.link}")
            _print_line(out, f"seed: {shoe.seed}")
            logging.getLogger("drivers.emulator").info(
                "emulating a %s shoe; open %s; Ctrl-C to stop", settings.protocol, shoe.path
            )
            await _deal_until_done(shoe, out, verbose=verbose)
    except EmulatorError as exc:
        return _usage_error("emulate", exc)
    return EXIT_OK


async def _deal_until_done(shoe: EmulatedShoe, out: TextIO, *, verbose: bool) -> None:
    def show(dealt: Dealt) -> None:
        _print_line(out, json.dumps(_dealt_record(dealt), separators=(",", ":")))

    await shoe.run(show if verbose else None)
    # A script ran out: give the host the time to read the last cards before the port goes.
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(DRAIN_TIMEOUT):
            await shoe.wait_drained()


def _dealt_record(dealt: Dealt) -> dict[str, object]:
    record = event_record(dealt.event)
    record["fate"] = dealt.fate
    if dealt.lost_unplugged:
        record["lost_unplugged"] = True
    return record


# ================================================================ listen


def _add_listen(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cmd = commands.add_parser(
        "listen",
        help="print what a shoe says, decoded, as JSON Lines",
        description="Open a shoe with a driver and print every decoded event and every change "
        "of the link as one JSON object per line; --raw also prints the bytes received.",
    )
    cmd.add_argument("--driver", required=True, help="the shoe's protocol: reference, enq, ...")
    cmd.add_argument(
        "port", nargs="?", help="serial port, e.g. /dev/serial/by-id/... or /tmp/shoe0"
    )
    cmd.add_argument("--tcp", metavar="HOST:PORT", help="a serial device server instead of a port")
    cmd.add_argument("--baud", type=int, default=9600, help="bit rate (default 9600; ENQ: 4800)")
    cmd.add_argument("--parity", default="N", help="N, E, O, M or S (default N)")
    cmd.add_argument("--bytesize", type=int, default=8, help="data bits (default 8)")
    cmd.add_argument("--stopbits", type=float, default=1, help="stop bits (default 1)")
    cmd.add_argument("--raw", action="store_true", help="also print the bytes received, in hex")
    cmd.add_argument("--count", type=int, metavar="N", help="exit after N shoe events")
    cmd.add_argument(
        "--retry", action="store_true", help="keep trying when the first connection fails"
    )
    cmd.add_argument("--timestamps", action="store_true", help="add seconds since start")
    cmd.set_defaults(handler=_listen_command)


def listen_transport(args: argparse.Namespace) -> TransportSettings:
    """The transport `listen` opens; raises `DriverError` saying which option is wrong."""
    from drivers.transports import SerialSettings, SettingsError, TcpSettings

    if (args.port is None) == (args.tcp is None):
        raise SettingsError(
            "give either a serial port or --tcp HOST:PORT (see `shoe2mqtt ports`)",
            field="port",
            value=args.port,
        )
    if args.tcp is not None:
        host, _, port = str(args.tcp).rpartition(":")
        if not host or not port.isdigit():
            raise SettingsError(
                "write it as HOST:PORT, e.g. 10.0.0.5:4001", field="tcp", value=args.tcp
            )
        return TcpSettings(host=host.strip("[]"), port=int(port))
    return SerialSettings(
        port=args.port,
        baudrate=args.baud,
        bytesize=args.bytesize,
        parity=str(args.parity).upper(),  # type: ignore[arg-type]  # SerialSettings checks it
        stopbits=args.stopbits,
    )


def _listen_command(args: argparse.Namespace) -> int:
    if args.count is not None and args.count < 1:
        return _usage_error("listen", ValueError(f"--count={args.count}: must be 1 or more"))
    # Every link change and gap is printed as JSON already; the driver's own warnings would
    # only repeat them on stderr.
    logging.basicConfig(level=logging.ERROR, stream=sys.stderr, format="%(name)s: %(message)s")
    options = ListenOptions(
        raw=args.raw, count=args.count, retry=args.retry, timestamps=args.timestamps
    )
    return asyncio.run(_until_signalled(listen(args, sys.stdout, sys.stderr, options)))


class _StopListening(Exception):
    def __init__(self, exit_code: int) -> None:
        super().__init__(exit_code)
        self.exit_code = exit_code


@dataclasses.dataclass(frozen=True, slots=True)
class ListenOptions:
    raw: bool = False  # also print the bytes received, in hex
    count: int | None = None  # stop after this many shoe events (link events not counted)
    retry: bool = False  # keep retrying when the first connection fails, instead of exiting
    timestamps: bool = False  # "t": seconds since start, on every line


async def listen(
    args: argparse.Namespace, out: TextIO, err: TextIO, options: ListenOptions | None = None
) -> int:
    """Print what the shoe says until `count` events, a failed first connection, or cancel."""
    from drivers.driver import ShoeDriver
    from drivers.registry import load_decoder_class
    from drivers.transports import transport_factory

    try:
        decoder = load_decoder_class(args.driver)()
        settings = listen_transport(args)
    except DriverError as exc:
        return _usage_error("listen", exc, err)
    printer = _EventPrinter(out, err, options or ListenOptions())
    make_transport = transport_factory(settings)

    def tapped() -> Transport:
        return _TappedTransport(make_transport(), printer.print_bytes)

    driver = ShoeDriver(args.driver, decoder, tapped if printer.options.raw else make_transport)
    try:
        await driver.run(printer.emit)
    except _StopListening as stop:
        return stop.exit_code


class _EventPrinter:
    def __init__(self, out: TextIO, err: TextIO, options: ListenOptions) -> None:
        self.options = options
        self._out = out
        self._err = err
        self._started = time.monotonic()
        self._events_seen = 0
        self._ever_connected = False

    async def print_bytes(self, data: bytes) -> None:
        self._print({"type": "raw", "hex": data.hex(" ")})

    async def emit(self, event: DriverEvent) -> None:
        from drivers.driver import Connected, Connecting, Disconnected, LinkFault, Reconnected

        self._print(event_record(event))
        options = self.options
        if isinstance(event, Connected):
            self._ever_connected = True
        elif isinstance(event, LinkFault):
            if not (self._ever_connected or options.retry):
                # The port or server is wrong, not merely gone: say so rather than retry.
                self._err.write(f"shoe2mqtt listen: {event.reason}\n")
                raise _StopListening(EXIT_DEVICE)
        elif not isinstance(event, Connecting | Disconnected | Reconnected):
            self._events_seen += 1
            if options.count is not None and self._events_seen >= options.count:
                raise _StopListening(EXIT_OK)

    def _print(self, record: dict[str, object]) -> None:
        if self.options.timestamps:
            record = {"t": round(time.monotonic() - self._started, 3), **record}
        _print_line(self._out, json.dumps(record, separators=(",", ":")))


class _TappedTransport(Transport):
    """A transport that shows every chunk it reads before the codec sees it."""

    def __init__(self, inner: Transport, on_read: Callable[[bytes], Awaitable[None]]) -> None:
        self._inner = inner
        self._on_read = on_read
        self.endpoint = inner.endpoint

    async def open(self) -> None:
        await self._inner.open()

    async def read(self) -> bytes:
        data = await self._inner.read()
        await self._on_read(data)
        return data

    async def write(self, data: bytes) -> None:
        await self._inner.write(data)

    async def close(self) -> None:
        await self._inner.close()


def event_record(event: object) -> dict[str, object]:
    """One event as a JSON-ready dict: its type, then its fields; cards as "10S"."""
    record: dict[str, object] = {"type": type(event).__name__}
    if isinstance(event, CardDrawn):
        record["card"] = event.code
    if dataclasses.is_dataclass(event) and not isinstance(event, type):
        for field in dataclasses.fields(event):
            if isinstance(event, CardDrawn) and field.name in {"rank", "suit"}:
                continue
            record[field.name] = _json_value(getattr(event, field.name))
    return record


def _json_value(value: object) -> object:
    if isinstance(value, bytes):
        return value.hex(" ")
    if isinstance(value, float):
        return round(value, 3)
    return value


# ================================================================ ports


def _add_ports(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cmd = commands.add_parser(
        "ports",
        help="list serial ports and known USB shoe devices",
        description="List serial ports with their stable /dev/serial/by-id names (use those in "
        "the configuration: they survive replugging), and USB devices whose ids belong to a "
        "known reader or USB-serial adapter.",
    )
    cmd.add_argument(
        "--usb-id",
        action="append",
        default=[],
        metavar="VID:PID",
        help="also look for this USB device (hex, as lsusb prints it); repeatable",
    )
    cmd.add_argument("--all-usb", action="store_true", help="list every USB device")
    cmd.add_argument("--json", action="store_true", help="JSON Lines instead of text")
    cmd.set_defaults(handler=_ports_command)


def _ports_command(args: argparse.Namespace) -> int:
    try:
        extra = {_parse_usb_id(text): "asked for with --usb-id" for text in args.usb_id}
    except ValueError as exc:
        return _usage_error("ports", exc)
    return ports(sys.stdout, extra_usb_ids=extra, all_usb=args.all_usb, as_json=args.json)


def _parse_usb_id(text: str) -> tuple[int, int]:
    vendor, _, product = text.partition(":")
    try:
        ids = int(vendor, 16), int(product, 16)
    except ValueError:
        raise ValueError(f"--usb-id={text!r}: write it as VID:PID in hex, e.g. 0403:6001") from None
    if not all(0 <= i <= 0xFFFF for i in ids):
        raise ValueError(f"--usb-id={text!r}: USB ids are 4 hex digits each")
    return ids


def ports(
    out: TextIO,
    *,
    extra_usb_ids: dict[tuple[int, int], str] | None = None,
    all_usb: bool = False,
    as_json: bool = False,
    usb_backend: object = None,
) -> int:
    serial = serial_ports()
    usb, usb_note = usb_devices(extra_usb_ids or {}, all_usb=all_usb, backend=usb_backend)
    if as_json:
        for record in [*serial, *usb]:
            _print_line(out, json.dumps(record, separators=(",", ":")))
        if usb_note:
            _print_line(
                out, json.dumps({"kind": "note", "message": usb_note}, separators=(",", ":"))
            )
        return EXIT_OK
    _print_line(out, "serial ports:" if serial else "serial ports: none found")
    for port in serial:
        _print_line(out, f"  {port['device']}  {port['description']}  [{port['hwid']}]")
        for name in port["by_id"]:  # type: ignore[attr-defined]  # a list, built below
            _print_line(out, f"      by-id: {name}")
    _print_line(out, "usb devices:" if usb else "usb devices: none known found")
    for device in usb:
        _print_line(
            out,
            f"  {device['vid']}:{device['pid']}  bus {device['bus']} address "
            f"{device['address']}  {device['description']}",
        )
    if usb_note:
        _print_line(out, f"  ({usb_note})")
    return EXIT_OK


def serial_ports() -> list[dict[str, object]]:
    """Every serial port the kernel knows, with the /dev/serial/by-id names that lead to it."""
    from serial.tools import list_ports

    by_id: dict[str, list[str]] = {}
    if BY_ID_DIRECTORY.is_dir():
        for link in sorted(BY_ID_DIRECTORY.iterdir()):
            by_id.setdefault(str(link.resolve()), []).append(str(link))
    return [
        {
            "kind": "serial",
            "device": port.device,
            "description": port.description,
            "hwid": port.hwid,
            "by_id": by_id.get(str(Path(port.device).resolve()), []),
        }
        for port in sorted(list_ports.comports(), key=lambda p: p.device)
    ]


def usb_devices(
    extra_ids: dict[tuple[int, int], str], *, all_usb: bool = False, backend: object = None
) -> tuple[list[dict[str, object]], str | None]:
    """USB devices with a known id (or all of them), and a note when USB cannot be listed."""
    import usb.core  # type: ignore[import-untyped]  # pyusb has no type information

    known = {**SERIAL_ADAPTERS, **KNOWN_READERS, **extra_ids}
    try:
        found: list[Any] = list(usb.core.find(find_all=True, backend=backend))
    except usb.core.NoBackendError:
        return (
            [],
            "USB not listed: no libusb backend found; install libusb-1.0 for native USB shoes",
        )
    except usb.core.USBError as exc:
        return [], f"USB not listed: {exc}; check permissions on /dev/bus/usb"
    devices: list[dict[str, object]] = []
    for device in found:
        ids = (int(device.idVendor), int(device.idProduct))
        if ids in known or all_usb:
            devices.append(
                {
                    "kind": "usb",
                    "vid": f"{ids[0]:04x}",
                    "pid": f"{ids[1]:04x}",
                    "bus": device.bus,
                    "address": device.address,
                    "description": known.get(ids, "not a known reader"),
                }
            )
    return devices, None


# ================================================================ shared


def _print_line(out: TextIO, line: str) -> None:
    out.write(line + "\n")
    out.flush()  # a pipe to a test or to `jq` must see each line as it happens


def _usage_error(command: str, exc: Exception, err: TextIO | None = None) -> int:
    (err or sys.stderr).write(f"shoe2mqtt {command}: {exc}\n")
    return EXIT_USAGE


def _log_to_stderr() -> None:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(message)s")


async def _until_signalled(work: Coroutine[Any, Any, int]) -> int:
    """Run `work`; SIGINT or SIGTERM cancels it and the command ends with exit code 0."""
    loop = asyncio.get_running_loop()
    task = asyncio.create_task(work, name="shoe2mqtt tool")
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, task.cancel)
    try:
        return await task
    except asyncio.CancelledError:
        if task.cancelled():
            return EXIT_OK
        raise
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)


if __name__ == "__main__":
    sys.exit(main())
