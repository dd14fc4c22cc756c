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
from daemon.mqtt.settings import MqttSettings, default_node

if TYPE_CHECKING:
    import ssl
    from collections.abc import Mapping

    from daemon.configuration.file import FieldPath

__all__ = ["DEFAULT_BIND", "DEFAULT_PORT", "DisplayConfig", "DisplaySettings", "Login"]

DEFAULT_PORT: Final = 8080
DEFAULT_TITLE: Final = "shoe2mqtt"
# `password` is known so that its mistake says where a password belongs.
_KEYS: Final = frozenset(
    {"bind", "port", "username", "password_file", "client_id", "title", "https", "login"}
)
_LOGIN_KEYS: Final = frozenset({"username", "password_file"})
_WHERE: Final = ("display",)


def setting_names() -> list[str]:
    """Every `[display]` setting, dotted, for the configuration reference."""
    return [
        *(f"display.{key}" for key in _KEYS - {"https", "login"}),
        *(f"display.https.{key}" for key in HTTPS_KEYS),
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
) -> tuple[DisplaySettings | None, list[Problem]]:
    """The `[display]` section (absent: the defaults), and every problem in it.

    `read_files=False` checks the section's shape only, without reading its password and
    certificate files: the daemon checks it so, since those files are the display's, which
    the daemon's user may rightly be unable to read (and then settings are not returned).
    """
    problems = Problems()
    if section is None:
        return DisplaySettings(), []
    if not isinstance(section, dict):
        problems.wrong(_WHERE, "must be a table ([display])", section)
        return None, problems.found
    problems.unknown(_WHERE, {k: v for k, v in section.items() if k != "password"}, _KEYS)
    check_listening(section, _WHERE, problems, DEFAULT_PORT)
    texts = _optional_texts(section, ("username", "client_id", "title"), problems)
    password = _password(section, _WHERE, problems, read=read_files)
    if "password_file" in section and texts["username"] is None:
        problems.wrong(
            (*_WHERE, "password_file"), "a password needs its broker user: set display.username"
        )
    https = https_context(section.get("https"), _WHERE, problems, read=read_files)
    login = _login(section.get("login"), problems, read=read_files)
    if problems.found or not read_files:
        return None, problems.found
    return DisplaySettings(
        bind=section.get("bind", DEFAULT_BIND),
        port=section.get("port", DEFAULT_PORT),
        username=texts["username"],
        password=password,
        client_id=texts["client_id"],
        title=texts["title"] or DEFAULT_TITLE,
        https=https,
        login=login,
    ), []


def load_display_config(path: Path, *, environ: Mapping[str, str] | None = None) -> DisplayConfig:
    """`[mqtt]` (less the daemon's own settings), `[display]` and `[logging]` of `path`."""
    environ = os.environ if environ is None else environ
    try:
        document, text = read_toml(path)
    except ConfigFileError as exc:
        raise ConfigErrors([exc]) from None
    problems = Problems()
    display, found = check_display(document.get("display"))
    problems.extend(found)
    mqtt = _broker(document.get("mqtt"), display, environ, problems)
    log_format, log_level = logging_choices(document.get("logging"), problems)
    if problems.found or mqtt is None or display is None:
        raise problems.said_in(path, text).errors()
    return DisplayConfig(path, mqtt, display, log_format, log_level)


def file_problems(path: Path) -> list[ConfigFileError]:
    """What the display would refuse in `path`'s `[display]` section that a check of its
    shape alone (the daemon's: `check_display(read_files=False)`) cannot see: its password
    and certificate files missing, unreadable or empty."""
    return beyond_shape(
        path,
        "display",
        lambda section, _: check_display(section)[1],
        lambda section: check_display(section, read_files=False)[1],
    )


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
    return [Problems().said_in(path, text).error(Problem((*_WHERE, "bind"), warning))]


def _broker(
    section: object,
    display: DisplaySettings | None,
    environ: Mapping[str, str],
    problems: Problems,
) -> MqttSettings | None:
    settings = broker(section, problems)
    if settings is None or display is None:
        return None
    assert isinstance(section, dict)  # broker() read it as one
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
        problems.wrong((*_WHERE, exc.field.rpartition(".")[2]), exc.message)
        return None


def _optional_texts(
    section: dict[str, Any], keys: tuple[str, ...], problems: Problems
) -> dict[str, str | None]:
    texts: dict[str, str | None] = {}
    for key in keys:
        value = section.get(key)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            problems.wrong((*_WHERE, key), "must be a non-empty quoted string, or left out", value)
            value = None
        texts[key] = value
    return texts


def _login(value: object, problems: Problems, *, read: bool) -> Login | None:
    if value is None:
        return None
    where: FieldPath = (*_WHERE, "login")
    if not isinstance(value, dict):
        problems.wrong(where, "must be a table ([display.login]) with username, password_file")
        return None
    # `password` is never in this file: `_password` says so.
    problems.unknown(where, {k: v for k, v in value.items() if k != "password"}, _LOGIN_KEYS)
    username = value.get("username")
    if not isinstance(username, str) or not username or ":" in username:
        # RFC 7617: the user name and password are joined by the first colon.
        problems.wrong((*where, "username"), "required: a quoted name without ':'", username)
        username = None
    password = _password(value, where, problems, read=read)
    if "password_file" not in value:
        problems.wrong((*where, "password_file"), "required: the file holding the password")
    return None if username is None or password is None else Login(username, password)


def _password(
    section: dict[str, Any], where: FieldPath, problems: Problems, *, read: bool
) -> Secret | None:
    """The password in the file `section["password_file"]` names; never in the TOML file."""
    check_no_password(section, where, problems)
    value = section.get("password_file")
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        problems.wrong((*where, "password_file"), "must be a file path in quotes", value)
        return None
    if not read:
        return None
    try:
        return read_secret_file(Path(value), reader="the display")
    except UnreadableSecret as exc:
        problems.wrong((*where, "password_file"), exc.reason, value)
        return None
