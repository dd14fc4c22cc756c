"""The `[mqtt]` table of the daemon's config: where the broker is and how to talk to it.

Everything is validated when the settings are built, so a daemon with a typo in its config
refuses to start with a message naming the field, instead of reconnecting forever to a
broker it can never reach. The password is never read from the config file itself: it comes
from a file (`password_file`, e.g. a systemd credential) or an environment variable
(`password_env`), and is held in a `Secret` that never prints.
"""

from __future__ import annotations

import os
import re
import socket
import ssl
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from daemon.mqtt.errors import MqttSettingsError
from daemon.mqtt.secret import Secret, UnreadableSecret, read_secret_file, unreadable
from daemon.wire.topics import MAX_SEGMENT, Topics, valid_segment
from drivers.backoff import BackoffPolicy
from drivers.transports import is_absolute_path, is_host
from drivers.transports.errors import SettingsError as BackoffSettingsError
from rules.config import describe_value, out_of_range, unknown_setting

DEFAULT_PORT: Final = 1883
DEFAULT_TLS_PORT: Final = 8883  # the IANA port for MQTT over TLS, used when [mqtt.tls] is set
DEFAULT_KEEPALIVE: Final = 30
DEFAULT_BASE_TOPIC: Final = "shoe2mqtt"
# A broker restart should not hammer it from every table at once, and a pit display should
# see the table back within half a minute of the broker.
DEFAULT_RECONNECT: Final = BackoffPolicy(initial=0.5, maximum=30.0, multiplier=2.0, jitter=0.2)

# Lowercase ASCII segments: topics are typed by people into display configs and ACLs, and
# one spelling per table avoids "Shoe2MQTT/bj-1" and "shoe2mqtt/BJ-1" both existing.
_BASE_TOPIC = re.compile(r"[a-z0-9_-]+(?:/[a-z0-9_-]+)*")
_MAX_BASE_TOPIC: Final = 128  # characters; every topic is this, a table id and a few words
# Client ids and user names are short words; MQTT would carry 65,535 bytes, brokers often
# far fewer (3.1.1 section 3.1.3.1 promises only 23), so a long one is a mistake.
_MAX_NAME: Final = 256
_MIN_KEEPALIVE: Final = 5  # shorter, and one slow PINGRESP from a busy broker drops the link
_MAX_KEEPALIVE: Final = 65535  # the CONNECT packet's 16-bit field
_NODE_RULE: Final = (
    f"must be one lowercase topic segment (a-z, 0-9, _ and -, at most {MAX_SEGMENT}), "
    "e.g. 'pit-a-pc-3'"
)
_CLIENT_ID_RULE: Final = (
    f"must be printable text without spaces, at most {_MAX_NAME} characters, stable per daemon"
)
_BASE_TOPIC_RULE: Final = (
    "must be lowercase ASCII segments (a-z, 0-9, _ and -) joined by '/', at most "
    f"{_MAX_BASE_TOPIC} characters, without wildcards or a leading or trailing '/', "
    f"e.g. {DEFAULT_BASE_TOPIC!r}"
)
_READER: Final = "the daemon"  # who may not read a file, in a host problem's words
_ENVIRONMENT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,255}")


# Set by the template unit shoe2mqtt@.service (`Environment=SHOE2MQTT_INSTANCE=%i`): two
# instances on one PC must not share a node name, nor so a client id (the broker would
# disconnect one whenever the other connects) or an availability topic.
INSTANCE_VARIABLE: Final = "SHOE2MQTT_INSTANCE"
_NOT_IN_SEGMENT = re.compile(r"[^a-z0-9_-]+")


def default_node(environ: Mapping[str, str] | None = None) -> str:
    """The host name as a topic segment, plus `-<instance>` under the template unit.

    Stable across restarts, so the broker replaces a half-dead session of the same daemon
    and its retained `bridge/<node>/state` is the same topic after a reboot.
    """
    environ = os.environ if environ is None else environ
    node = _as_segment(socket.gethostname()) or "shoe2mqtt"
    instance = _as_segment(environ.get(INSTANCE_VARIABLE, ""))
    return (f"{node}-{instance}" if instance else node)[:MAX_SEGMENT].rstrip("-_")


def _as_segment(text: str) -> str:
    """Lowercased, every run of other characters (dots of a domain, spaces) made one '-'."""
    return _NOT_IN_SEGMENT.sub("-", text.lower()).strip("-_")


