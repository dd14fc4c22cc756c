"""The dealer console's configuration: `[console]` in the same TOML file as the daemon's.

One console serves one table: `[console] table` names it, and the table's own `[[table]]`
section of the same file says its game, seats and limits (what the page offers). It reads
the broker's address, TLS and base topic from `[mqtt]`, never the daemon's credentials: it
connects as the table's console user, which may publish only to that table's `request/#`
(docs/mosquitto/acl).

    [console]
    table = "bj-1"
    bind = "127.0.0.1"
    port = 8090
    username = "console-bj-1"
    password_file = "/etc/shoe2mqtt/console-bj-1-password"
    dealers_file = "/etc/shoe2mqtt/console-bj-1-dealers"   # name:PIN, one dealer a line
    chips = ["5.00", "25.00", "100.00", "500.00"]

    [console.https]
    cert_file = "/etc/shoe2mqtt/console.crt"
    key_file = "/etc/shoe2mqtt/console.key"

The dealers file is read with the one secret reader (daemon/mqtt/secret.py), like every
password file: each line `name:secret`, a PIN or a password, `#` lines ignored.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from daemon.configuration.file import ConfigErrors, ConfigFileError, read_toml
from daemon.configuration.problems import Problem, Problems
from daemon.configuration.served_page import (
    DEFAULT_BIND,
    HTTPS_KEYS,
    beyond_shape,
    broker,
    check_listening,
    check_no_password,
    https_context,
    logging_choices,
)
from daemon.mqtt.errors import MqttSettingsError
from daemon.mqtt.secret import Secret, UnreadableSecret, read_secret_file
from rules.config import TableConfig, describe_value
from rules.errors import ConfigError
from rules.money import AmountError, parse_amount

if TYPE_CHECKING:
    import ssl
    from collections.abc import Mapping

    from daemon.configuration.file import FieldPath
    from daemon.mqtt.settings import MqttSettings
    from rules.money import Cents

DEFAULT_PORT: Final = 8090
DEFAULT_CHIPS: Final = ("5.00", "25.00", "100.00", "500.00")
MAX_DEALERS: Final = 500
MAX_NAME: Final = 32  # characters of a dealer's name: it goes into every request's `by`
_KEYS: Final = frozenset(
    {
        "table",
        "bind",
        "port",
        "username",
        "password_file",
        "client_id",
        "dealers_file",
        "chips",
        "https",
    }
)
_WHERE: Final = ("console",)
_DEALERS_REQUIRED: Final = "required: the file of the dealers' names and PINs"


def setting_names() -> list[str]:
    """Every `[console]` setting, dotted, for the configuration reference."""
    return [
        *(f"console.{key}" for key in sorted(_KEYS - {"https"})),
        *(f"console.https.{key}" for key in sorted(HTTPS_KEYS)),
    ]


@dataclass(frozen=True, slots=True)
class ConsoleSettings:
    table: TableConfig
    dealers: Mapping[str, Secret]  # name → PIN or password
    chips: tuple[Cents, ...]
    bind: str = DEFAULT_BIND
    port: int = DEFAULT_PORT
    https: ssl.SSLContext | None = None


@dataclass(frozen=True, slots=True)
class ConsoleConfig:
    """What `shoe2mqtt console` runs with."""

    path: Path
    mqtt: MqttSettings  # the console user's, never the daemon's
    console: ConsoleSettings
    log_format: str = "auto"
    log_level: str = "info"


def load_console_config(path: Path) -> ConsoleConfig:
    """`[mqtt]` (less the daemon's own settings), `[console]`, its table's `[[table]]` and
    `[logging]` of `path`; every mistake at once, each with its file, line and field."""
    try:
        document, text = read_toml(path)
    except ConfigFileError as exc:
        raise ConfigErrors([exc]) from None
    problems = Problems()
    section = document.get("console")
    if not isinstance(section, dict):
        problems.wrong(_WHERE, "required: a [console] section naming its table")
        section = {}
    settings = _console(section, document.get("table"), problems)
    mqtt = _broker(document.get("mqtt"), section, problems)
    log_format, log_level = logging_choices(document.get("logging"), problems)
    if problems.found or settings is None or mqtt is None:
        raise problems.said_in(path, text).errors()
    return ConsoleConfig(path, mqtt, settings, log_format, log_level)


def check_console(section: object) -> list[Problem]:
    """The shape of `[console]` (absent: nothing to check), without reading its files: the
    daemon's check-config checks it so, as it checks `[display]`."""
    problems = Problems()
    if section is None:
        return []
    if not isinstance(section, dict):
        problems.wrong(_WHERE, "must be a table ([console])", section)
        return problems.found
    _shape(section, problems)
    if not isinstance(section.get("table"), str) or not section.get("table"):
        problems.wrong((*_WHERE, "table"), "required: the id of the table this console serves")
    if not isinstance(section.get("dealers_file"), str) or not section.get("dealers_file"):
        problems.wrong((*_WHERE, "dealers_file"), _DEALERS_REQUIRED)
    https_context(section.get("https"), _WHERE, problems, read=False)
    return problems.found


def file_problems(path: Path) -> list[ConfigFileError]:
    """What `shoe2mqtt console` would refuse in `path` that the check of `[console]`'s shape
    (the daemon's) cannot see: a table it names that the file lacks, its dealers' or
    password file missing, unreadable or malformed, its certificate unreadable. The shape
    and every `[[table]]` are the daemon's own check's to name."""

    def full(section: dict[str, Any], document: dict[str, Any]) -> list[Problem]:
        problems = Problems()
        _console(section, document.get("table"), problems)
        _broker(document.get("mqtt"), section, problems)
        # The shared `[mqtt]` and every `[[table]]` are the daemon's own check's to name: said
        # here too, they would be said twice, the second time as if `run` did not need them.
        theirs = (("table",), ("mqtt",))
        return [problem for problem in problems.found if problem.where[:1] not in theirs]

    return beyond_shape(path, "console", full, check_console)


def _shape(section: dict[str, Any], problems: Problems) -> None:
    problems.unknown(_WHERE, {k: v for k, v in section.items() if k != "password"}, _KEYS)
    check_no_password(section, _WHERE, problems)
    check_listening(section, _WHERE, problems, DEFAULT_PORT)
    _chips(section.get("chips", list(DEFAULT_CHIPS)), problems)


def _console(section: dict[str, Any], tables: object, problems: Problems) -> ConsoleSettings | None:
    _shape(section, problems)
    table = _table(section.get("table"), tables, problems)
    chips = _chips(section.get("chips", list(DEFAULT_CHIPS)), Problems())
    dealers = _dealers(section.get("dealers_file"), problems)
    https = https_context(section.get("https"), _WHERE, problems)
    if problems.found or table is None or chips is None or dealers is None:
        return None
    return ConsoleSettings(
        table,
        dealers,
        chips,
        section.get("bind", DEFAULT_BIND),
        section.get("port", DEFAULT_PORT),
        https,
    )


def _table(table_id: object, tables: object, problems: Problems) -> TableConfig | None:
    where: FieldPath = ("console", "table")
    if not isinstance(table_id, str) or not table_id:
        problems.wrong(where, "required: the id of the table this console serves", table_id)
        return None
    for index, table in enumerate(tables if isinstance(tables, list) else []):
        if isinstance(table, dict) and table.get("id") == table_id:
            try:
                return TableConfig.from_mapping({k: v for k, v in table.items() if k != "shoe"})
            except ConfigError as exc:
                problems.record(("table", index), exc)
                return None
    message = (
        f"no [[table]] with id = {table_id!r} in this file: the console takes the table's "
        "game, seats and limits from it"
    )
    problems.wrong(where, message, table_id)
    return None


def _chips(value: object, problems: Problems) -> tuple[Cents, ...] | None:
    where: FieldPath = ("console", "chips")
    example = 'e.g. ["5.00", "25.00", "100.00"]'
    if not isinstance(value, list) or not 1 <= len(value) <= 8:
        said = f"must be a list of 1 to 8 amounts in quotes, {example}; not {describe_value(value)}"
        problems.wrong(where, said, value)
        return None
    chips = []
    for number, item in enumerate(value, 1):
        try:
            amount = parse_amount(item) if isinstance(item, str) else 0
        except AmountError:
            amount = 0
        if amount <= 0:
            said = (
                f"chip {number} must be an amount above zero in quotes, {example}; "
                f"not {describe_value(item)}"
            )
            problems.wrong(where, said, item)
            return None
        chips.append(amount)
    return tuple(chips)


def parse_dealers(text: str) -> dict[str, Secret]:
    """`name:secret` lines (`#` lines and blank ones skipped); raises ValueError naming the
    first line that is none."""
    dealers: dict[str, Secret] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, colon, secret = line.partition(":")
        name = name.strip()
        if not colon or not name or not secret or len(name) > MAX_NAME or not name.isprintable():
            raise ValueError(
                f"line {number}: not `name:PIN` (a name of 1 to {MAX_NAME} characters, a colon, "
                "the dealer's PIN or password)"
            )
        if name in dealers:
            raise ValueError(f"line {number}: {name!r} is named twice")
        dealers[name] = Secret(secret)
    if not dealers:
        raise ValueError("no dealer in it: one `name:PIN` line for each dealer")
    if len(dealers) > MAX_DEALERS:
        raise ValueError(f"more than {MAX_DEALERS} dealers")
    return dealers


def _dealers(value: object, problems: Problems) -> dict[str, Secret] | None:
    where: FieldPath = ("console", "dealers_file")
    if not isinstance(value, str) or not value:
        problems.wrong(where, _DEALERS_REQUIRED, value)
        return None
    try:
        text = read_secret_file(Path(value), reader="the console").reveal()
        return parse_dealers(text)
    except UnreadableSecret as exc:
        problems.wrong(where, exc.reason, value)
    except ValueError as exc:
        problems.wrong(where, f"{value}: {exc}", value)
    return None


def _broker(section: object, console: dict[str, Any], problems: Problems) -> MqttSettings | None:
    settings = broker(section, problems)
    if settings is None:
        return None
    where: FieldPath = _WHERE
    username, password = console.get("username"), None
    if username is not None and (not isinstance(username, str) or not username):
        problems.wrong((*where, "username"), "the console's broker user, in quotes", username)
        return None
    password_file = console.get("password_file")
    if password_file is not None:
        if username is None:
            message = "a password needs its broker user: set console.username"
            problems.wrong((*where, "password_file"), message)
            return None
        try:
            password = read_secret_file(Path(str(password_file)), reader="the console")
        except UnreadableSecret as exc:
            problems.wrong((*where, "password_file"), exc.reason, password_file)
            return None
    client_id = console.get("client_id") or f"shoe2mqtt-console-{console.get('table')}"
    try:
        return dataclasses.replace(
            settings, client_id=str(client_id), username=username, password=password
        )
    except MqttSettingsError as exc:
        problems.wrong((*where, exc.field.rpartition(".")[2]), exc.message)
        return None
