"""The service configuration: one TOML file, every table with its shoe and its game.

`load_config` returns a `ServiceConfig` or raises `ConfigErrors`: every mistake in the file,
each with its file, line and field, and apart from them every problem of this host (a file
the configuration names that is missing or unreadable, an environment variable unset). Every
field of every section and table is judged on its own, so one run of `shoe2mqtt
check-config` shows them all. Every value is typed and bounded; the bounds, and why each is
where it is, are in docs/configuration.md.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from daemon.configuration.file import (
    LOG_FORMATS,
    LOG_LEVELS,
    ConfigErrors,
    ConfigFileError,
    FieldLines,
    FieldPath,
    format_field,
    read_toml,
)
from daemon.configuration.surveillance import SURVEILLANCE_KEYS, check_surveillance
from daemon.mqtt.errors import MqttSettingsError
from daemon.mqtt.settings import MqttSettings
from daemon.numbers.settings import NUMBERS_KEYS, NumbersConfig, read_numbers
from daemon.request_gate import RequestLimits
from daemon.table.surveillance import SurveillanceConfig
from drivers.captures import CaptureError, read_capture
from drivers.errors import DriverError
from drivers.registry import available_drivers, load_decoder_class
from drivers.transports import (
    CaptureSettings,
    SerialSettings,
    SettingsError,
    TcpSettings,
    UsbSettings,
    is_absolute_path,
    is_host,
)
from rules.config import TableConfig, describe_value, out_of_range, unknown_setting
from rules.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from drivers.transports import TransportSettings

DEFAULT_STATE_DIRECTORY = Path("/var/lib/shoe2mqtt")
# The scale goal: one process serves 256 tables (a server reading serial device
# servers over TCP) ready within 3 s. More tables go to more instances (shoe2mqtt@.service).
MAX_TABLES: Final = 256
DEFAULT_OUTBOX_LIMIT: Final = 100_000
# The outbox holds in memory what the broker has not acknowledged: 450 bytes a settlement
# (measured), more for a round snapshot. Fewer than 100 and one broker restart fills it; a
# million is half a gigabyte or more, past what a table PC should give it.
OUTBOX_LIMITS: Final = range(100, 1_000_001)
# Seconds without a byte before a shoe's link counts as lost: below a second a heartbeat's
# jitter would drop it, above an hour the setting says nothing.
IDLE_TIMEOUT_SECONDS: Final = (1.0, 3600.0)
# `[metrics] port`: any TCP port; 9917 unless told (docs/deploy.md, "Metrics").
METRICS_PORTS: Final = range(1, 65536)
# [journal] sync: "full" syncs the log at every commit (a card survives a power cut),
# "normal" at SQLite's checkpoints only (it survives a crash); docs/durability.md.
JOURNAL_SYNC: Final = ("full", "normal")
# Days a closed round stays in the live journal before the archive takes it: at least one
# (the archive takes whole days), at most ten years (the database then holds what it holds).
DEFAULT_KEEP_DAYS: Final = 30
KEEP_DAYS: Final = range(1, 3651)
# `[requests] rate`, `burst`, `queue` (daemon.request_gate): at least one, and no more than a
# table could take in a second.
REQUEST_LIMITS: Final = range(1, 10_001)
# `[timing]`: seconds a card waits for the console's declaration before it is a doubt (above a
# dealer's tap and a broker's round trip, below a supervisor's patience), and seconds a round
# may wait for a card while the shoe says nothing before the pit hears (far longer than any
# deal takes, short enough to catch a cable pulled mid-round). docs/configuration.md.
DECLARATION_WAITS: Final = range(5, 601)
SHOE_SILENCES: Final = range(10, 3601)

_TOP_KEYS = ("console", "display", "journal", "logging", "metrics", "mqtt", "numbers",
             "requests", "surveillance", "table", "timing")  # fmt: skip
_SHOE_KEYS = frozenset({"protocol", "driver", "transport", "idle_timeout"})
_JOURNAL_KEYS = frozenset(
    {"state_directory", "outbox_limit", "sync", "keep_days", "archive_directory"}
)
_LOGGING_KEYS = frozenset({"format", "level", "raw_frames"})
_METRICS_KEYS = frozenset({"enabled", "host", "port"})
_REQUESTS_KEYS = frozenset({"rate", "burst", "queue"})
_TIMING_KEYS = frozenset({"declaration_wait", "shoe_silence"})
_TRANSPORTS: Final[dict[str, tuple[type[TransportSettings], frozenset[str]]]] = {
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


@dataclass(frozen=True, slots=True)
class LoggingConfig:
    format: str = "auto"  # auto: console on a terminal, JSON Lines otherwise (journald)
    level: str = "info"
    raw_frames: bool = False  # frame hex at debug: exposes unrevealed cards (daemon/system/logs.py)


@dataclass(frozen=True, slots=True)
class MetricsConfig:
    """`[metrics]`: the Prometheus endpoint (docs/deploy.md, "Metrics"); off unless enabled."""

    enabled: bool = False
    host: str = "127.0.0.1"  # this PC only, unless the site opens it to its Prometheus
    port: int = 9917


@dataclass(frozen=True, slots=True)
class TimingConfig:
    """`[timing]`: how long a table waits before it tells someone (daemon.table.timers)."""

    declaration_wait: int = 30  # a held card, for the console's declaration: then a doubt
    shoe_silence: int = 120  # a round, for a card while the shoe is silent: then a notice

    def seconds(self) -> dict[str, float]:
        """Each table timer's length, by the kind `TableService.timers` names."""
        return {"declaration": self.declaration_wait, "silence": self.shoe_silence}