@dataclass(frozen=True, slots=True)
class TlsSettings:
    """TLS to the broker. Verification is on unless `insecure` is set to true explicitly.

    `ca_file` None means the system's trusted authorities. `cert_file` alone is a PEM file
    holding both the client certificate and its key; `key_file` names a separate key.
    Building the settings checks their shape; `file_problems` reads the files, which are
    this host's, not the configuration's (check-config reports them apart).
    """

    ca_file: Path | None = None
    cert_file: Path | None = None
    key_file: Path | None = None
    # Skips both the certificate chain and the host name check: for a lab broker with a
    # self-signed certificate, never a default.
    insecure: bool = False

    def __post_init__(self) -> None:
        problems: list[MqttSettingsError] = []
        if self.key_file is not None and self.cert_file is None:
            problems.append(
                MqttSettingsError(
                    "mqtt.tls.key_file",
                    "a client key needs its certificate: set mqtt.tls.cert_file",
                )
            )
        insecure: object = self.insecure  # as read from the file: any TOML value
        if not isinstance(insecure, bool):
            problems.append(
                MqttSettingsError(
                    "mqtt.tls.insecure",
                    f"must be true or false, not {describe_value(insecure, show=False)}",
                )
            )
        if problems:
            raise MqttSettingsError.of_all(problems)

    def file_problems(self) -> list[MqttSettingsError]:
        """Whether this host has the files, readable, and whether they load.

        Loaded now, so a bad PEM stops the daemon at start, naming the file, rather than
        failing every reconnection attempt for as long as it runs.
        """
        problems = [
            problem
            for name in _TLS_FILES
            if (problem := _unreadable(f"mqtt.tls.{name}", getattr(self, name))) is not None
        ]
        if problems:
            return problems
        context = ssl.create_default_context()
        if self.ca_file is not None:
            try:
                context.load_verify_locations(cafile=self.ca_file)
            except ssl.SSLError as exc:
                problems.append(
                    _host_problem(
                        "mqtt.tls.ca_file",
                        f"{str(self.ca_file)!r} holds no PEM certificate ({exc})",
                    )
                )
        if self.cert_file is not None:
            blamed = "mqtt.tls.key_file" if self.key_file is not None else "mqtt.tls.cert_file"
            try:
                context.load_cert_chain(self.cert_file, self.key_file, password=_no_passphrase)
            except _EncryptedKey:
                problems.append(
                    _host_problem(
                        "mqtt.tls.key_file",
                        "the key is encrypted; the daemon cannot type a passphrase",
                    )
                )
            except ssl.SSLError as exc:
                problems.append(
                    _host_problem(
                        blamed, f"the client certificate and key do not load as a pair ({exc})"
                    )
                )
        return problems


class _EncryptedKey(Exception):
    """OpenSSL asked for the key's passphrase."""


def _no_passphrase() -> str:
    # Without this, OpenSSL would prompt on the terminal of a daemon that has none.
    raise _EncryptedKey


_TLS_FILES: Final = ("ca_file", "cert_file", "key_file")


@dataclass(frozen=True, slots=True)
class MqttSettings:
    """How the daemon reaches its broker; build with `from_mapping` from the config file.

    Every field is checked when built, each on its own, and every problem raised at once
    (`MqttSettingsError.problems`), so check-config names them all in one run.
    """

    host: str
    port: int = DEFAULT_PORT
    # Names this daemon on `<base>/bridge/<node>/state` and in each table's availability.
    node: str = field(default_factory=default_node)
    # Empty means `shoe2mqtt-<node>`, filled in when the settings are built.
    client_id: str = ""
    keepalive: int = DEFAULT_KEEPALIVE
    base_topic: str = DEFAULT_BASE_TOPIC
    tls: TlsSettings | None = None
    username: str | None = None
    password: Secret | None = None
    reconnect: BackoffPolicy = DEFAULT_RECONNECT

    def __post_init__(self) -> None:
        if self.client_id == "" and isinstance(self.node, str):
            # A frozen dataclass fills a derived default in only this way.
            object.__setattr__(self, "client_id", f"shoe2mqtt-{self.node}")
        problems = [
            MqttSettingsError(f"mqtt.{name}", problem)
            for name, problem in self._problems()
            if problem is not None
        ]
        if problems:
            raise MqttSettingsError.of_all(problems)

    def _problems(self) -> Iterator[tuple[str, str | None]]:
        """(field, what is wrong with it or None): each field judged on its own."""
        yield "host", _host_problem_of(self.host)
        yield "port", _whole_number_problem(self.port, 1, 65535)
        yield "keepalive", _whole_number_problem(self.keepalive, _MIN_KEEPALIVE, _MAX_KEEPALIVE)
        if not isinstance(self.node, str) or not valid_segment(self.node):
            yield "node", f"{_NODE_RULE}; not {describe_value(self.node, show=False)}"
        if not _is_name(self.client_id):
            yield "client_id", _CLIENT_ID_RULE
        if (
            not isinstance(self.base_topic, str)
            or len(self.base_topic) > _MAX_BASE_TOPIC
            or not _BASE_TOPIC.fullmatch(self.base_topic)
        ):
            yield "base_topic", _BASE_TOPIC_RULE
        if self.username is not None and not _is_name(self.username, spaces=True):
            yield "username", f"must be printable text, at most {_MAX_NAME} characters, or left out"
        elif self.password is not None and self.username is None:
            # MQTT 3.1.1 section 3.1.2.9: a password without a user name is a protocol error.
            yield "username", "a password needs a user name"

    @property
    def state_topic(self) -> str:
        """Retained `online`/`offline` of this daemon, and its will (docs/mqtt.md)."""
        return Topics(self.base_topic).bridge_state(self.node)

    @classmethod
    def from_mapping(
        cls,
        table: Mapping[str, object],
        *,
        environ: Mapping[str, str] | None = None,
        read_files: bool = True,
    ) -> MqttSettings:
        """Validate the `[mqtt]` table of the TOML config (as parsed by tomllib).

        Keys: host (required), port, node, client_id, keepalive, base_topic, username, and at most
        one of password_file / password_env; sub-tables `tls` (ca_file, cert_file, key_file,
        insecure) and `reconnect` (initial, maximum, multiplier, jitter; seconds).
        `environ` defaults to `os.environ`; tests pass their own. `read_files=False` reads
        neither the TLS files nor the password (for commands that never connect); the
        settings then carry no password.

        Raises `MqttSettingsError` carrying every problem: the file's mistakes, and this
        host's (`host` True: a file missing or unreadable, an environment variable unset).
        """
        environ = os.environ if environ is None else environ
        problems: list[MqttSettingsError] = []
        given = _plain_settings(table, problems)
        tls = _tls_from(table["tls"], problems, read_files=read_files) if "tls" in table else None
        given.setdefault("port", DEFAULT_TLS_PORT if "tls" in table else DEFAULT_PORT)
        given.setdefault("node", default_node(environ))
        password = _password_from(table, environ, problems, read_files=read_files)
        reconnect = _reconnect_from(table.get("reconnect", {}), problems)
        settings: MqttSettings | None = None
        try:
            settings = cls(
                **given,  # type: ignore[arg-type]  # each value is judged by __post_init__
                tls=tls,
                password=password,
                reconnect=reconnect,
            )
        except MqttSettingsError as exc:
            reported = {problem.field for problem in problems}
            problems.extend(p for p in exc.problems if p.field not in reported)
        if problems or settings is None:
            raise MqttSettingsError.of_all(problems)
        return settings


