"""A throwaway certificate authority for a TLS broker on 127.0.0.1, made with openssl."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from pathlib import Path

OPENSSL: Final = "/usr/bin/openssl"
# Elliptic-curve keys: made in milliseconds, where RSA keys take a noticeable while.
_NEW_KEY: Final = (
    "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-noenc", "-days", "2",
)  # fmt: skip
ENCRYPTED_KEY_PASSPHRASE: Final = "only-a-person-knows"  # noqa: S105 - a throwaway key's


@dataclass(frozen=True)
class Certificates:
    """A CA, a server certificate it signed for 127.0.0.1, and a client pair (its key also
    encrypted with `ENCRYPTED_KEY_PASSPHRASE`)."""

    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    encrypted_client_key: Path


def make_certificates(directory: Path) -> Certificates:
    """Write a fresh CA and the certificates it signed into `directory` (made here)."""
    directory.mkdir(parents=True)
    files = Certificates(
        ca=directory / "ca.pem",
        server_cert=directory / "server.pem",
        server_key=directory / "server.key",
        client_cert=directory / "client.pem",
        client_key=directory / "client.key",
        encrypted_client_key=directory / "client-encrypted.key",
    )
    ca_key = directory / "ca.key"
    _openssl("req", "-x509", *_NEW_KEY, "-keyout", ca_key, "-out", files.ca, "-subj", "/CN=ca")
    signed_by_ca: list[str | Path] = ["-CA", files.ca, "-CAkey", ca_key]
    _openssl(
        "req", "-x509", *_NEW_KEY, *signed_by_ca, "-subj", "/CN=127.0.0.1",
        "-addext", "subjectAltName=IP:127.0.0.1",
        "-keyout", files.server_key, "-out", files.server_cert,
    )  # fmt: skip
    _openssl(
        "req", "-x509", *_NEW_KEY, *signed_by_ca, "-subj", "/CN=shoe2mqtt-test",
        "-keyout", files.client_key, "-out", files.client_cert,
    )  # fmt: skip
    _openssl(
        "pkey", "-in", files.client_key, "-aes256",
        "-passout", f"pass:{ENCRYPTED_KEY_PASSPHRASE}", "-out", files.encrypted_client_key,
    )  # fmt: skip
    return files


def _openssl(*arguments: str | Path) -> None:
    subprocess.run(  # noqa: S603 - a fixed binary; the arguments are ours
        [OPENSSL, *map(str, arguments)], check=True, capture_output=True, timeout=10
    )
