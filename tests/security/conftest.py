"""A real mosquitto started from the shipped example (docs/mosquitto/), and its users.

The broker runs `docs/mosquitto/mosquitto.conf` and `docs/mosquitto/acl` as shipped, with only
what must differ on a test machine substituted line by line: the listener's port and address,
the paths of the certificates (made by the `certificates` fixture), of the password file (made
by `mosquitto_passwd`, as docs/mosquitto/README.md says), of the ACL, of the log and of the
persistence directory; `user` (so mosquitto started as root does not drop to `mosquitto`) and
`log_type debug` (so refused publishes are logged) are added. Every substituted line must
exist exactly once in the example, so the example and this test cannot drift apart.
"""

from __future__ import annotations

import getpass
import secrets
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

import aiomqtt
import pytest
import structlog
from structlog.testing import capture_logs

from daemon.testing import Mosquitto

if TYPE_CHECKING:
    from collections.abc import Iterator, MutableMapping
    from typing import Any

    from daemon.testing import Certificates

EXAMPLE: Final = Path(__file__).parents[2] / "docs" / "mosquitto"
MOSQUITTO_PASSWD: Final = Path("/usr/bin/mosquitto_passwd")

# The example ACL's users (docs/mosquitto/acl).
DAEMON: Final = "shoe2mqtt-pit-a"
NODE: Final = "pit-a"  # the daemon's [mqtt] node, whose bridge state its user may write
DISPLAY: Final = "display-pit-a"
# A second read-only user, for a second display-like client connected at once (the example
# config names each connection by its user: a second `display-pit-a` would throw the first off).
WATCH: Final = "watch-pit-a"
CONSOLE_1: Final = "console-bj-1"
CONSOLE_2: Final = "console-bj-2"
SURVEILLANCE: Final = "surveillance-pit-a"  # the only reader of the surveillance topics
USERS: Final = (DAEMON, DISPLAY, WATCH, CONSOLE_1, CONSOLE_2, SURVEILLANCE)
TABLES: Final = ("bj-1", "bj-2")
BASE: Final = "shoe2mqtt"

# Every filter the example ACL lets a display read: a display subscribes to these one by one.
DISPLAY_FILTERS: Final = (
    f"{BASE}/bridge/#",
    f"{BASE}/+/availability",
    f"{BASE}/+/state",
    f"{BASE}/+/round",
    f"{BASE}/+/event/#",
    f"{BASE}/+/settlement",
    f"{BASE}/+/notice/#",
    f"{BASE}/+/response/#",
)


def render_config(example: str, substitutions: dict[str, str], extra: list[str]) -> str:
    """The example with each line whose first word is a key replaced by the key's value."""
    seen = dict.fromkeys(substitutions, 0)
    lines = []
    for line in example.splitlines():
        keyword = line.split(" ", 1)[0]
        if keyword in substitutions:
            seen[keyword] += 1
            lines.append(substitutions[keyword])
        else:
            lines.append(line)
    assert all(count == 1 for count in seen.values()), f"example lines drifted: {seen}"
    return "\n".join([*lines, *extra]) + "\n"


def make_password_file(path: Path, passwords: dict[str, str]) -> None:
    """`mosquitto_passwd -b -c` for the first user (creates the file), `-b` for the others."""
    for index, (user, password) in enumerate(passwords.items()):
        create = ["-c"] if index == 0 else []
        subprocess.run(  # noqa: S603 - a fixed binary; the arguments are ours
            [MOSQUITTO_PASSWD, "-b", *create, str(path), user, password],
            check=True,
            capture_output=True,
            timeout=10,
        )


@dataclass
class SecureBroker:
    """The example broker: its process, the CA clients trust, and every user's password."""

    broker: Mosquitto
    ca: Path
    passwords: dict[str, str]
    client_ids: dict[str, int] = field(default_factory=dict)

    @property
    def host(self) -> str:
        return self.broker.host

    @property
    def port(self) -> int:
        return self.broker.port

    def client(
        self, user: str | None, password: str | None = None, *, identifier: str | None = None
    ) -> aiomqtt.Client:
        """An MQTT 3.1.1 client over TLS, trusting the test CA; the user's own password
        unless another is given. Its client id is the one the broker gives it, its user name
        (`use_username_as_clientid`), unless `identifier` asks for another (which the broker
        then replaces)."""
        if password is None and user is not None:
            password = self.passwords[user]
        if identifier is None:
            number = self.client_ids[str(user)] = self.client_ids.get(str(user), 0) + 1
            identifier = str(user) if user is not None else f"anonymous-{number}"
        return aiomqtt.Client(
            self.host,
            self.port,
            identifier=identifier,
            username=user,
            password=password,
            tls_params=aiomqtt.TLSParameters(ca_certs=str(self.ca)),
            timeout=5,
        )

    def log(self) -> str:
        return self.broker.log()


def example_broker(directory: Path, pki: Certificates, passwords: dict[str, str]) -> Mosquitto:
    """mosquitto configured by the shipped example, its files made in `directory`."""
    broker = Mosquitto(directory, persistence=True)
    acl = directory / "acl"
    shutil.copyfile(EXAMPLE / "acl", acl)
    password_file = directory / "passwd"
    make_password_file(password_file, passwords)
    example = (EXAMPLE / "mosquitto.conf").read_text(encoding="utf-8")
    config = render_config(
        example,
        {
            "listener": f"listener {broker.port} {broker.host}",
            "cafile": f"cafile {pki.ca}",
            "certfile": f"certfile {pki.server_cert}",
            "keyfile": f"keyfile {pki.server_key}",
            "password_file": f"password_file {password_file}",
            "acl_file": f"acl_file {acl}",
            "persistence_location": f"persistence_location {directory}/",
            "log_dest": f"log_dest file {broker.log_file}",
        },
        [f"user {getpass.getuser()}", "log_type debug"],
    )
    broker.use_config(config)
    return broker


@pytest.fixture
def secure_broker(tmp_path: Path, certificates: Certificates) -> Iterator[SecureBroker]:
    """mosquitto running the shipped example configuration and ACL."""
    if shutil.which(MOSQUITTO_PASSWD) is None:
        pytest.fail(f"{MOSQUITTO_PASSWD} is missing: apt-get install mosquitto (scripts/test does)")
    passwords = {user: secrets.token_urlsafe(18) for user in USERS}
    with example_broker(tmp_path / "mosquitto", certificates, passwords) as broker:
        yield SecureBroker(broker, certificates.ca, passwords)


@pytest.fixture
def debug_logs() -> Iterator[list[MutableMapping[str, Any]]]:
    """Every structlog event, at every level, whatever an earlier test configured."""
    saved = structlog.get_config()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(0))
    try:
        with capture_logs() as captured:
            yield captured
    finally:
        structlog.configure(**saved)
