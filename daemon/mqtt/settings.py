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
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from daemon.mqtt.errors import MqttSettingsError
from daemon.mqtt.secret import Secret
from daemon.topics import Topics, valid_segment
from drivers.backoff import BackoffPolicy
from drivers.transports.errors import SettingsError as BackoffSettingsError

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
_MAX_CLIENT_ID_BYTES: Final = 65535  # MQTT strings carry a 16-bit length
_MIN_KEEPALIVE: Final = 5  # shorter, and one slow PINGRESP from a busy broker drops the link
_MAX_KEEPALIVE: Final = 65535  # the CONNECT packet's 16-bit field


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
    return f"{node}-{instance}" if instance else node


def _as_segment(text: str) -> str:
    """Lowercased, every run of other characters (dots of a domain, spaces) made one '-'."""
    return _NOT_IN_SEGMENT.sub("-", text.lower()).strip("-_")


@dataclass(frozen=True, slots=True)
class TlsSettings:
    """TLS to the broker. Verification is on unless `insecure` is set to true explicitly.

    `ca_file` None means the system's trusted authorities. `cert_file` alone is a PEM file
    holding both the client certificate and its key; `key_file` names a separate key.
    """

    ca_file: Path | None = None
    cert_file: Path | None = None
    key_file: Path | None = None
    # Skips both the certificate chain and the host name check: for a lab broker with a
    # self-signed certificate, never a default.
    insecure: bool = False

    def __post_init__(self) -> None:
        for name in ("ca_file", "cert_file", "key_file"):
            path = getattr(self, name)
            if path is not None:
                _require_readable_file(f"mqtt.tls.{name}", path)
        if self.key_file is not None and self.cert_file is None:
            raise MqttSettingsError(
                "mqtt.tls.key_file", "a client key needs its certificate: set mqtt.tls.cert_file"
            )
        if not isinstance(self.insecure, bool):
            raise MqttSettingsError("mqtt.tls.insecure", "must be true or false")
        self._load_into(ssl.create_default_context())

    def _load_into(self, context: ssl.SSLContext) -> None:
        """Load the files now: a bad PEM should stop the daemon at start, naming the file,
        rather than fail every reconnection attempt for as long as it runs."""
        if self.ca_file is not None:
            try:
                context.load_verify_locations(cafile=self.ca_file)
            except ssl.SSLError as exc:
                raise MqttSettingsError(
                    "mqtt.tls.ca_file", f"{str(self.ca_file)!r} holds no PEM certificate ({exc})"
                ) from None
        if self.cert_file is not None:
            blamed = "mqtt.tls.key_file" if self.key_file is not None else "mqtt.tls.cert_file"
            try:
                context.load_cert_chain(self.cert_file, self.key_file, password=_no_passphrase)
            except ssl.SSLError as exc:
                raise MqttSettingsError(
                    blamed, f"the client certificate and key do not load as a pair ({exc})"
                ) from None


def _no_passphrase() -> str:
    # Without this, OpenSSL would prompt on the terminal of a daemon that has none.
    raise MqttSettingsError(
        "mqtt.tls.key_file", "the key is encrypted; the daemon cannot type a passphrase"
    )


