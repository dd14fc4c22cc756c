"""The pit display's configuration: `[display]` in the same TOML file as the daemon's.

The display reads the broker's address, TLS and base topic from `[mqtt]` but never the
daemon's credentials: it connects as its own read-only broker user (`[display] username`,
`password_file`), so a display PC holds no password that can move money, and a display
running beside the daemon under its own system user does not need to read the daemon's
password file. `[[table]]` and `[journal]` are the daemon's and are ignored here.

    [display]
    bind = "127.0.0.1"          # default: this PC only; a kiosk browser on the same PC
    port = 8080
    username = "display-pit-a"  # the read-only broker user of docs/mosquitto/acl
    password_file = "/etc/shoe2mqtt/display-password"
    title = "Pit A"

    [display.https]             # optional: serve HTTPS (else put a reverse proxy in front)
    cert_file = "/etc/shoe2mqtt/display.crt"
    key_file = "/etc/shoe2mqtt/display.key"

    [display.login]             # optional: ask the browser for a user name and password
    username = "pit"
    password_file = "/etc/shoe2mqtt/display-login"

`check_display` checks the section alone (the daemon's `check-config` calls it too);
`load_display_config` checks what the display process needs and says every mistake at once,
each with its file, line and field, like the daemon's loader.
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
from daemon.mqtt.settings import MqttSettings, default_node

if TYPE_CHECKING:
    from collections.abc import Mapping

DEFAULT_BIND: Final = "127.0.0.1"
DEFAULT_PORT: Final = 8080
DEFAULT_TITLE: Final = "shoe2mqtt"
# `password` is known so that its mistake says where a password belongs.
_KEYS: Final = frozenset(
    {"bind", "port", "username", "password_file", "client_id", "title", "https", "login"}
)
_HTTPS_KEYS: Final = frozenset({"cert_file", "key_file"})
_LOGIN_KEYS: Final = frozenset({"username", "password_file"})
# [mqtt] settings that are the daemon's own: its name, its credentials, its client key.
_DAEMONS_OWN: Final = frozenset({"node", "client_id", "username", "password_file", "password_env"})
_DAEMONS_OWN_TLS: Final = frozenset({"cert_file", "key_file"})

Mistake = tuple[FieldPath, str]


def setting_names() -> list[str]:
    """Every `[display]` setting, dotted, for the configuration reference."""
    return [
        *(f"display.{key}" for key in _KEYS - {"https", "login"}),
        *(f"display.https.{key}" for key in _HTTPS_KEYS),
        *(f"display.login.{key}" for key in _LOGIN_KEYS),
    ]


@dataclass(frozen=True, slots=True)
class Login:
    """HTTP Basic authentication for the page; over HTTPS or a TLS reverse proxy only."""

    username: str
    password: Secret


@dataclass(frozen=True, slots=True)
class DisplaySettings:
    bind: str = DEFAULT_BIND
    port: int = DEFAULT_PORT
    username: str | None = None
    password: Secret | None = None
    client_id: str | None = None  # None: `shoe2mqtt-display-<node>`
    title: str = DEFAULT_TITLE
    https: ssl.SSLContext | None = None
    login: Login | None = None


@dataclass(frozen=True, slots=True)
class DisplayConfig:
    """What `shoe2mqtt display` runs with: its broker connection, its page, its logs."""

    path: Path
    mqtt: MqttSettings  # the display user's, never the daemon's
    display: DisplaySettings
    log_format: str = "auto"
    log_level: str = "info"


def check_display(
    section: object, *, read_files: bool = True
) -> tuple[DisplaySettings | None, list[Mistake]]:
    """The `[display]` section (absent: the defaults), and every mistake in it.

    `read_files=False` checks the section's shape only, without reading its password and
    certificate files: the daemon checks it so, since those files are the display's, which
    the daemon's user may rightly be unable to read (and then settings are not returned).
    """
    mistakes: list[Mistake] = []
    if section is None:
        return DisplaySettings(), mistakes
    if not isinstance(section, dict):
        return None, [(("display",), "must be a table ([display])")]

    def wrong(key: str | tuple[str, ...], message: str) -> None:
        mistakes.append((("display", *((key,) if isinstance(key, str) else key)), message))

    for key in sorted(set(section) - _KEYS - {"password"}):
        wrong(key, f"unknown setting; settings: {', '.join(sorted(_KEYS))}")
    bind = section.get("bind", DEFAULT_BIND)
    if not isinstance(bind, str) or not _is_address(bind):
        wrong("bind", "an IP address to listen on, e.g. '127.0.0.1' or '0.0.0.0'")
    port = section.get("port", DEFAULT_PORT)
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        wrong("port", "a whole number from 1 to 65535")
    texts = _optional_texts(section, ("username", "client_id", "title"), mistakes)
    password = _password(section, "password_file", ("display",), mistakes, read=read_files)
    if "password_file" in section and texts["username"] is None:
        wrong("password_file", "a password needs its broker user: set display.username")
    https = _https(section.get("https"), mistakes, read=read_files)
    login = _login(section.get("login"), mistakes, read=read_files)
    if mistakes or not read_files:
        return None, mistakes
    return DisplaySettings(
        bind=bind,
        port=port,
        username=texts["username"],
        password=password,
        client_id=texts["client_id"],
        title=texts["title"] or DEFAULT_TITLE,
        https=https,
        login=login,
    ), mistakes


def load_display_config(path: Path, *, environ: Mapping[str, str] | None = None) -> DisplayConfig:
    """`[mqtt]` (less the daemon's own settings), `[display]` and `[logging]` of `path`."""
    environ = os.environ if environ is None else environ
    try:
        document, text = read_toml(path)
    except ConfigFileError as exc:
        raise ConfigErrors([exc]) from None
    mistakes: list[Mistake] = []
    display, found = check_display(document.get("display"))
    mistakes += found
    mqtt = _broker(document.get("mqtt"), display, environ, mistakes)
    log_format, log_level = _logging(document.get("logging", {}), mistakes)
    if mistakes or mqtt is None or display is None:
        raise ConfigErrors(
            [
                ConfigFileError(str(path), locate(text, where), format_field(where), message)
                for where, message in mistakes
            ]
        )
    return DisplayConfig(path, mqtt, display, log_format, log_level)


def file_problems(path: Path) -> list[ConfigFileError]:
    """What the display would refuse in `path`'s `[display]` section that a check of its
    shape alone (the daemon's: `check_display(read_files=False)`) cannot see: its password
    and certificate files missing, unreadable or empty. None when the file does not read
    as TOML (the daemon's check says why) or has no `[display]`."""
    try:
        document, text = read_toml(path)
    except ConfigFileError:
        return []
    section = document.get("display")
    if section is None:
        return []
    shape = set(check_display(section, read_files=False)[1])
    return [
        ConfigFileError(str(path), locate(text, where), format_field(where), message)
        for where, message in check_display(section)[1]
        if (where, message) not in shape
    ]


def plain_http_warning(bind: str, *, https: bool, login: bool) -> str | None:
    """Why serving the pages on `bind` deserves a warning, or None: plain HTTP beyond this
    PC lets anyone on that network read the pit, and a login's password with it (HTTP Basic
    sends it with every request). A warning, not a mistake: a site may have put its own TLS
    in front on another host, or run the display on a network of its own."""
    if https or ipaddress.ip_address(bind).is_loopback:
        return None
    password = ", and the login's password crosses it in clear with every request" if login else ""
    return (
        f"the pit display is served over plain HTTP beyond this PC (bind {bind}): anyone on "
        f"that network can read the pit{password}; set [display.https], or bind 127.0.0.1 "
        "behind a TLS reverse proxy (docs/security.md)"
    )


def file_warnings(path: Path) -> list[ConfigFileError]:
    """What `check-config` warns of in `path`'s `[display]` (none when the section has
    mistakes: those are reported instead)."""
    try:
        document, text = read_toml(path)
    except ConfigFileError:
        return []
    section = document.get("display")
    if section is None or check_display(section, read_files=False)[1]:
        return []
    assert isinstance(section, dict)  # checked just above
    warning = plain_http_warning(
        section.get("bind", DEFAULT_BIND), https="https" in section, login="login" in section
    )
    if warning is None:
        return []
    where = ("display", "bind")
    return [ConfigFileError(str(path), locate(text, where), format_field(where), warning)]


def _broker(
    section: object,
    display: DisplaySettings | None,
    environ: Mapping[str, str],
    mistakes: list[Mistake],
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
    if display is None:
        return None
    node = section.get("node") if isinstance(section.get("node"), str) else None
    own_id = f"shoe2mqtt-display-{node or default_node(environ)}"
    try:
        return dataclasses.replace(
            settings,
            client_id=display.client_id or own_id,
            username=display.username,
            password=display.password,
        )
    except MqttSettingsError as exc:
        mistakes.append((("display", exc.field.rpartition(".")[2]), exc.message))
        return None


def _optional_texts(
    section: dict[str, Any], keys: tuple[str, ...], mistakes: list[Mistake]
) -> dict[str, str | None]:
    texts: dict[str, str | None] = {}
    for key in keys:
        value = section.get(key)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            mistakes.append((("display", key), "a non-empty quoted string, or left out"))
            value = None
        texts[key] = value
    return texts


def _logging(section: object, mistakes: list[Mistake]) -> tuple[str, str]:
    """`format` and `level` of `[logging]` (`raw_frames` is the daemon's: the display reads
    no frames)."""
    if not isinstance(section, dict):
        mistakes.append((("logging",), "must be a table"))
        return "auto", "info"
    fmt, level = section.get("format", "auto"), section.get("level", "info")
    if fmt not in LOG_FORMATS:
        mistakes.append((("logging", "format"), f"one of {list(LOG_FORMATS)}"))
    if level not in LOG_LEVELS:
        mistakes.append((("logging", "level"), f"one of {list(LOG_LEVELS)}"))
    return str(fmt), str(level)


def _sub_table(
    section: object,
    name: str,
    keys: frozenset[str],
    mistakes: list[Mistake],
    *,
    shape: str,
    judged_apart: frozenset[str] = frozenset(),
) -> dict[str, Any] | None:
    """`[display.<name>]` if it is a table, each unknown key in it a mistake; None if absent or
    not a table. `judged_apart`: keys that are not settings but get a message of their own."""
    if section is None:
        return None
    where = ("display", name)
    if not isinstance(section, dict):
        mistakes.append((where, f"must be a table ([display.{name}]) with {shape}"))
        return None
    settings = ", ".join(sorted(keys))
    mistakes.extend(
        ((*where, key), f"unknown setting; settings: {settings}")
        for key in sorted(set(section) - keys - judged_apart)
    )
    return section


def _https(value: object, mistakes: list[Mistake], *, read: bool) -> ssl.SSLContext | None:
    section = _sub_table(value, "https", _HTTPS_KEYS, mistakes, shape="cert_file and key_file")
    if section is None:
        return None
    where = ("display", "https")
    files: dict[str, str] = {}
    for key in sorted(_HTTPS_KEYS):
        value = section.get(key)
        if not isinstance(value, str) or not value:
            mistakes.append(((*where, key), "required: a file path in quotes"))
        elif read and not os.access(value, os.R_OK):
            mistakes.append(((*where, key), f"cannot read {value!r}"))
        else:
            files[key] = value
    if len(files) != len(_HTTPS_KEYS) or not read:
        return None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(files["cert_file"], files["key_file"])
    except (ssl.SSLError, OSError) as exc:
        mistakes.append(((*where, "cert_file"), f"the certificate and key do not load ({exc})"))
        return None
    return context


def _login(value: object, mistakes: list[Mistake], *, read: bool) -> Login | None:
    section = _sub_table(
        value,
        "login",
        _LOGIN_KEYS,
        mistakes,
        shape="username, password_file",
        judged_apart=frozenset({"password"}),  # never in this file: `_password` says so
    )
    if section is None:
        return None
    where = ("display", "login")
    username = section.get("username")
    if not isinstance(username, str) or not username or ":" in username:
        # RFC 7617: the user name and password are joined by the first colon.
        mistakes.append(((*where, "username"), "required: a quoted name without ':'"))
        username = None
    password = _password(section, "password_file", where, mistakes, read=read)
    if "password_file" not in section:
        mistakes.append(((*where, "password_file"), "required: the file holding the password"))
    return None if username is None or password is None else Login(username, password)


def _password(
    section: dict[str, Any], key: str, where: FieldPath, mistakes: list[Mistake], *, read: bool
) -> Secret | None:
    """The password in the file `section[key]` names; never in the TOML file itself."""
    if "password" in section:
        mistakes.append(
            ((*where, "password"), "the password must not be in this file: use password_file")
        )
    value = section.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        mistakes.append(((*where, key), "a file path in quotes"))
        return None
    if not read:
        return None
    try:
        return read_secret_file(Path(value), reader="the display")
    except UnreadableSecret as exc:
        mistakes.append(((*where, key), exc.reason))
        return None


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True