@dataclass(frozen=True, slots=True)
class ServiceConfig:
    path: Path
    mqtt: MqttSettings
    tables: tuple[TableSetup, ...]
    state_directory: Path = DEFAULT_STATE_DIRECTORY
    outbox_limit: int = DEFAULT_OUTBOX_LIMIT
    logging: LoggingConfig = field(default_factory=LoggingConfig)
    # Settings that work but are on their way out, each with what replaces it: check-config
    # prints them and the daemon logs them, so a site's old file never breaks without warning.
    deprecations: tuple[ConfigFileError, ...] = ()
    metrics: MetricsConfig = field(default_factory=MetricsConfig)
    journal_sync: str = "full"
    keep_days: int = DEFAULT_KEEP_DAYS
    archive_directory: Path | None = None  # None: `archive` in the state directory
    requests: RequestLimits = field(default_factory=RequestLimits)  # [requests], per table
    timing: TimingConfig = field(default_factory=TimingConfig)
    numbers: NumbersConfig = field(default_factory=NumbersConfig)
    surveillance: SurveillanceConfig = field(default_factory=SurveillanceConfig)
    # SHA-256 of the bytes these settings were read from (what `sha256sum` prints for the
    # file); None for a configuration built in memory (the demo's).
    sha256: str | None = None
    # `[display]` as written, in a canonical form: the daemon does not run it, but a reload
    # says when it changed (the display reads it at its own start: daemon.configuration.reload).
    display_section: str = "null"

    @property
    def archive_path(self) -> Path:
        return self.archive_directory or self.state_directory / "archive"


def load_config(
    path: Path, *, environ: Mapping[str, str] | None = None, read_host_files: bool = True
) -> ServiceConfig:
    """The checked configuration in `path`, or `ConfigErrors` with everything wrong.

    `read_host_files=False` is for commands that never connect to the broker (`journal`,
    `analyze`, `simulate`): the TLS and password files are then neither read nor required,
    and the settings carry no password.
    """
    try:
        document, text = read_toml(path)
    except ConfigFileError as exc:
        raise ConfigErrors([exc]) from None
    environ = os.environ if environ is None else environ
    return _Checker(path, text, environ, read_host_files=read_host_files).check(document)


def known_settings() -> list[str]:
    """Every setting the checker reads, dotted as docs/configuration.md lists them.

    Per-kind names are written with a placeholder: `table.limits.<wager>.min`,
    `table.paytable.<line>`.
    """
    from daemon.dealer_console.config import setting_names as console_settings
    from daemon.display.config import setting_names as display_settings
    from daemon.mqtt.settings import setting_names as mqtt_settings
    from rules.config import TABLE_KEYS

    shoe = set(_SHOE_KEYS).union(*(keys for _, keys in _TRANSPORTS.values()))
    return sorted(
        [
            *mqtt_settings(),
            *display_settings(),
            *console_settings(),
            *(f"journal.{key}" for key in _JOURNAL_KEYS),
            *(f"logging.{key}" for key in _LOGGING_KEYS),
            *(f"metrics.{key}" for key in _METRICS_KEYS),
            *(f"requests.{key}" for key in _REQUESTS_KEYS),
            *(f"timing.{key}" for key in _TIMING_KEYS),
            *(f"numbers.{key}" for key in NUMBERS_KEYS),
            *(f"surveillance.{key}" for key in SURVEILLANCE_KEYS),
            *(f"table.{key}" for key in TABLE_KEYS - {"limits", "paytable"}),
            "table.limits.<wager>.min",
            "table.limits.<wager>.max",
            "table.paytable",
            "table.paytable.<line>",
            *(f"table.shoe.{key}" for key in shoe),
        ]
    )


