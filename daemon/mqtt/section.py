"""How the `[mqtt]` table of the file becomes `MqttSettings`' arguments: its keys, its
sub-tables `tls` and `reconnect`, and the password, never in the file itself (a file, or an
environment variable). Each mistake is an `MqttSettingsError` added to one list; the settings
judge the rest of their fields when built (daemon/mqtt/settings.py)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from daemon.mqtt.errors import MqttSettingsError
from daemon.mqtt.secret import Secret, UnreadableSecret, read_secret_file
from daemon.mqtt.tls_settings import READER, TLS_FILES, TlsSettings, host_problem
from drivers.backoff import BackoffPolicy
from drivers.transports import is_absolute_path
from drivers.transports.errors import SettingsError as BackoffSettingsError
from rules.config import describe_value, unknown_setting

# A broker restart should not hammer it from every table at once, and a pit display should
# see the table back within half a minute of the broker.
DEFAULT_RECONNECT: Final = BackoffPolicy(initial=0.5, maximum=30.0, multiplier=2.0, jitter=0.2)
_ENVIRONMENT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,255}")


def plain_settings(
    table: Mapping[str, object], problems: list[MqttSettingsError]
) -> dict[str, object]:
    """The plain keys as the file gives them; its mistakes among them go to `problems` (an
    unknown key, a password in the file, no host, an empty client id)."""
    problems.extend(
        MqttSettingsError(f"mqtt.{key}", unknown_setting(key, _KNOWN_KEYS - {"password"}))
        for key in sorted(table.keys() - _KNOWN_KEYS)
    )
    if "password" in table:
        problems.append(
            MqttSettingsError(
                "mqtt.password",
                "the password must not be in the config file: put it in a file readable "
                "only by the daemon and set mqtt.password_file, or set mqtt.password_env "
                "to the name of an environment variable holding it",
            )
        )
    given = {key: table[key] for key in _PLAIN_KEYS if key in table}
    if "host" not in table:
        problems.append(
            MqttSettingsError("mqtt.host", "is required: the broker's host name or address")
        )
        given["host"] = "localhost"  # a stand-in, so that the other fields are judged
    if given.get("client_id") == "":  # empty would quietly mean the default
        problems.append(MqttSettingsError("mqtt.client_id", "must not be empty; or leave it out"))
        del given["client_id"]
    return given


_PLAIN_KEYS: Final = (
    "host",
    "port",
    "node",
    "client_id",
    "keepalive",
    "base_topic",
    "username",
    "contract",
)
_KNOWN_KEYS: Final = frozenset(
    {
        *_PLAIN_KEYS,
        "password",  # known so that its error explains where a password belongs
        "password_file",
        "password_env",
        "tls",
        "reconnect",
    }
)
_TLS_KEYS: Final = frozenset({*TLS_FILES, "insecure"})
_RECONNECT_KEYS: Final = frozenset({"initial", "maximum", "multiplier", "jitter"})


def setting_names() -> list[str]:
    """Every `[mqtt]` setting, dotted (`mqtt.tls.ca_file`), for the configuration reference."""
    return [
        *(f"mqtt.{key}" for key in _KNOWN_KEYS - {"password", "tls", "reconnect"}),
        *(f"mqtt.tls.{key}" for key in _TLS_KEYS),
        *(f"mqtt.reconnect.{key}" for key in _RECONNECT_KEYS),
    ]


def tls_from(
    value: object, problems: list[MqttSettingsError], *, read_files: bool
) -> TlsSettings | None:
    if not isinstance(value, Mapping):
        problems.append(
            MqttSettingsError(
                "mqtt.tls",
                "must be a table ([mqtt.tls]); an empty one means TLS with system CAs",
            )
        )
        return None
    problems.extend(
        MqttSettingsError(f"mqtt.tls.{key}", unknown_setting(key, _TLS_KEYS))
        for key in sorted(value.keys() - _TLS_KEYS)
    )
    paths = {name: _path(value, "mqtt.tls", name, problems) for name in TLS_FILES}
    try:
        tls = TlsSettings(**paths, insecure=value.get("insecure", False))  # judged by __post_init__
    except MqttSettingsError as exc:
        problems.extend(exc.problems)
        return None
    if read_files:
        problems.extend(tls.file_problems())
    return tls


def password_from(
    table: Mapping[str, object],
    environ: Mapping[str, str],
    problems: list[MqttSettingsError],
    *,
    read_files: bool,
) -> Secret | None:
    if "password_file" in table and "password_env" in table:
        problems.append(
            MqttSettingsError(
                "mqtt.password_env", "set either mqtt.password_file or mqtt.password_env, not both"
            )
        )
        return None
    if "password_file" in table:
        path = _path(table, "mqtt", "password_file", problems)
        return None if path is None or not read_files else _read_password(path, problems)
    if "password_env" in table:
        name = table["password_env"]
        if not isinstance(name, str) or not _ENVIRONMENT_NAME.fullmatch(name):
            problems.append(
                MqttSettingsError(
                    "mqtt.password_env",
                    "must be the name of an environment variable (letters, digits and _), "
                    f"not {describe_value(name, show=False)}",
                )
            )
            return None
        password = environ.get(name, "")
        if not password and read_files:
            problems.append(
                host_problem(
                    "mqtt.password_env", f"the environment variable {name!r} is not set or empty"
                )
            )
        return Secret(password) if password else None
    return None


def _read_password(path: Path, problems: list[MqttSettingsError]) -> Secret | None:
    try:
        return read_secret_file(path, reader=READER)
    except UnreadableSecret as exc:
        problems.append(host_problem("mqtt.password_file", exc.reason))
        return None


def reconnect_from(value: object, problems: list[MqttSettingsError]) -> BackoffPolicy:
    if not isinstance(value, Mapping):
        problems.append(MqttSettingsError("mqtt.reconnect", "must be a table ([mqtt.reconnect])"))
        return DEFAULT_RECONNECT
    problems.extend(
        MqttSettingsError(f"mqtt.reconnect.{key}", unknown_setting(key, _RECONNECT_KEYS))
        for key in sorted(value.keys() - _RECONNECT_KEYS)
    )
    chosen = {key: value[key] for key in _RECONNECT_KEYS & value.keys()}
    try:
        return BackoffPolicy(**{**_policy_fields(DEFAULT_RECONNECT), **chosen})
    except BackoffSettingsError as exc:
        problems.extend(
            MqttSettingsError(f"mqtt.reconnect.{p.field.rpartition('.')[2]}", p.message)
            for p in exc.problems
        )
    return DEFAULT_RECONNECT


def _policy_fields(policy: BackoffPolicy) -> dict[str, float]:
    return {key: getattr(policy, key) for key in _RECONNECT_KEYS}


def _path(
    table: Mapping[str, object], table_name: str, key: str, problems: list[MqttSettingsError]
) -> Path | None:
    """An absolute path: the daemon runs in `/` under systemd, check-config wherever a person
    stands, so a relative path would name two different files."""
    value = table.get(key)
    if value is None:
        return None
    if not is_absolute_path(value):
        problems.append(
            MqttSettingsError(
                f"{table_name}.{key}",
                "must be an absolute file path in quotes, e.g. '/etc/shoe2mqtt/ca.crt'; "
                f"not {describe_value(value)}",
            )
        )
        return None
    return Path(str(value))
