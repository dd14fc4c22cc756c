"""The service configuration: one TOML file, every table with its shoe and its game.

`load_config` returns a `ServiceConfig` or raises `ConfigErrors`: every mistake in the file,
each with its file, line and field, and apart from them every problem of this host (a file
the configuration names that is missing or unreadable, an environment variable unset). Every
field of every section and table is judged on its own, so one run of `shoe2mqtt
check-config` shows them all. Every value is typed and bounded; the bounds, and why each is
where it is, are in docs/configuration.md.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from daemon.configuration.file import (
    LOG_FORMATS,
    LOG_LEVELS,
    LOGGING_KEYS,
    ConfigErrors,
    ConfigFileError,
    read_toml,
)
from daemon.configuration.problems import ABSENT, Kind, Problems
from daemon.configuration.surveillance import SURVEILLANCE_KEYS, check_surveillance
from daemon.configuration.tables import (
    MAX_TABLES,
    SHOE_KEYS,
    TRANSPORTS,
    ShoeConfig,
    TableReader,
    TableSetup,
)
from daemon.mqtt.errors import MqttSettingsError
from daemon.mqtt.settings import MqttSettings
from daemon.numbers.settings import NUMBERS_KEYS, NumbersConfig, read_numbers
from daemon.request_gate import RequestLimits
from daemon.table.surveillance import SurveillanceConfig
from rules.config import describe_value

if TYPE_CHECKING:
    from collections.abc import Mapping

# Each table's settings and its shoe's are read in daemon/configuration/tables.py; these
# names have always been imported from here.
__all__ = [
    "MAX_TABLES",
    "LoggingConfig",
    "MetricsConfig",
    "ServiceConfig",
    "ShoeConfig",
    "TableSetup",
    "TimingConfig",
    "known_settings",
    "load_config",
]

DEFAULT_STATE_DIRECTORY = Path("/var/lib/shoe2mqtt")
DEFAULT_OUTBOX_LIMIT: Final = 100_000
# The outbox holds in memory what the broker has not acknowledged: 450 bytes a settlement
# (measured), more for a round snapshot. Fewer than 100 and one broker restart fills it; a
# million is half a gigabyte or more, past what a table PC should give it.
OUTBOX_LIMITS: Final = range(100, 1_000_001)
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
_JOURNAL_KEYS = frozenset(
    {"state_directory", "outbox_limit", "sync", "keep_days", "archive_directory"}
)
_METRICS_KEYS = frozenset({"enabled", "host", "port"})
_REQUESTS_KEYS = frozenset({"rate", "burst", "queue"})
_TIMING_KEYS = frozenset({"declaration_wait", "shoe_silence"})


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
    from daemon.mqtt.section import setting_names as mqtt_settings
    from rules.config import TABLE_KEYS

    shoe = set(SHOE_KEYS).union(*(keys for _, keys in TRANSPORTS.values()))
    return sorted(
        [
            *mqtt_settings(),
            *display_settings(),
            *console_settings(),
            *(f"journal.{key}" for key in _JOURNAL_KEYS),
            *(f"logging.{key}" for key in LOGGING_KEYS),
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
    """Reads each section of the file into its settings, every problem told to one collector."""

    def __init__(
        self, path: Path, text: str, environ: Mapping[str, str], *, read_host_files: bool
    ) -> None:
        self.path = path
        self.text = text
        self.environ = environ
        self.read_host_files = read_host_files
        self.problems = Problems()

    def check(self, document: dict[str, Any]) -> ServiceConfig:
        for key in sorted(set(document) - set(_TOP_KEYS)):
            self.problems.wrong(
                (key,), f"unknown section; sections: {', '.join(_TOP_KEYS)}", document[key]
            )
        mqtt = self._mqtt(document.get("mqtt"))
        reader = TableReader(self.problems, read_host_files=self.read_host_files)
        tables = reader.tables(document.get("table"))
        state_directory, outbox_limit, keeping = self._journal(document.get("journal"))
        logging = self._logging(document.get("logging"))
        self._display(document.get("display"), document.get("console"))
        metrics = self._metrics(document.get("metrics"))
        requests = self._requests(document.get("requests"))
        timing = self._timing(document.get("timing"))
        numbers = self._numbers(document.get("numbers"))
        surveillance = check_surveillance(self.problems, document.get("surveillance"))
        said = self.problems.said_in(self.path, self.text)
        if self.problems.blocking() or mqtt is None:
            raise said.errors()
        return ServiceConfig(
            self.path,
            mqtt,
            tables,
            state_directory,
            outbox_limit,
            logging,
            tuple(said.of_kind(Kind.DEPRECATED)),
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
            self.problems.wrong(
                ("mqtt",),
                "required: an [mqtt] section with at least `host`"
                + ("" if section is None else f", not {describe_value(section)}"),
                ABSENT if section is None else section,
            )
            return None
        try:
            return MqttSettings.from_mapping(
                section, environ=self.environ, read_files=self.read_host_files
            )
        except MqttSettingsError as exc:
            self.problems.record((), exc)
            return None

    def _journal(self, value: object) -> tuple[Path, int, dict[str, Any]]:
        section = self.problems.section("journal", value, _JOURNAL_KEYS)
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
        section = self.problems.section("logging", value, LOGGING_KEYS)
        if section is None:
            return LoggingConfig()
        return LoggingConfig(
            section.choice("format", "auto", LOG_FORMATS),
            section.choice("level", "info", LOG_LEVELS),
            section.flag("raw_frames", default=False),
        )

    def _metrics(self, value: object) -> MetricsConfig:
        default = MetricsConfig()
        section = self.problems.section("metrics", value, _METRICS_KEYS)
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
        section = self.problems.section("requests", value, _REQUESTS_KEYS)
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
        section = self.problems.section("timing", value, _TIMING_KEYS)
        if section is None:
            return default
        return TimingConfig(
            section.whole_number("declaration_wait", default.declaration_wait, DECLARATION_WAITS),
            section.whole_number("shoe_silence", default.shoe_silence, SHOE_SILENCES),
        )

    def _numbers(self, value: object) -> NumbersConfig:  # daemon/numbers/settings.py
        known = value if self.problems.section("numbers", value, NUMBERS_KEYS) is not None else None
        return read_numbers(
            known or {}, lambda key, why: self.problems.wrong(("numbers", key), why)
        )

    def _display(self, display: object, console: object) -> None:
        """The display's and the console's sections: their shape only, their files unread."""
        from daemon.dealer_console.config import check_console
        from daemon.display.config import check_display

        self.problems.extend(check_display(display, read_files=False)[1])
        self.problems.extend(check_console(console))
