"""`shoe2mqtt ports`: serial ports, their stable /dev/serial/by-id names, and known USB
devices, so the engineer writing a configuration knows what to name."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from daemon.cli.command import Command, usage_error
from daemon.cli.exit_codes import ExitCode
from daemon.cli.output import json_line, print_line

if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping
    from typing import TextIO

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


def _add_arguments(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument(
        "--usb-id",
        action="append",
        default=[],
        metavar="VID:PID",
        help="also look for this USB device (hex, as lsusb prints it); repeatable",
    )
    cmd.add_argument("--all-usb", action="store_true", help="list every USB device")
    cmd.add_argument("--json", action="store_true", help="JSON Lines instead of text")


def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> ExitCode:
    try:
        extra = {_parse_usb_id(text): "asked for with --usb-id" for text in args.usb_id}
    except ValueError as exc:
        return usage_error(err, "ports", exc)
    return ports(out, extra_usb_ids=extra, all_usb=args.all_usb, as_json=args.json)


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
) -> ExitCode:
    serial = serial_ports()
    usb, usb_note = usb_devices(extra_usb_ids or {}, all_usb=all_usb, backend=usb_backend)
    if as_json:
        for record in [*serial, *usb]:
            print_line(out, json_line(record))
        if usb_note:
            print_line(out, json_line({"kind": "note", "message": usb_note}))
        return ExitCode.OK
    print_line(out, "serial ports:" if serial else "serial ports: none found")
    for port in serial:
        print_line(out, f"  {describe_serial(port)}")
        for name in port["by_id"]:  # type: ignore[attr-defined]  # a list, built below
            print_line(out, f"      by-id: {name}")
    if usb_note:
        print_line(out, usb_note)
    elif not usb:
        print_line(
            out,
            "usb devices: none"
            if all_usb
            else "usb devices: no known reader or USB-serial adapter (--all-usb lists every one)",
        )
    else:
        print_line(out, "usb devices:")
    for device in usb:
        print_line(
            out,
            f"  {device['vid']}:{device['pid']}  bus {device['bus']} address "
            f"{device['address']}  {device['description']}",
        )
    return ExitCode.OK


# What pyserial says of a port it knows nothing about (a built-in UART, a placeholder).
_UNKNOWN: Final = "n/a"


def describe_serial(port: Mapping[str, object]) -> str:
    """One serial port as a person reads it: its device, and what is known of it."""
    parts = [str(port["device"])]
    if port["description"] != _UNKNOWN:
        parts.append(str(port["description"]))
    if port["hwid"] != _UNKNOWN:
        parts.append(f"[{port['hwid']}]")
    if len(parts) == 1:
        parts.append("(nothing more is known: a built-in port, maybe with nothing on it)")
    return "  ".join(parts)


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
        return [], (
            "usb devices not listed: no libusb backend found; "
            "install libusb-1.0 for native USB shoes"
        )
    except usb.core.USBError as exc:
        return [], f"usb devices not listed: {exc}; check permissions on /dev/bus/usb"
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


COMMAND: Final = Command(
    description="List serial ports with their stable /dev/serial/by-id names (use those in "
    "the configuration: they survive replugging), and USB devices whose ids belong to a "
    "known reader or USB-serial adapter.",
    add_arguments=_add_arguments,
    run=_run,
)
