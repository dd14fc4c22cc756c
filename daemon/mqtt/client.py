"""The one place an `aiomqtt.Client` is built from the daemon's broker settings.

The daemon's link, the live view and the demo's players all reach the same broker the same
way: its host and port, the user name and password, and TLS with verification on unless the
settings say `insecure`. What differs between them (who they say they are, a Last Will, how
long a round trip may take) is what the caller passes.
"""

from __future__ import annotations

import ssl
from typing import TYPE_CHECKING

import aiomqtt

if TYPE_CHECKING:
    from daemon.mqtt.settings import MqttSettings, TlsSettings


def new_client(
    settings: MqttSettings,
    *,
    identifier: str | None = None,
    will: aiomqtt.Will | None = None,
    timeout: float | None = None,
    max_inflight_messages: int | None = None,
) -> aiomqtt.Client:
    """A fresh client for the broker `settings` name; `identifier` defaults to its client id."""
    tls = settings.tls
    return aiomqtt.Client(
        settings.host,
        settings.port,
        identifier=settings.client_id if identifier is None else identifier,
        keepalive=settings.keepalive,
        username=settings.username,
        password=None if settings.password is None else settings.password.reveal(),
        will=will,
        timeout=timeout,
        max_inflight_messages=max_inflight_messages,
        tls_params=None if tls is None else _tls_parameters(tls),
        # paho's name: True skips the host name check; verification stays on otherwise.
        tls_insecure=None if tls is None else tls.insecure,
    )


def _tls_parameters(tls: TlsSettings) -> aiomqtt.TLSParameters:
    return aiomqtt.TLSParameters(
        ca_certs=None if tls.ca_file is None else str(tls.ca_file),
        certfile=None if tls.cert_file is None else str(tls.cert_file),
        keyfile=None if tls.key_file is None else str(tls.key_file),
        cert_reqs=ssl.CERT_NONE if tls.insecure else ssl.CERT_REQUIRED,
    )
