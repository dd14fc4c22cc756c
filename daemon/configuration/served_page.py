"""What the pit display's `[display]` and the dealer console's `[console]` share.

Each serves a page (`bind`, `port`, `[<section>.https]`), connects to the broker as its own
user with the daemon's `[mqtt]` less what is the daemon's own (its name, its credentials, its
client key), never holds a password in the file, and logs as `[logging]` says. Each of these
is read here once, into the one collector (daemon/configuration/problems.py), so both say
the same mistake in the same words.
"""

from __future__ import annotations

import ipaddress
import os
import ssl
from typing import TYPE_CHECKING, Any, Final

from daemon.configuration.file import (
    LOG_FORMATS,
    LOG_LEVELS,
    LOGGING_KEYS,
    ConfigFileError,
    read_toml,
)
from daemon.configuration.problems import Problems, whole_number_problem
from daemon.mqtt.errors import MqttSettingsError
from daemon.mqtt.settings import MqttSettings
from rules.config import describe_value

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

    from daemon.configuration.file import FieldPath
    from daemon.configuration.problems import Problem

DEFAULT_BIND: Final = "127.0.0.1"
PORTS: Final = range(1, 65536)
HTTPS_KEYS: Final = frozenset({"cert_file", "key_file"})
# [mqtt] settings that are the daemon's own: its name, its credentials, its client key.
_DAEMONS_OWN: Final = frozenset({"node", "client_id", "username", "password_file", "password_env"})
_DAEMONS_OWN_TLS: Final = frozenset({"cert_file", "key_file"})


def check_listening(
    section: dict[str, Any], where: FieldPath, problems: Problems, port: int
) -> None:
    """`bind` (an IP address, default this PC only) and `port`."""
    bind = section.get("bind", DEFAULT_BIND)
    if not isinstance(bind, str) or not is_address(bind):
        problems.wrong(
            (*where, "bind"),
            "must be an IP address to listen on, e.g. '127.0.0.1' or '0.0.0.0'; "
            f"not {describe_value(bind)}",
            bind,
        )
    given = section.get("port", port)
    problem = whole_number_problem(given, PORTS)
    if problem is not None:
        problems.wrong((*where, "port"), problem, given)


def check_no_password(section: dict[str, Any], where: FieldPath, problems: Problems) -> None:
    if "password" in section:
        problems.wrong(
            (*where, "password"), "the password must not be in this file: use password_file"
        )


def broker(section: object, problems: Problems) -> MqttSettings | None:
    """The daemon's `[mqtt]` less its own settings, as a page's own user connects with it
    (the caller puts in its user, password and client id)."""
    if not isinstance(section, dict):
        problems.wrong(("mqtt",), "required: an [mqtt] section with at least `host`")
        return None
    shared: dict[str, Any] = {k: v for k, v in section.items() if k not in _DAEMONS_OWN}
    if isinstance(shared.get("tls"), dict):
        shared["tls"] = {k: v for k, v in shared["tls"].items() if k not in _DAEMONS_OWN_TLS}
    try:
        return MqttSettings.from_mapping(shared, environ={})
    except MqttSettingsError as exc:
        problems.record((), exc)
        return None


def logging_choices(section: object, problems: Problems) -> tuple[str, str]:
    """`format` and `level` of `[logging]` (`raw_frames` is the daemon's: a page reads no
    frames)."""
    read = problems.section("logging", section, LOGGING_KEYS)
    if read is None:
        return "auto", "info"
    return read.choice("format", "auto", LOG_FORMATS), read.choice("level", "info", LOG_LEVELS)


def https_context(
    value: object, where: FieldPath, problems: Problems, *, read: bool = True
) -> ssl.SSLContext | None:
    """`[<section>.https]`: its two files (read and loaded when `read`), or None if absent."""
    if value is None:
        return None
    where = (*where, "https")
    if not isinstance(value, dict):
        problems.wrong(
            where, f"must be a table ([{'.'.join(map(str, where))}]) with cert_file and key_file"
        )
        return None
    problems.unknown(where, value, HTTPS_KEYS)
    files: dict[str, str] = {}
    for key in sorted(HTTPS_KEYS):
        path = value.get(key)
        if not isinstance(path, str) or not path:
            problems.wrong((*where, key), "required: a file path in quotes", path)
        elif read and not os.access(path, os.R_OK):
            problems.wrong((*where, key), f"cannot read {path!r}", path)
        else:
            files[key] = path
    if len(files) != len(HTTPS_KEYS) or not read:
        return None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(files["cert_file"], files["key_file"])
    except (ssl.SSLError, OSError) as exc:
        problems.wrong((*where, "cert_file"), f"the certificate and key do not load ({exc})")
        return None
    return context


def is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def beyond_shape(
    path: Path,
    name: str,
    full: Callable[[dict[str, Any], dict[str, Any]], Sequence[Problem]],
    shape: Callable[[dict[str, Any]], Sequence[Problem]],
) -> list[ConfigFileError]:
    """What the command serving `[name]` would refuse in `path` that the daemon's check of
    the section's shape (`shape`) cannot see: `full(section, document)` is the command's own
    check, files read. None when the file does not read as TOML (the daemon's check says
    why) or has no such section."""
    try:
        document, text = read_toml(path)
    except ConfigFileError:
        return []
    section = document.get(name)
    if not isinstance(section, dict):
        return []
    said = set(shape(section))
    located = Problems().said_in(path, text)
    return [located.error(problem) for problem in full(section, document) if problem not in said]
