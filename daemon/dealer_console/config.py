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
import ipaddress
import os
import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from daemon.configuration.file import (
    LOG_FORMATS,
    LOG_LEVELS,
    ConfigErrors,
    ConfigFileError,
    FieldPath,
    format_field,
    locate,
    read_toml,
)
from daemon.mqtt.errors import MqttSettingsError
from daemon.mqtt.secret import Secret, UnreadableSecret, read_secret_file
from daemon.mqtt.settings import MqttSettings
from rules.config import TableConfig
from rules.errors import ConfigError
from rules.money import AmountError, parse_amount

if TYPE_CHECKING:
    from collections.abc import Mapping

    from rules.money import Cents

DEFAULT_BIND: Final = "127.0.0.1"
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
_HTTPS_KEYS: Final = frozenset({"cert_file", "key_file"})
_DAEMONS_OWN: Final = frozenset({"node", "client_id", "username", "password_file", "password_env"})
_DAEMONS_OWN_TLS: Final = frozenset({"cert_file", "key_file"})

Mistake = tuple[FieldPath, str]


def setting_names() -> list[str]:
    """Every `[console]` setting, dotted, for the configuration reference."""
    return [
        *(f"console.{key}" for key in sorted(_KEYS - {"https"})),
        *(f"console.https.{key}" for key in sorted(_HTTPS_KEYS)),
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
    mistakes: list[Mistake] = []
    section = document.get("console")
    if not isinstance(section, dict):
        mistakes.append((("console",), "required: a [console] section naming its table"))
        section = {}
    settings = _console(section, document.get("table"), mistakes)
    mqtt = _broker(document.get("mqtt"), section, mistakes)
    log_format, log_level = _logging(document.get("logging", {}), mistakes)
    if mistakes or settings is None or mqtt is None:
        raise ConfigErrors(
            [
                ConfigFileError(str(path), locate(text, where), format_field(where), message)
                for where, message in mistakes
            ]
        )
    return ConsoleConfig(path, mqtt, settings, log_format, log_level)


def check_console(section: object) -> list[Mistake]:
    """The shape of `[console]` (absent: nothing to check), without reading its files: the
    daemon's check-config checks it so, as it checks `[display]`."""
    if section is None:
        return []
    if not isinstance(section, dict):
        return [(("console",), "must be a table ([console])")]
    mistakes: list[Mistake] = []
    _shape(section, mistakes)
    if not isinstance(section.get("table"), str) or not section.get("table"):
        mistakes.append((("console", "table"), "required: the id of the table this console serves"))
    if not isinstance(section.get("dealers_file"), str) or not section.get("dealers_file"):
        mistakes.append((("console", "dealers_file"), "required: the file of the dealers' PINs"))
    https = section.get("https")
    if https is not None and (not isinstance(https, dict) or set(https) != _HTTPS_KEYS):
        mistakes.append((("console", "https"), "a table with cert_file and key_file"))
    return mistakes


def _shape(section: dict[str, Any], mistakes: list[Mistake]) -> None:
    def wrong(key: str, message: str) -> None:
        mistakes.append((("console", key), message))

    for key in sorted(set(section) - _KEYS - {"password"}):
        wrong(key, f"unknown setting; settings: {', '.join(sorted(_KEYS))}")
    if "password" in section:
        wrong("password", "the password must not be in this file: use password_file")
    bind = section.get("bind", DEFAULT_BIND)
    if not isinstance(bind, str) or not _is_address(bind):
        wrong("bind", "an IP address to listen on, e.g. '127.0.0.1' or '0.0.0.0'")
    port = section.get("port", DEFAULT_PORT)
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        wrong("port", "a whole number from 1 to 65535")
    _chips(section.get("chips", list(DEFAULT_CHIPS)), mistakes)


def _console(
    section: dict[str, Any], tables: object, mistakes: list[Mistake]
) -> ConsoleSettings | None:
    _shape(section, mistakes)
    table = _table(section.get("table"), tables, mistakes)
    chips = _chips(section.get("chips", list(DEFAULT_CHIPS)), [])
    dealers = _dealers(section.get("dealers_file"), mistakes)
    https = _https(section.get("https"), mistakes)
    if mistakes or table is None or chips is None or dealers is None:
        return None
    return ConsoleSettings(
        table,
        dealers,
        chips,
        section.get("bind", DEFAULT_BIND),
        section.get("port", DEFAULT_PORT),
        https,
    )


def _table(table_id: object, tables: object, mistakes: list[Mistake]) -> TableConfig | None:
    where: FieldPath = ("console", "table")
    if not isinstance(table_id, str) or not table_id:
        mistakes.append((where, "required: the id of the table this console serves"))
        return None
    for index, table in enumerate(tables if isinstance(tables, list) else []):
        if isinstance(table, dict) and table.get("id") == table_id:
            try:
                return TableConfig.from_mapping({k: v for k, v in table.items() if k != "shoe"})
            except ConfigError as exc:
                mistakes.extend(
                    (("table", index, *p.field.split(".")), p.detail) for p in exc.problems
                )
                return None
    message = (
        f"no [[table]] with id = {table_id!r} in this file: the console takes the table's "
        "game, seats and limits from it"
    )
    mistakes.append((where, message))
    return None


def _chips(value: object, mistakes: list[Mistake]) -> tuple[Cents, ...] | None:
    where: FieldPath = ("console", "chips")
    message = 'a list of 1 to 8 amounts in quotes, e.g. ["5.00", "25.00", "100.00"]'
    if not isinstance(value, list) or not 1 <= len(value) <= 8:
        mistakes.append((where, message))
        return None
    chips = []
    for item in value:
        try:
            amount = parse_amount(item) if isinstance(item, str) else 0
        except AmountError:
            amount = 0
        if amount <= 0:
            mistakes.append((where, message))
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


def _dealers(value: object, mistakes: list[Mistake]) -> dict[str, Secret] | None:
    where: FieldPath = ("console", "dealers_file")
    if not isinstance(value, str) or not value:
        mistakes.append((where, "required: the file of the dealers' names and PINs"))
        return None
    try:
        text = read_secret_file(Path(value), reader="the console").reveal()
        return parse_dealers(text)
    except UnreadableSecret as exc:
        mistakes.append((where, exc.reason))
    except ValueError as exc:
        mistakes.append((where, f"{value}: {exc}"))
    return None


def _https(value: object, mistakes: list[Mistake]) -> ssl.SSLContext | None:
    if value is None:
        return None
    where: FieldPath = ("console", "https")
    if not isinstance(value, dict):
        mistakes.append((where, "must be a table ([console.https]) with cert_file and key_file"))
        return None
    mistakes.extend(
        ((*where, key), "unknown setting; settings: cert_file, key_file")
        for key in sorted(set(value) - _HTTPS_KEYS)
    )
    files = {}
    for key in sorted(_HTTPS_KEYS):
        path = value.get(key)
        if not isinstance(path, str) or not path:
            mistakes.append(((*where, key), "required: a file path in quotes"))
        elif not os.access(path, os.R_OK):
            mistakes.append(((*where, key), f"cannot read {path!r}"))
        else:
            files[key] = path
    if len(files) != len(_HTTPS_KEYS):
        return None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(files["cert_file"], files["key_file"])
    except (ssl.SSLError, OSError) as exc:
        mistakes.append(((*where, "cert_file"), f"the certificate and key do not load ({exc})"))
        return None
    return context


def _broker(  # noqa: PLR0911 - one return per mistake, each said apart
    section: object, console: dict[str, Any], mistakes: list[Mistake]
) -> MqttSettings | None:
    if not isinstance(section, dict):
        mistakes.append((("mqtt",), "required: an [mqtt] section with at least `host`"))
        return None
    shared: dict[str, Any] = {k: v for k, v in section.items() if k not in _DAEMONS_OWN}
    if isinstance(shared.get("tls"), dict):
        shared["tls"] = {k: v for k, v in shared["tls"].items() if k not in _DAEMONS_OWN_TLS}
    try:
        settings = MqttSettings.from_mapping(shared, environ={})
    except MqttSettingsError as exc:
        mistakes.extend((tuple(p.field.split(".")), p.message) for p in exc.problems)
        return None
    username, password = console.get("username"), None
    if username is not None and (not isinstance(username, str) or not username):
        mistakes.append((("console", "username"), "the console's broker user, in quotes"))
        return None
    password_file = console.get("password_file")
    if password_file is not None:
        if username is None:
            message = "a password needs its broker user: set console.username"
            mistakes.append((("console", "password_file"), message))
            return None
        try:
            password = read_secret_file(Path(str(password_file)), reader="the console")
        except UnreadableSecret as exc:
            mistakes.append((("console", "password_file"), exc.reason))
            return None
    client_id = console.get("client_id") or f"shoe2mqtt-console-{console.get('table')}"
    try:
        return dataclasses.replace(
            settings, client_id=str(client_id), username=username, password=password
        )
    except MqttSettingsError as exc:
        mistakes.append((("console", exc.field.rpartition(".")[2]), exc.message))
        return None


def _logging(section: object, mistakes: list[Mistake]) -> tuple[str, str]:
    if not isinstance(section, dict):
        mistakes.append((("logging",), "must be a table"))
        return "auto", "info"
    fmt, level = section.get("format", "auto"), section.get("level", "info")
    if fmt not in LOG_FORMATS:
        mistakes.append((("logging", "format"), f"one of {list(LOG_FORMATS)}"))
    if level not in LOG_LEVELS:
        mistakes.append((("logging", "level"), f"one of {list(LOG_LEVELS)}"))
    return str(fmt), str(level)


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True
