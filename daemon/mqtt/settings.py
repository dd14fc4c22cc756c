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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from daemon.mqtt.errors import MqttSettingsError
from daemon.mqtt.section import (
    DEFAULT_RECONNECT,
    password_from,
    plain_settings,
    reconnect_from,
    tls_from,
)
from daemon.mqtt.tls_settings import TlsSettings
from daemon.wire.round_message import CONTRACTS, DEFAULT_CONTRACT
from daemon.wire.topics import MAX_SEGMENT, Topics, valid_segment
from drivers.transports import is_host
from rules.config import describe_value, out_of_range

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

    from daemon.mqtt.secret import Secret
    from drivers.backoff import BackoffPolicy

# The `[mqtt]` table's keys are read in daemon/mqtt/section.py and its TLS in
# daemon/mqtt/tls_settings.py; these names have always been imported from here.
__all__ = [
    "DEFAULT_BASE_TOPIC",
    "DEFAULT_PORT",
    "DEFAULT_RECONNECT",
    "DEFAULT_TLS_PORT",
    "INSTANCE_VARIABLE",
    "MqttSettings",
    "TlsSettings",
    "default_node",
]

DEFAULT_PORT: Final = 1883
DEFAULT_TLS_PORT: Final = 8883  # the IANA port for MQTT over TLS, used when [mqtt.tls] is set
DEFAULT_KEEPALIVE: Final = 30
DEFAULT_BASE_TOPIC: Final = "shoe2mqtt"

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
    # The console contract the tables publish under (docs/mqtt.md): journaled with each start.
    contract: int = DEFAULT_CONTRACT

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
        whole = isinstance(self.contract, int) and not isinstance(self.contract, bool)
        if not whole or self.contract not in CONTRACTS:  # 4.0 == 4: a decimal is refused too
            yield "contract", _contract_problem(self.contract)
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

        Keys: host (required), port, node, client_id, keepalive, base_topic, contract, username,
        and at most one of password_file / password_env; sub-tables `tls` (ca_file, cert_file,
        key_file, insecure) and `reconnect` (initial, maximum, multiplier, jitter; seconds).
        `environ` defaults to `os.environ`; tests pass their own. `read_files=False` reads
        neither the TLS files nor the password (for commands that never connect); the
        settings then carry no password.

        Raises `MqttSettingsError` carrying every problem: the file's mistakes, and this
        host's (`host` True: a file missing or unreadable, an environment variable unset).
        """
        environ = os.environ if environ is None else environ
        problems: list[MqttSettingsError] = []
        given = plain_settings(table, problems)
        tls = tls_from(table["tls"], problems, read_files=read_files) if "tls" in table else None
        given.setdefault("port", DEFAULT_TLS_PORT if "tls" in table else DEFAULT_PORT)
        given.setdefault("node", default_node(environ))
        password = password_from(table, environ, problems, read_files=read_files)
        reconnect = reconnect_from(table.get("reconnect", {}), problems)
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


def _host_problem_of(host: object) -> str | None:
    if is_host(host):
        return None
    return (
        "must be a host name (ASCII letters, digits, '-', '.') or an IP address, "
        f"not {describe_value(host)}"
    )


def _contract_problem(contract: object) -> str:
    whole = isinstance(contract, int) and not isinstance(contract, bool)
    return (
        f"must be {' or '.join(map(str, CONTRACTS))} (the console contract the tables publish "
        f"under, docs/mqtt.md), not {contract if whole else describe_value(contract)}"
    )


def _whole_number_problem(value: object, low: int, high: int) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return f"must be a whole number from {low} to {high}, not {describe_value(value)}"
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