@dataclass(frozen=True, slots=True)
class MqttSettings:
    """How the daemon reaches its broker; build with `from_mapping` from the config file."""

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
        if not isinstance(self.host, str) or not self.host or _has_space(self.host):
            raise MqttSettingsError("mqtt.host", "must be a host name or IP address")
        _require_int("mqtt.port", self.port, 1, 65535)
        _require_int("mqtt.keepalive", self.keepalive, _MIN_KEEPALIVE, _MAX_KEEPALIVE)
        if not isinstance(self.node, str) or not valid_segment(self.node):
            raise MqttSettingsError(
                "mqtt.node",
                "must be one lowercase topic segment (a-z, 0-9, _ and -), e.g. 'pit-a-pc-3'",
            )
        if self.client_id == "":
            # A frozen dataclass fills a derived default in only this way.
            object.__setattr__(self, "client_id", f"shoe2mqtt-{self.node}")
        if (
            not isinstance(self.client_id, str)
            or not self.client_id
            or _has_space(self.client_id)
            or not self.client_id.isprintable()
            or len(self.client_id.encode()) > _MAX_CLIENT_ID_BYTES
        ):
            raise MqttSettingsError(
                "mqtt.client_id", "must be printable text without spaces, stable per table"
            )
        if not isinstance(self.base_topic, str) or not _BASE_TOPIC.fullmatch(self.base_topic):
            raise MqttSettingsError(
                "mqtt.base_topic",
                f"must be lowercase ASCII segments (a-z, 0-9, _ and -) joined by '/', "
                f"without wildcards or a leading or trailing '/', e.g. {DEFAULT_BASE_TOPIC!r}",
            )
        if self.username is not None and (not isinstance(self.username, str) or not self.username):
            raise MqttSettingsError("mqtt.username", "must be a non-empty text, or left out")
        if self.password is not None and self.username is None:
            # MQTT 3.1.1 section 3.1.2.9: a password without a user name is a protocol error.
            raise MqttSettingsError("mqtt.username", "a password needs a user name")

    @property
    def state_topic(self) -> str:
        """Retained `online`/`offline` of this daemon, and its will (docs/mqtt.md)."""
        return Topics(self.base_topic).bridge_state(self.node)

    @classmethod
    def from_mapping(
        cls, table: Mapping[str, object], *, environ: Mapping[str, str] | None = None
    ) -> MqttSettings:
        """Validate the `[mqtt]` table of the TOML config (as parsed by tomllib).

        Keys: host (required), port, node, client_id, keepalive, base_topic, username, and at most
        one of password_file / password_env; sub-tables `tls` (ca_file, cert_file, key_file,
        insecure) and `reconnect` (initial, maximum, multiplier, jitter; seconds).
        `environ` defaults to `os.environ`; tests pass their own.
        """
        _reject_unknown("mqtt", table, _KNOWN_KEYS)
        if "password" in table:
            raise MqttSettingsError(
                "mqtt.password",
                "the password must not be in the config file: put it in a file readable only "
                "by the daemon and set mqtt.password_file, or set mqtt.password_env to the "
                "name of an environment variable holding it",
            )
        if "host" not in table:
            raise MqttSettingsError("mqtt.host", "is required: the broker's host name or address")
        tls = _tls_from(table["tls"]) if "tls" in table else None
        kwargs: dict[str, object] = {
            "host": _text(table, "host"),
            "port": _integer(table, "port", DEFAULT_TLS_PORT if tls else DEFAULT_PORT),
            "keepalive": _integer(table, "keepalive", DEFAULT_KEEPALIVE),
            "base_topic": _text(table, "base_topic", DEFAULT_BASE_TOPIC),
            "tls": tls,
            "username": _optional_text(table, "username"),
            "password": _password_from(table, os.environ if environ is None else environ),
            "reconnect": _reconnect_from(table.get("reconnect", {})),
        }
        kwargs["node"] = _text(table, "node") if "node" in table else default_node(environ)
        if "client_id" in table:
            kwargs["client_id"] = _text(table, "client_id")
            if not kwargs["client_id"]:  # empty would quietly mean the default
                raise MqttSettingsError("mqtt.client_id", "must not be empty; or leave it out")
        return cls(**kwargs)  # type: ignore[arg-type]  # each value was type-checked above


_KNOWN_KEYS: Final = frozenset(
    {
        "host",
        "port",
        "node",
        "client_id",
        "keepalive",
        "base_topic",
        "username",
        "password",  # known so that its error explains where a password belongs
        "password_file",
        "password_env",
        "tls",
        "reconnect",
    }
)
_TLS_KEYS: Final = frozenset({"ca_file", "cert_file", "key_file", "insecure"})
_RECONNECT_KEYS: Final = frozenset({"initial", "maximum", "multiplier", "jitter"})


def _tls_from(value: object) -> TlsSettings:
    if not isinstance(value, Mapping):
        raise MqttSettingsError(
            "mqtt.tls", "must be a table ([mqtt.tls]); an empty one means TLS with system CAs"
        )
    _reject_unknown("mqtt.tls", value, _TLS_KEYS)
    insecure = value.get("insecure", False)
    if not isinstance(insecure, bool):
        raise MqttSettingsError("mqtt.tls.insecure", "must be true or false")
    return TlsSettings(
        ca_file=_path(value, "mqtt.tls", "ca_file"),
        cert_file=_path(value, "mqtt.tls", "cert_file"),
        key_file=_path(value, "mqtt.tls", "key_file"),
        insecure=insecure,
    )