def _plain_settings(
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


_PLAIN_KEYS: Final = ("host", "port", "node", "client_id", "keepalive", "base_topic", "username")
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
_TLS_KEYS: Final = frozenset({*_TLS_FILES, "insecure"})
_RECONNECT_KEYS: Final = frozenset({"initial", "maximum", "multiplier", "jitter"})


def setting_names() -> list[str]:
    """Every `[mqtt]` setting, dotted (`mqtt.tls.ca_file`), for the configuration reference."""
    return [
        *(f"mqtt.{key}" for key in _KNOWN_KEYS - {"password", "tls", "reconnect"}),
        *(f"mqtt.tls.{key}" for key in _TLS_KEYS),
        *(f"mqtt.reconnect.{key}" for key in _RECONNECT_KEYS),
    ]


def _tls_from(
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
    paths = {name: _path(value, "mqtt.tls", name, problems) for name in _TLS_FILES}
    try:
        tls = TlsSettings(**paths, insecure=value.get("insecure", False))  # judged by __post_init__
    except MqttSettingsError as exc:
        problems.extend(exc.problems)
        return None
    if read_files:
        problems.extend(tls.file_problems())
    return tls


def _password_from(
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
                _host_problem(
                    "mqtt.password_env", f"the environment variable {name!r} is not set or empty"
                )
            )
        return Secret(password) if password else None
    return None


def _read_password(path: Path, problems: list[MqttSettingsError]) -> Secret | None:
    try:
        return read_secret_file(path, reader=_READER)
    except UnreadableSecret as exc:
        problems.append(_host_problem("mqtt.password_file", exc.reason))
        return None


def _reconnect_from(value: object, problems: list[MqttSettingsError]) -> BackoffPolicy:
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
                f"not {describe_value(value, show=False)}",
            )
        )
        return None
    return Path(str(value))


def _unreadable(name: str, path: Path | None) -> MqttSettingsError | None:
    if path is None:
        return None
    reason = unreadable(path, reader=_READER)
    return None if reason is None else _host_problem(name, reason)


def _host_problem(name: str, message: str) -> MqttSettingsError:
    return MqttSettingsError(name, message, host=True)


def _host_problem_of(host: object) -> str | None:
    if is_host(host):
        return None
    return (
        "must be a host name (ASCII letters, digits, '-', '.') or an IP address, "
        f"not {describe_value(host, show=False)}"
    )


def _whole_number_problem(value: object, low: int, high: int) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return (
            f"must be a whole number from {low} to {high}, not {describe_value(value, show=False)}"
        )
    if not low <= value <= high:
        return out_of_range(low, high, value)
    return None


def _is_name(text: object, *, spaces: bool = False) -> bool:
    """Printable and short (client ids and user names), and without spaces unless allowed."""
    return (
        isinstance(text, str)
        and 0 < len(text) <= _MAX_NAME
        and text.isprintable()
        and (spaces or not any(character.isspace() for character in text))
    )