class _Checker:
    def __init__(
        self, path: Path, text: str, environ: Mapping[str, str], *, read_host_files: bool
    ) -> None:
        self.path = path
        self.text = text
        self.lines = FieldLines(text)
        self.environ = environ
        self.read_host_files = read_host_files
        self.errors: list[ConfigFileError] = []
        self.host_problems: list[ConfigFileError] = []
        self.deprecations: list[ConfigFileError] = []
        self._protocols: list[str] | None = None
        self._loadable: dict[str, str | None] = {}  # protocol → why it does not load

    def error(self, where: FieldPath, message: str) -> None:
        self.errors.append(self._at(where, message))

    def host_problem(self, where: FieldPath, message: str) -> None:
        self.host_problems.append(self._at(where, message))

    def deprecated(self, where: FieldPath, message: str) -> None:
        self.deprecations.append(self._at(where, message))

    def _at(self, where: FieldPath, message: str) -> ConfigFileError:
        return ConfigFileError(
            str(self.path), self.lines.line_of(where), format_field(where), message
        )

    def section(self, name: str, value: object, known: frozenset[str]) -> _Section | None:
        """A `[name]` table of the daemon's own settings, or None (and a mistake) if it is not
        a table; absent, it is an empty one: every setting takes its default."""
        if value is None:
            value = {}
        if not isinstance(value, dict):
            self.error((name,), f"must be a table ([{name}]), not {describe_value(value)}")
            return None
        return _Section(self, (name,), value, known)

    def check(self, document: dict[str, Any]) -> ServiceConfig:
        for key in sorted(set(document) - set(_TOP_KEYS)):
            self.error((key,), f"unknown section; sections: {', '.join(_TOP_KEYS)}")
        mqtt = self._mqtt(document.get("mqtt"))
        tables = self._tables(document.get("table"))
        state_directory, outbox_limit, keeping = self._journal(document.get("journal"))
        logging = self._logging(document.get("logging"))
        self._display(document.get("display"), document.get("console"))
        metrics = self._metrics(document.get("metrics"))
        requests = self._requests(document.get("requests"))
        timing = self._timing(document.get("timing"))
        numbers = self._numbers(document.get("numbers"))
        surveillance = check_surveillance(self, document.get("surveillance"))
        if self.errors or self.host_problems or mqtt is None:
            raise ConfigErrors(self.errors, self.host_problems)
        return ServiceConfig(
            self.path,
            mqtt,
            tables,
            state_directory,
            outbox_limit,
            logging,
            tuple(self.deprecations),
            metrics=metrics,
            **keeping,
            requests=requests,
            timing=timing,
            numbers=numbers,
            surveillance=surveillance,
            # The text was decoded from the file's bytes strictly, so this is their hash.
            sha256=hashlib.sha256(self.text.encode("utf-8")).hexdigest(),
            display_section=json.dumps(document.get("display"), sort_keys=True, default=str),
        )

    def _mqtt(self, section: object) -> MqttSettings | None:
        if not isinstance(section, dict):
            self.error(
                ("mqtt",),
                "required: an [mqtt] section with at least `host`"
                + ("" if section is None else f", not {describe_value(section)}"),
            )
            return None
        try:
            return MqttSettings.from_mapping(
                section, environ=self.environ, read_files=self.read_host_files
            )
        except MqttSettingsError as exc:
            for problem in exc.problems:
                report = self.host_problem if problem.host else self.error
                report(tuple(problem.field.split(".")), problem.message)
            return None

    def _tables(self, section: object) -> tuple[TableSetup, ...]:
        if not isinstance(section, list) or not section:
            self.error(
                ("table",),
                "required: at least one [[table]] section"
                + ("" if section is None else f", not {describe_value(section)}"),
            )
            return ()
        if len(section) > MAX_TABLES:
            self.error(
                ("table",),
                f"{len(section)} tables: one process serves at most {MAX_TABLES}; "
                "give the others to another instance (docs/deploy.md)",
            )
        setups: list[TableSetup] = []
        seen: dict[str, int] = {}
        devices: dict[tuple[object, ...], int] = {}  # a shoe's device → the table it serves
        for index, table in enumerate(section):
            if not isinstance(table, dict):
                self.error(
                    ("table", index),
                    f"must be a [[table]] section of settings, not {describe_value(table)}",
                )
                continue
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
                self.error(
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
            for problem in exc.problems:
                self.error(("table", index, *problem.field.split(".")), problem.detail)
        shoe = self._shoe(index, table.get("shoe"))
        if game is None or shoe is None:
            return None
        return TableSetup(game, shoe)

    def _shoe(self, index: int, shoe: object) -> ShoeConfig | None:
        where: FieldPath = ("table", index, "shoe")
        if not isinstance(shoe, dict):
            self.error(
                where,
                "required: a [table.shoe] section with protocol, transport and its settings"
                + ("" if shoe is None else f", not {describe_value(shoe)}"),
            )
            return None
        protocol = self._protocol(where, shoe)
        transport = self._transport(where, shoe)
        idle = shoe.get("idle_timeout")
        low, high = IDLE_TIMEOUT_SECONDS
        if idle is not None and not _within(idle, low, high):
            self.error(
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
            self.host_problem((*where, "path"), f"cannot read {capture.path!r}: {reason}")
        except CaptureError as exc:
            self.host_problem((*where, "path"), str(exc))
        else:
            if recorded != protocol:
                self.host_problem(
                    (*where, "path"),
                    f"{capture.path!r} was recorded from a shoe of protocol {recorded!r}, "
                    f"not this table's {protocol!r}",
                )

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
        if self._protocols is None:  # asked once: each asking scans the installed packages
            self._protocols = available_drivers()
        if not isinstance(protocol, str) or protocol not in self._protocols:
            self.error((*where, key), _not_one_of("protocol", protocol, self._protocols))
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
            self.host_problem((*where, key), failure)
            return None
        return protocol

    def _transport(self, where: FieldPath, shoe: dict[str, Any]) -> TransportSettings | None:
        kind = shoe.get("transport")
        if not isinstance(kind, str) or kind not in _TRANSPORTS:
            self.error((*where, "transport"), _not_one_of("transport", kind, list(_TRANSPORTS)))
            return None
        settings_class, keys = _TRANSPORTS[kind]
        for key in sorted(set(shoe) - keys - _SHOE_KEYS):
            self.error(
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
            self.error((*where, name), f"required for a {kind} shoe")
            given[name] = None  # a stand-in, so that the other settings are judged too
        try:
            return settings_class(**given)
        except SettingsError as exc:
            for problem in exc.problems:
                if problem.field not in missing:
                    self.error((*where, problem.field), problem.message)
        return None

    def _journal(self, value: object) -> tuple[Path, int, dict[str, Any]]:
        section = self.section("journal", value, _JOURNAL_KEYS)
        if section is None:
            return DEFAULT_STATE_DIRECTORY, DEFAULT_OUTBOX_LIMIT, {}
        state_directory = section.directory("state_directory", DEFAULT_STATE_DIRECTORY)
        keeping = {
            "journal_sync": section.choice("sync", "full", JOURNAL_SYNC),
            "keep_days": section.whole_number("keep_days", DEFAULT_KEEP_DAYS, KEEP_DAYS),
            "archive_directory": section.directory(
                "archive_directory", state_directory / "archive"
            ),
        }
        return (
            state_directory,
            section.whole_number("outbox_limit", DEFAULT_OUTBOX_LIMIT, OUTBOX_LIMITS),
            keeping,
        )

    def _logging(self, value: object) -> LoggingConfig:
        section = self.section("logging", value, _LOGGING_KEYS)
        if section is None:
            return LoggingConfig()
        return LoggingConfig(
            section.choice("format", "auto", LOG_FORMATS),
            section.choice("level", "info", LOG_LEVELS),
            section.flag("raw_frames", default=False),
        )

    def _metrics(self, value: object) -> MetricsConfig:
        default = MetricsConfig()
        section = self.section("metrics", value, _METRICS_KEYS)
        if section is None:
            return default
        return MetricsConfig(
            section.flag("enabled", default=default.enabled),
            section.address("host", default.host),
            section.whole_number("port", default.port, METRICS_PORTS),
        )

    def _requests(self, value: object) -> RequestLimits:
        """`[requests]`: per table, how many requests a second, at once, and waiting."""
        default = RequestLimits()
        section = self.section("requests", value, _REQUESTS_KEYS)
        if section is None:
            return default
        return RequestLimits(
            float(section.whole_number("rate", round(default.rate), REQUEST_LIMITS)),
            section.whole_number("burst", default.burst, REQUEST_LIMITS),
            section.whole_number("queue", default.queue, REQUEST_LIMITS),
        )

    def _timing(self, value: object) -> TimingConfig:
        """`[timing]`: seconds a card waits for a declaration, and a round for the shoe."""
        default = TimingConfig()
        section = self.section("timing", value, _TIMING_KEYS)
        if section is None:
            return default
        return TimingConfig(
            section.whole_number("declaration_wait", default.declaration_wait, DECLARATION_WAITS),
            section.whole_number("shoe_silence", default.shoe_silence, SHOE_SILENCES),
        )

    def _numbers(self, value: object) -> NumbersConfig:  # daemon/numbers/settings.py
        known = value if self.section("numbers", value, NUMBERS_KEYS) is not None else None
        return read_numbers(known or {}, lambda key, why: self.error(("numbers", key), why))

    def _display(self, display: object, console: object) -> None:
        """The display's and the console's sections: their shape only, their files unread."""
        from daemon.dealer_console.config import check_console
        from daemon.display.config import check_display

        for where, text in (*check_display(display, read_files=False)[1], *check_console(console)):
            self.error(where, text)


class _Section:
    """One table of the daemon's own settings, read a key at a time.

    Each reader returns the value, or the default after recording why the value is wrong,
    so one pass reports every mistake in the section.
    """

    def __init__(
        self, checker: _Checker, where: FieldPath, values: dict[str, Any], known: frozenset[str]
    ) -> None:
        self._checker = checker
        self._where = where
        self._values = values
        for key in sorted(set(values) - known):
            self._refuse(key, unknown_setting(key, known))

    def _refuse(self, key: str, message: str) -> None:
        self._checker.error((*self._where, key), message)

    def whole_number(self, key: str, default: int, allowed: range) -> int:
        value = self._values.get(key, default)
        low, high = allowed.start, allowed.stop - 1
        if isinstance(value, bool) or not isinstance(value, int):
            self._refuse(
                key, f"must be a whole number from {low} to {high}, not {describe_value(value)}"
            )
        elif value not in allowed:
            self._refuse(key, out_of_range(low, high, value))
        else:
            return value
        return default

    def choice(self, key: str, default: str, choices: tuple[str, ...]) -> str:
        value = self._values.get(key, default)
        if not isinstance(value, str) or value not in choices:
            self._refuse(key, f"must be one of {', '.join(choices)}; not {describe_value(value)}")
            return default
        return value

    def flag(self, key: str, *, default: bool) -> bool:
        value = self._values.get(key, default)
        if not isinstance(value, bool):
            self._refuse(key, f"must be true or false, not {describe_value(value)}")
            return default
        return value

    def address(self, key: str, default: str) -> str:
        """A host name or IP address to listen on, as `[mqtt] host` is checked."""
        value = self._values.get(key, default)
        if not is_host(value):
            self._refuse(
                key, f"must be a host name or IP address to listen on, not {describe_value(value)}"
            )
            return default
        return str(value)

    def directory(self, key: str, default: Path) -> Path:
        """An absolute path: relative, it would name a different place under systemd (whose
        working directory is `/`) than where check-config was run."""
        value = self._values.get(key, str(default))
        if not is_absolute_path(value):
            self._refuse(key, f"must be an absolute directory path, not {describe_value(value)}")
            return default
        return Path(value)


def _not_one_of(what: str, value: object, names: list[str]) -> str:
    """Why `value` does not name one of `names`: missing, not a name, or unknown."""
    if value is None:
        problem = "required"
    elif isinstance(value, str):
        problem = f"unknown {what} {value[:40]!r}"
    else:
        problem = f"a {what} name in quotes, not {describe_value(value)}"
    return f"{problem}; {what}s: {', '.join(names)}"


def _within(value: object, low: float, high: float) -> bool:
    """A number (not a boolean, not NaN) from `low` to `high`."""
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and low <= value <= high  # NaN compares false with everything
    )