def _password_from(table: Mapping[str, object], environ: Mapping[str, str]) -> Secret | None:
    if "password_file" in table and "password_env" in table:
        raise MqttSettingsError(
            "mqtt.password_env", "set either mqtt.password_file or mqtt.password_env, not both"
        )
    if "password_file" in table:
        path = _path(table, "mqtt", "password_file")
        assert path is not None  # the key is present
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
            raise MqttSettingsError(
                "mqtt.password_file", f"cannot read {str(path)!r}: {reason}"
            ) from None
        # Editors and `echo` end files with a newline; it is never part of the password.
        password = text.removesuffix("\n").removesuffix("\r")
        if not password:
            raise MqttSettingsError("mqtt.password_file", f"{str(path)!r} is empty")
        return Secret(password)
    if "password_env" in table:
        name = _text(table, "password_env")
        password = environ.get(name, "")
        if not password:
            raise MqttSettingsError(
                "mqtt.password_env", f"the environment variable {name!r} is not set or empty"
            )
        return Secret(password)
    return None


def _reconnect_from(value: object) -> BackoffPolicy:
    if not isinstance(value, Mapping):
        raise MqttSettingsError("mqtt.reconnect", "must be a table ([mqtt.reconnect])")
    _reject_unknown("mqtt.reconnect", value, _RECONNECT_KEYS)
    seconds: dict[str, float] = {}
    for key in _RECONNECT_KEYS & value.keys():
        number = value[key]
        if isinstance(number, bool) or not isinstance(number, int | float):
            raise MqttSettingsError(f"mqtt.reconnect.{key}", "must be a number")
        seconds[key] = number
    try:
        return BackoffPolicy(**{**_policy_fields(DEFAULT_RECONNECT), **seconds})
    except BackoffSettingsError as exc:
        key = exc.field.rpartition(".")[2]
        raise MqttSettingsError(f"mqtt.reconnect.{key}", str(exc).partition(": ")[2]) from None


def _policy_fields(policy: BackoffPolicy) -> dict[str, float]:
    return {key: getattr(policy, key) for key in _RECONNECT_KEYS}


def _reject_unknown(table_name: str, table: Mapping[str, object], known: frozenset[str]) -> None:
    unknown = sorted(str(key) for key in table.keys() - known)
    if unknown:
        raise MqttSettingsError(
            f"{table_name}.{unknown[0]}",
            f"unknown setting; known ones are {', '.join(sorted(known - {'password'}))}",
        )


def _text(table: Mapping[str, object], key: str, default: str | None = None) -> str:
    value = _optional_text(table, key)
    if value is None:
        value = default
    if value is None:
        raise MqttSettingsError(f"mqtt.{key}", "is required")
    return value


def _optional_text(table: Mapping[str, object], key: str) -> str | None:
    value = table.get(key)
    if value is not None and not isinstance(value, str):
        raise MqttSettingsError(f"mqtt.{key}", "must be a quoted string")
    return value


def _integer(table: Mapping[str, object], key: str, default: int) -> int:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise MqttSettingsError(f"mqtt.{key}", "must be a whole number")
    return value


def _path(table: Mapping[str, object], table_name: str, key: str) -> Path | None:
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise MqttSettingsError(f"{table_name}.{key}", "must be a file path in quotes")
    return Path(value)


def _require_readable_file(name: str, path: Path) -> None:
    if not isinstance(path, Path):
        raise MqttSettingsError(name, "must be a pathlib.Path")
    if not path.is_file():
        raise MqttSettingsError(name, f"no such file: {str(path)!r}")
    if not os.access(path, os.R_OK):
        raise MqttSettingsError(name, f"the daemon may not read {str(path)!r}: check its mode")


def _require_int(name: str, value: object, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise MqttSettingsError(name, f"must be a whole number from {low} to {high}")


def _has_space(text: str) -> bool:
    return any(character.isspace() for character in text)
