"""The service configuration: one TOML file, every table with its shoe and its game.

`load_config` returns a `ServiceConfig` or raises `ConfigErrors`, a list of every mistake
found, each with its file, line and field. Sections are checked independently, so one run of
`shoe2mqtt check-config` shows a mistake in `[mqtt]` and one in each `[[table]]` together.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from daemon.config_file import ConfigFileError, FieldPath, format_field, locate, read_toml
from daemon.mqtt.errors import MqttSettingsError
from daemon.mqtt.settings import MqttSettings
from drivers.registry import available_drivers
from drivers.transports import SerialSettings, SettingsError, TcpSettings, UsbSettings
from rules.config import TableConfig
from rules.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from drivers.transports import TransportSettings

DEFAULT_STATE_DIRECTORY = Path("/var/lib/shoe2mqtt")
_TOP_KEYS = {"mqtt", "table", "journal", "logging", "display"}
_SHOE_KEYS = {"protocol", "driver", "transport", "idle_timeout"}
_TRANSPORTS: dict[str, tuple[type[Any], set[str]]] = {
    "serial": (SerialSettings, {"port", "baudrate", "bytesize", "parity", "stopbits", "exclusive"}),
    "tcp": (TcpSettings, {"host", "port"}),
    "usb": (UsbSettings, {"vendor_id", "product_id", "serial_number"}),
}
LOG_FORMATS = ("auto", "json", "console")
LOG_LEVELS = ("debug", "info", "warning", "error")


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


@dataclass(frozen=True, slots=True)
class LoggingConfig:
    format: str = "auto"  # auto: console on a terminal, JSON Lines otherwise (journald)
    level: str = "info"
    raw_frames: bool = False  # show frame hex at debug: exposes unrevealed cards (daemon/logs.py)


@dataclass(frozen=True, slots=True)
class ServiceConfig:
    path: Path
    mqtt: MqttSettings
    tables: tuple[TableSetup, ...]
    state_directory: Path = DEFAULT_STATE_DIRECTORY
    outbox_limit: int = 100_000
    logging: LoggingConfig = field(default_factory=LoggingConfig)
    # Settings that work but are on their way out, each with what replaces it: check-config
    # prints them and the daemon logs them, so a site's old file never breaks without warning.
    deprecations: tuple[ConfigFileError, ...] = ()


class ConfigErrors(Exception):
    """Every mistake found in a configuration file, in file order."""

    def __init__(self, errors: list[ConfigFileError]) -> None:
        self.errors = sorted(errors, key=lambda e: (e.line or 0, e.field))
        super().__init__("\n".join(map(str, self.errors)))


def load_config(path: Path, *, environ: Mapping[str, str] | None = None) -> ServiceConfig:
    try:
        document, text = read_toml(path)
    except ConfigFileError as exc:
        raise ConfigErrors([exc]) from None
    return _Checker(path, text, os.environ if environ is None else environ).check(document)


class _Checker:
    def __init__(self, path: Path, text: str, environ: Mapping[str, str]) -> None:
        self.path = path
        self.text = text
        self.environ = environ
        self.errors: list[ConfigFileError] = []
        self.deprecations: list[ConfigFileError] = []

    def error(self, where: FieldPath, message: str) -> None:
        self.errors.append(self._at(where, message))

    def deprecated(self, where: FieldPath, message: str) -> None:
        self.deprecations.append(self._at(where, message))

    def _at(self, where: FieldPath, message: str) -> ConfigFileError:
        return ConfigFileError(
            str(self.path), locate(self.text, where), format_field(where), message
        )

    def check(self, document: dict[str, Any]) -> ServiceConfig:
        for key in sorted(set(document) - _TOP_KEYS):
            self.error((key,), f"unknown section; sections: {sorted(_TOP_KEYS)}")
        mqtt = self._mqtt(document.get("mqtt"))
        tables = self._tables(document.get("table"))
        state_directory, outbox_limit = self._journal(document.get("journal", {}))
        logging = self._logging(document.get("logging", {}))
        self._display(document.get("display"))
        if self.errors or mqtt is None:
            raise ConfigErrors(self.errors)
        return ServiceConfig(
            self.path,
            mqtt,
            tables,
            state_directory,
            outbox_limit,
            logging,
            tuple(self.deprecations),
        )

    def _mqtt(self, section: object) -> MqttSettings | None:
        if not isinstance(section, dict):
            self.error(("mqtt",), "required: an [mqtt] section with at least `host`")
            return None
        try:
            return MqttSettings.from_mapping(section, environ=self.environ)
        except MqttSettingsError as exc:
            self.error(tuple(exc.field.split(".")), exc.message)
            return None

    def _tables(self, section: object) -> tuple[TableSetup, ...]:
        if not isinstance(section, list) or not section:
            self.error(("table",), "required: at least one [[table]] section")
            return ()
        setups: list[TableSetup] = []
        seen: dict[str, int] = {}
        for index, table in enumerate(section):
            setup = self._table(index, table)
            if setup is None:
                continue
            table_id = setup.table.table_id
            if table_id in seen:
                self.error(
                    ("table", index, "id"),
                    f"table id {table_id!r} is already used by table [{seen[table_id] + 1}]",
                )
                continue
            seen[table_id] = index
            setups.append(setup)
        return tuple(setups)

    def _table(self, index: int, table: dict[str, Any]) -> TableSetup | None:
        settings = {k: v for k, v in table.items() if k != "shoe"}
        game: TableConfig | None = None
        try:
            game = TableConfig.from_mapping(settings)
        except ConfigError as exc:
            self.error(
                ("table", index, *exc.field.split(".")), exc.message.removeprefix(f"{exc.field}: ")
            )
        shoe = self._shoe(index, table.get("shoe"))
        if game is None or shoe is None:
            return None
        return TableSetup(game, shoe)

    def _shoe(self, index: int, shoe: object) -> ShoeConfig | None:
        where: FieldPath = ("table", index, "shoe")
        if not isinstance(shoe, dict):
            self.error(
                where, "required: a [table.shoe] section with protocol, transport and its settings"
            )
            return None
        protocol = self._protocol(where, shoe)
        if protocol is None:
            return None
        transport = self._transport(where, shoe)
        idle = shoe.get("idle_timeout")
        if idle is not None and (
            isinstance(idle, bool) or not isinstance(idle, int | float) or idle <= 0
        ):
            self.error((*where, "idle_timeout"), "seconds above 0, or left out")
            return None
        return None if transport is None else ShoeConfig(protocol, transport, idle)

    def _protocol(self, where: FieldPath, shoe: dict[str, Any]) -> str | None:
        """The shoe's protocol; `driver` is its old name, still read, with a deprecation."""
        key = "protocol"
        if "driver" in shoe:
            if "protocol" in shoe:
                self.error((*where, "driver"), "the old name of `protocol`: give only `protocol`")
                return None
            key = "driver"
            self.deprecated(
                (*where, "driver"),
                "renamed `protocol`; `driver` still works and will be refused in a later release",
            )
        protocol = shoe.get(key)
        if not isinstance(protocol, str) or protocol not in available_drivers():
            self.error(
                (*where, key), f"unknown protocol {protocol!r}; available: {available_drivers()}"
            )
            return None
        return protocol

    def _transport(self, where: FieldPath, shoe: dict[str, Any]) -> TransportSettings | None:
        kind = shoe.get("transport")
        if kind not in _TRANSPORTS:
            self.error((*where, "transport"), f"must be one of {sorted(_TRANSPORTS)}, not {kind!r}")
            return None
        settings_class, keys = _TRANSPORTS[kind]
        unknown = sorted(set(shoe) - keys - _SHOE_KEYS)
        if unknown:
            self.error(
                (*where, unknown[0]), f"not a setting of a {kind} shoe; settings: {sorted(keys)}"
            )
            return None
        try:
            return settings_class(**{k: v for k, v in shoe.items() if k in keys})  # type: ignore[no-any-return]
        except SettingsError as exc:
            self.error((*where, exc.field), f"{exc.value!r}: {exc.args[0].split(': ', 1)[-1]}")
        except TypeError as exc:  # a required setting is missing
            self.error(where, f"incomplete {kind} settings: {exc}")
        return None

    def _journal(self, section: object) -> tuple[Path, int]:
        if not isinstance(section, dict):
            self.error(("journal",), "must be a table")
            return DEFAULT_STATE_DIRECTORY, 100_000
        for key in sorted(set(section) - {"state_directory", "outbox_limit"}):
            self.error(
                ("journal", key), "unknown setting; settings: ['outbox_limit', 'state_directory']"
            )
        directory = section.get("state_directory", str(DEFAULT_STATE_DIRECTORY))
        if not isinstance(directory, str) or not directory.startswith("/"):
            self.error(("journal", "state_directory"), "an absolute directory path")
            directory = str(DEFAULT_STATE_DIRECTORY)
        limit = section.get("outbox_limit", 100_000)
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 100:
            self.error(("journal", "outbox_limit"), "a whole number of messages, at least 100")
            limit = 100_000
        return Path(directory), limit

    def _display(self, section: object) -> None:
        """`[display]` is the pit display's (daemon/display/config.py): its shape is checked
        here too, so check-config reports every mistake at once; its files are not read."""
        from daemon.display.config import check_display

        for where, message in check_display(section, read_files=False)[1]:
            self.error(where, message)

    def _logging(self, section: object) -> LoggingConfig:
        if not isinstance(section, dict):
            self.error(("logging",), "must be a table")
            return LoggingConfig()
        for key in sorted(set(section) - {"format", "level", "raw_frames"}):
            self.error(("logging", key), "unknown setting; settings: format, level, raw_frames")
        fmt = section.get("format", "auto")
        level = section.get("level", "info")
        if fmt not in LOG_FORMATS:
            self.error(("logging", "format"), f"one of {list(LOG_FORMATS)}")
            fmt = "auto"
        if level not in LOG_LEVELS:
            self.error(("logging", "level"), f"one of {list(LOG_LEVELS)}")
            level = "info"
        raw = section.get("raw_frames", False)
        if not isinstance(raw, bool):
            self.error(("logging", "raw_frames"), "true or false")
            raw = False
        return LoggingConfig(fmt, level, raw)
