"""`[[table]]` and its `[table.shoe]`: each table's game, its shoe, and which device it reads.

The game's settings are rules/' `TableConfig`, the shoe's transport drivers/' settings: each
checks itself when built and raises its typed error carrying every problem, which the
collector files under the table's key path. What only the file as a whole can say (a table
id used twice, two tables reading one shoe) and what this host must have (the protocol's
codec loads, a capture to play is there and of the table's protocol) is judged here.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from daemon.configuration.problems import dotted, within
from drivers.captures import CaptureError, read_capture
from drivers.errors import DriverError
from drivers.registry import available_drivers, load_decoder_class
from drivers.transports import (
    CaptureSettings,
    SerialSettings,
    SettingsError,
    TcpSettings,
    UsbSettings,
)
from rules.config import TableConfig, describe_value
from rules.errors import ConfigError

if TYPE_CHECKING:
    from daemon.configuration.file import FieldPath
    from daemon.configuration.problems import Problems
    from drivers.transports import TransportSettings

# The scale goal: one process serves 256 tables (a server reading serial device
# servers over TCP) ready within 3 s. More tables go to more instances (shoe2mqtt@.service).
MAX_TABLES: Final = 256
# Seconds without a byte before a shoe's link counts as lost: below a second a heartbeat's
# jitter would drop it, above an hour the setting says nothing.
IDLE_TIMEOUT_SECONDS: Final = (1.0, 3600.0)
SHOE_KEYS: Final = frozenset({"protocol", "driver", "transport", "idle_timeout"})
TRANSPORTS: Final[dict[str, tuple[type[TransportSettings], frozenset[str]]]] = {
    "serial": (
        SerialSettings,
        frozenset({"port", "baudrate", "bytesize", "parity", "stopbits", "exclusive"}),
    ),
    "tcp": (TcpSettings, frozenset({"host", "port"})),
    "usb": (UsbSettings, frozenset({"vendor_id", "product_id", "serial_number"})),
    "capture": (CaptureSettings, frozenset({"path", "speed"})),
}


@dataclass(frozen=True, slots=True)
class ShoeConfig:
    protocol: str  # the registry's name of the shoe's protocol: reference, enq, ...
    transport: TransportSettings
    idle_timeout: float | None = None


@dataclass(frozen=True, slots=True)
class TableSetup:
    """One `[[table]]`: the table's game settings and the shoe that feeds it."""

    table: TableConfig
    shoe: ShoeConfig


