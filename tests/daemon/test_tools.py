"""The engineer's tools: `listen` against the emulated shoe, `emulate` as a real process,
`ports`, and the messages a wrong option gets."""

from __future__ import annotations

import asyncio
import io
import json
import signal
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from daemon.cli import build_parser, main, ports
from daemon.cli import listen as listen_command
from daemon.cli.listen import ListenOptions
from daemon.cli.output import event_record
from drivers.emulator import EmulatedShoe, EmulatorSettings
from tests.drivers.usb_backend import FakeShoeBackend

if TYPE_CHECKING:
    import argparse
    from pathlib import Path


def parse(argv: list[str]) -> argparse.Namespace:
    return build_parser().parse_args(argv)


def json_lines(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines()]


async def listen(argv: list[str], options: ListenOptions) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    async with asyncio.timeout(10):
        code = await listen_command.listen(parse(["listen", *argv]), out, err, options)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("protocol", ["reference", "enq"])
async def test_listen_prints_the_emulated_shoe_as_json_lines(protocol: str) -> None:
    settings = EmulatorSettings(protocol=protocol, script="BURN 7C QH 10S CUT 5D")  # type: ignore[arg-type]
    async with EmulatedShoe(settings) as shoe:
        options = ListenOptions(raw=True, count=4)  # cards, not messages
        listening = asyncio.create_task(listen(["--protocol", protocol, shoe.path], options))
        await asyncio.wait_for(shoe.wait_for_host(), 5)
        await shoe.run()
        code, out, err = await listening
    assert (code, err) == (0, "")
    records = json_lines(out)
    assert records[:2] == [
        {"type": "Connecting", "endpoint": shoe.path, "attempt": 1},
        {"type": "Connected", "endpoint": shoe.path},
    ]
    cards = [(r["card"], r["burned"]) for r in records if r["type"] == "CardDrawn"]
    assert cards == [("7C", True), ("QH", False), ("10S", False), ("5D", False)]
    assert "CutCardReached" in [r["type"] for r in records]
    raw = [r for r in records if r["type"] == "raw"]
    assert raw
    assert all(isinstance(r["hex"], str) for r in raw)
    greeting = "DeviceIdentity" if protocol == "reference" else "CommunicationStarted"
    assert greeting in [r["type"] for r in records]


async def test_listen_says_what_to_fix_for_a_wrong_driver_or_port(tmp_path: Path) -> None:
    code, _, err = await listen(["--protocol", "acme", "/dev/ttyUSB0"], ListenOptions())
    assert code == 2
    assert "no shoe driver named 'acme'; known drivers: enq, reference" in err
    missing = str(tmp_path / "ttyUSB9")
    code, _, err = await listen(["--protocol", "enq", missing], ListenOptions())
    assert code == 1
    assert f"no such serial port {missing}: check `shoe2mqtt ports`" in err
    code, _, err = await listen(["--protocol", "enq"], ListenOptions())
    assert code == 2
    assert "one of a serial port, --tcp HOST:PORT or --capture FILE" in err
    code, _, err = await listen(["--protocol", "enq", "--tcp", "nohost"], ListenOptions())
    assert code == 2
    assert "HOST:PORT" in err


def test_event_records_write_cards_as_the_rules_core_does() -> None:
    from drivers.events import CardDrawn, VendorMessage

    assert event_record(CardDrawn("10", "S", seq=4)) == {
        "type": "CardDrawn",
        "card": "10S",
        "seq": 4,
        "burned": False,
        "origin": "dealt",
    }
    assert event_record(VendorMessage("M", b"\x01\x02")) == {
        "type": "VendorMessage",
        "code": "M",
        "data": "01 02",
        "seq": None,
    }


async def test_emulate_runs_as_a_process_prints_its_port_and_stops_on_sigterm(
    tmp_path: Path,
) -> None:
    link = tmp_path / "shoe0"
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "daemon.cli",
        "emulate",
        "--seed",
        "5",
        "--pace",
        "50",
        "--link",
        str(link),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        async with asyncio.timeout(10):
            port = (await process.stdout.readline()).decode().strip()
            assert port.startswith("port: /dev/pts/")
            assert (await process.stdout.readline()).decode().strip() == f"link: {link}"
            assert (await process.stdout.readline()).decode().strip() == "seed: 5"
        options = ListenOptions(count=4)
        code, out, _ = await listen(["--protocol", "reference", str(link)], options)
        assert code == 0
        assert [r["type"] for r in json_lines(out)][2:3] == ["DeviceIdentity"]
    finally:
        process.send_signal(signal.SIGTERM)
        async with asyncio.timeout(10):
            _, stderr = await process.communicate()
    assert process.returncode == 0, stderr.decode()
    assert not link.exists()  # the virtual cable is gone with the process


def test_emulate_refuses_impossible_options_before_opening_anything(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["emulate", "--drop", "1.5"]) == 2
    assert "drop=1.5: must be a rate from 0 to 1" in capsys.readouterr().err
    assert main(["emulate", "--cards", "QH ZZ"]) == 2
    assert "not a card" in capsys.readouterr().err


def test_ports_lists_serial_ports_and_says_when_usb_cannot_be_listed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["ports", "--json"]) == 0
    records = json_lines(capsys.readouterr().out)
    assert all(r["kind"] in {"serial", "usb", "note"} for r in records)
    assert main(["ports"]) == 0
    assert "serial ports" in capsys.readouterr().out
    assert main(["ports", "--usb-id", "xyz"]) == 2
    assert "VID:PID in hex" in capsys.readouterr().err


def test_usb_devices_with_a_known_or_requested_id_are_listed() -> None:
    backend = FakeShoeBackend(vendor_id=0x1209, product_id=0x5E0E)
    found, note = ports.usb_devices({(0x1209, 0x5E0E): "asked for"}, backend=backend)
    assert note is None
    assert [(d["vid"], d["pid"], d["description"]) for d in found] == [
        ("1209", "5e0e", "asked for")
    ]
    assert ports.usb_devices({}, backend=backend) == ([], None)


async def test_listen_takes_the_old_driver_option_and_says_it_is_now_protocol() -> None:
    code, _, err = await listen(["--driver", "acme", "/dev/ttyUSB0"], ListenOptions())
    assert code == 2
    assert "--driver is now called --protocol" in err
    assert "no shoe driver named 'acme'" in err


def test_ports_says_in_words_what_it_found() -> None:
    """No "n/a [n/a]" for a port the kernel knows nothing of, no "none known found"."""
    bare = {"device": "/dev/ttyS0", "description": "n/a", "hwid": "n/a", "by_id": []}
    assert ports.describe_serial(bare) == (
        "/dev/ttyS0  (nothing more is known: a built-in port, maybe with nothing on it)"
    )
    adapter = {**bare, "device": "/dev/ttyUSB0", "description": "FT232R", "hwid": "USB VID:PID"}
    assert ports.describe_serial(adapter) == "/dev/ttyUSB0  FT232R  [USB VID:PID]"
    backend = FakeShoeBackend(vendor_id=0x1209, product_id=0x5E0E)
    assert ports.ports(out := io.StringIO(), usb_backend=backend) == 0
    assert out.getvalue().splitlines()[-1] == (
        "usb devices: no known reader or USB-serial adapter (--all-usb lists every one)"
    )
    assert ports.ports(out := io.StringIO(), usb_backend=backend, all_usb=True) == 0
    assert out.getvalue().splitlines()[-2:] == [
        "usb devices:",
        "  1209:5e0e  bus 1 address 7  not a known reader",
    ]
