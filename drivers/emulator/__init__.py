"""The emulated shoe: the device side of every protocol we speak, on a virtual serial port.

Layers, from pure to I/O:

- `shoe_model`: the cards and their order (seeded shuffle of N decks with a burn and a cut
  card, or a written script);
- `personalities`: how each protocol puts a message on the wire and answers the host;
- `faults`: seeded line faults (noise, drops, bad checksums, splits, repeats, unreadable cards);
- `core.ShoeEmulator`: all of the above, sans-I/O: steps in, the exact writes out;
- `pty_port.VirtualSerialPort` and `shoe.EmulatedShoe`: a pty, a link, pace and unplugs;
- `playback.CapturePlayback`: a capture of a real shoe played onto such a port.
"""

from drivers.emulator.core import Dealt, EmulatorStats, ShoeEmulator, Write
from drivers.emulator.errors import EmulatorError
from drivers.emulator.faults import FAULT_NAMES, FaultName, FaultRates
from drivers.emulator.personalities import PROTOCOLS, ProtocolName
from drivers.emulator.playback import CapturePlayback
from drivers.emulator.pty_port import PortUnplugged, VirtualSerialPort
from drivers.emulator.settings import EmulatorSettings
from drivers.emulator.shoe import EmulatedShoe
from drivers.emulator.shoe_model import SCRIPT_HELP, Card, parse_script

__all__ = [
    "FAULT_NAMES",
    "PROTOCOLS",
    "SCRIPT_HELP",
    "CapturePlayback",
    "Card",
    "Dealt",
    "EmulatedShoe",
    "EmulatorError",
    "EmulatorSettings",
    "EmulatorStats",
    "FaultName",
    "FaultRates",
    "PortUnplugged",
    "ProtocolName",
    "ShoeEmulator",
    "VirtualSerialPort",
    "Write",
    "parse_script",
]
