"""`[mqtt.tls]`: the broker's TLS, checked in shape when built and loaded from this host's
files before the daemon connects (a bad PEM names its file at start, not at every retry)."""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from daemon.mqtt.errors import MqttSettingsError
from daemon.mqtt.secret import unreadable
from rules.config import describe_value

if TYPE_CHECKING:
    from pathlib import Path

READER: Final = "the daemon"  # who may not read a file, in a host problem's words


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
            for name in TLS_FILES
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
                    host_problem(
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
                    host_problem(
                        "mqtt.tls.key_file",
                        "the key is encrypted; the daemon cannot type a passphrase",
                    )
                )
            except ssl.SSLError as exc:
                problems.append(
                    host_problem(
                        blamed, f"the client certificate and key do not load as a pair ({exc})"
                    )
                )
        return problems


class _EncryptedKey(Exception):
    """OpenSSL asked for the key's passphrase."""


def _no_passphrase() -> str:
    # Without this, OpenSSL would prompt on the terminal of a daemon that has none.
    raise _EncryptedKey


TLS_FILES: Final = ("ca_file", "cert_file", "key_file")


def _unreadable(name: str, path: Path | None) -> MqttSettingsError | None:
    if path is None:
        return None
    reason = unreadable(path, reader=READER)
    return None if reason is None else host_problem(name, reason)


def host_problem(name: str, message: str) -> MqttSettingsError:
    return MqttSettingsError(name, message, host=True)