class TableReader:
    """Reads every `[[table]]`, each problem told to the collector."""

    def __init__(self, problems: Problems, *, read_host_files: bool) -> None:
        self.problems = problems
        self.read_host_files = read_host_files
        self._protocols: list[str] | None = None
        self._loadable: dict[str, str | None] = {}  # protocol → why it does not load

    def tables(self, section: object) -> tuple[TableSetup, ...]:
        if not isinstance(section, list) or not section:
            self.problems.wrong(
                ("table",),
                "required: at least one [[table]] section"
                + ("" if section is None else f", not {describe_value(section)}"),
            )
            return ()
        if len(section) > MAX_TABLES:
            self.problems.wrong(
                ("table",),
                f"{len(section)} tables: one process serves at most {MAX_TABLES}; "
                "give the others to another instance (docs/deploy.md)",
            )
        setups: list[TableSetup] = []
        seen: dict[str, int] = {}
        devices: dict[tuple[object, ...], int] = {}  # a shoe's device → the table it serves
        for index, table in enumerate(section):
            if not isinstance(table, dict):
                self.problems.wrong(
                    ("table", index),
                    f"must be a [[table]] section of settings, not {describe_value(table)}",
                )
                continue
            setup = self._table(index, table)
            if setup is None:
                continue
            table_id = setup.table.table_id
            if table_id in seen:
                self.problems.wrong(
                    ("table", index, "id"),
                    f"table id {table_id!r} is already used by table [{seen[table_id] + 1}]",
                )
                continue
            seen[table_id] = index
            if self._shared_device(index, setup.shoe.transport, devices):
                continue
            setups.append(setup)
        return tuple(setups)

    def _shared_device(
        self, index: int, transport: TransportSettings, devices: dict[tuple[object, ...], int]
    ) -> bool:
        """Whether another table reads this shoe's device: one of the two would never get a
        byte (the serial port is locked, a device server serves one client), so say so."""
        where: FieldPath = ("table", index, "shoe")
        checked: list[tuple[object, ...]]
        match transport:
            case CaptureSettings():
                return False  # a file read, no device: any number of tables may play it
            case SerialSettings(port=port):
                checked, field_name = [("serial", port)], "port"
            case TcpSettings(host=host, port=port):
                checked, field_name = [("tcp", host.lower(), port)], "host"
            case UsbSettings(vendor_id=vendor, product_id=product, serial_number=serial):
                # Without a serial number a USB shoe is whichever of its kind is found first,
                # so it takes every shoe of its kind; "*" marks that one of the kind is taken.
                kind = ("usb", vendor, product)
                checked = [(*kind, "*")] if serial is None else [(*kind, serial), (*kind, None)]
                field_name = "product_id" if serial is None else "serial_number"
        for key in checked:
            other = devices.get(key)
            if other is not None:
                self.problems.wrong(
                    (*where, field_name),
                    f"table [{other + 1}] reads this shoe already: one shoe, one table"
                    + (" (give each USB shoe its serial_number)" if key[0] == "usb" else ""),
                )
                return True
        if isinstance(transport, UsbSettings):
            kind = ("usb", transport.vendor_id, transport.product_id)
            devices[(*kind, "*")] = index
            devices[(*kind, transport.serial_number)] = index
        else:
            devices[checked[0]] = index
        return False

    def _table(self, index: int, table: dict[str, Any]) -> TableSetup | None:
        settings = {k: v for k, v in table.items() if k != "shoe"}
        game: TableConfig | None = None
        try:
            game = TableConfig.from_mapping(settings)
        except ConfigError as exc:
            self.problems.record(("table", index), exc)
        shoe = self._shoe(index, table.get("shoe"))
        if game is None or shoe is None:
            return None
        return TableSetup(game, shoe)

    def _shoe(self, index: int, shoe: object) -> ShoeConfig | None:
        where: FieldPath = ("table", index, "shoe")
        if not isinstance(shoe, dict):
            self.problems.wrong(
                where,
                "required: a [table.shoe] section with protocol, transport and its settings"
                + ("" if shoe is None else f", not {describe_value(shoe)}"),
            )
            return None
        protocol = self._protocol(where, shoe)
        transport = self._transport(where, shoe)
        idle = shoe.get("idle_timeout")
        low, high = IDLE_TIMEOUT_SECONDS
        if idle is not None and not within(idle, low, high):
            self.problems.wrong(
                (*where, "idle_timeout"),
                f"must be seconds from {low:g} to {high:g}, or left out; "
                f"not {describe_value(idle)}",
            )
            return None
        if protocol is None or transport is None:
            return None
        if isinstance(transport, CaptureSettings) and self.read_host_files:
            self._capture_file(where, transport, protocol)
        return ShoeConfig(protocol, transport, idle)

    def _capture_file(self, where: FieldPath, capture: CaptureSettings, protocol: str) -> None:
        """A capture to play must be on this host, read as one, and be of the table's shoe
        protocol: otherwise every one of its frames would be dropped as noise."""
        try:
            recorded = read_capture(Path(capture.path)).header.protocol
        except OSError as exc:
            reason = exc.strerror or str(exc)
            self.problems.host_problem((*where, "path"), f"cannot read {capture.path!r}: {reason}")
        except CaptureError as exc:
            self.problems.host_problem((*where, "path"), str(exc))
        else:
            if recorded != protocol:
                self.problems.host_problem(
                    (*where, "path"),
                    f"{capture.path!r} was recorded from a shoe of protocol {recorded!r}, "
                    f"not this table's {protocol!r}",
                )

    def _protocol(self, where: FieldPath, shoe: dict[str, Any]) -> str | None:
        """The shoe's protocol; `driver` is its old name, still read, with a deprecation."""
        key = "protocol"
        if "driver" in shoe:
            if "protocol" in shoe:
                self.problems.wrong(
                    (*where, "driver"), "the old name of `protocol`: give only `protocol`"
                )
                return None
            key = "driver"
            self.problems.deprecated(
                (*where, "driver"),
                "renamed `protocol`; `driver` still works and will be refused in a later release",
            )
        protocol = shoe.get(key)
        if self._protocols is None:  # asked once: each asking scans the installed packages
            self._protocols = available_drivers()
        if not isinstance(protocol, str) or protocol not in self._protocols:
            self.problems.wrong((*where, key), _not_one_of("protocol", protocol, self._protocols))
            return None
        # The daemon loads the protocol's codec at start: a plugin that cannot be loaded
        # is this host's problem, found here rather than by `run` alone.
        if protocol not in self._loadable:
            try:
                load_decoder_class(protocol)
                self._loadable[protocol] = None
            except DriverError as exc:
                self._loadable[protocol] = str(exc)
        failure = self._loadable[protocol]
        if failure is not None:
            self.problems.host_problem((*where, key), failure)
            return None
        return protocol

    def _transport(self, where: FieldPath, shoe: dict[str, Any]) -> TransportSettings | None:
        kind = shoe.get("transport")
        if not isinstance(kind, str) or kind not in TRANSPORTS:
            self.problems.wrong(
                (*where, "transport"), _not_one_of("transport", kind, list(TRANSPORTS))
            )
            return None
        settings_class, keys = TRANSPORTS[kind]
        for key in sorted(set(shoe) - keys - SHOE_KEYS):
            self.problems.wrong(
                (*where, key),
                f"not a setting of a {kind} shoe; settings: {', '.join(sorted(keys))}",
            )
        given = {key: value for key, value in shoe.items() if key in keys}
        missing = [
            f.name
            for f in dataclasses.fields(settings_class)
            if f.default is dataclasses.MISSING and f.name not in given
        ]
        for name in missing:
            self.problems.wrong((*where, name), f"required for a {kind} shoe")
            given[name] = None  # a stand-in, so that the other settings are judged too
        try:
            return settings_class(**given)
        except SettingsError as exc:
            for problem in exc.problems:  # a missing setting was said above, not again
                if problem.field not in missing:
                    self.problems.wrong(
                        (*where, *dotted(problem.field)), problem.message, problem.value
                    )
        return None


def _not_one_of(what: str, value: object, names: list[str]) -> str:
    """Why `value` does not name one of `names`: missing, not a name, or unknown."""
    if value is None:
        problem = "required"
    elif isinstance(value, str):
        problem = f"unknown {what} {value[:40]!r}"
    else:
        problem = f"a {what} name in quotes, not {describe_value(value)}"
    return f"{problem}; {what}s: {', '.join(names)}"
