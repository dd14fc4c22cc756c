"""`[display]` in the daemon's TOML file: the display's own broker user, never the daemon's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from daemon.cli.check_config import DISPLAY_PROBLEMS_HEADING
from daemon.cli.command import HOST_PROBLEMS_HEADING
from daemon.cli.exit_codes import ExitCode
from daemon.configuration.file import ConfigErrors
from daemon.configuration.service_config import load_config
from daemon.display.config import DEFAULT_BIND, DEFAULT_PORT, load_display_config
from daemon.mqtt.secret import Secret
from daemon.mqtt.settings import default_node

if TYPE_CHECKING:
    from daemon.testing import Certificates

EXAMPLE = Path(__file__).parents[2] / "examples" / "shoe2mqtt.toml"

DAEMON_PART = """\
[mqtt]
host = "broker.pit"
port = 8883
node = "pit-a"
username = "shoe2mqtt-pit-a"
password_file = "{daemon_password}"

[mqtt.tls]
ca_file = "{ca}"

[[table]]
id = "bj-1"
game = "blackjack"
limits.blackjack = {{ min = "10", max = "1000" }}
limits.twenty_point_bonus = {{ min = "5", max = "100" }}
shoe = {{ protocol = "enq", transport = "serial", port = "/dev/ttyUSB0" }}
"""


def _file(tmp_path: Path, certificates: Certificates, display: str) -> Path:
    daemon_password = tmp_path / "daemon-password"
    daemon_password.write_text("the daemon's\n", encoding="utf-8")
    path = tmp_path / "shoe2mqtt.toml"
    base = DAEMON_PART.format(daemon_password=daemon_password, ca=certificates.ca)
    path.write_text(base + display, encoding="utf-8")
    return path


def test_the_display_is_the_display_user_and_never_reads_the_daemons_password(
    tmp_path: Path, certificates: Certificates
) -> None:
    password = tmp_path / "display-password"
    password.write_text("the display's\n", encoding="utf-8")
    path = _file(
        tmp_path,
        certificates,
        f'\n[display]\nusername = "display-pit-a"\npassword_file = "{password}"\ntitle = "Pit A"\n',
    )
    (tmp_path / "daemon-password").chmod(0)  # as the display's own user finds it
    if os.geteuid() == 0:  # root reads any file: take it away instead
        (tmp_path / "daemon-password").unlink()
    config = load_display_config(path, environ={})
    assert config.mqtt.username == "display-pit-a"
    assert config.mqtt.password == Secret("the display's")
    assert (config.mqtt.host, config.mqtt.port) == ("broker.pit", 8883)
    assert config.mqtt.tls is not None
    assert config.mqtt.tls.ca_file == certificates.ca
    assert config.mqtt.client_id == "shoe2mqtt-display-pit-a"
    assert (config.display.bind, config.display.port) == (DEFAULT_BIND, DEFAULT_PORT)
    assert config.display.title == "Pit A"


def test_without_a_display_section_the_defaults_serve_this_pc_only(
    tmp_path: Path, certificates: Certificates
) -> None:
    config = load_display_config(_file(tmp_path, certificates, ""), environ={})
    assert (config.display.bind, config.display.port) == ("127.0.0.1", 8080)
    assert (config.mqtt.username, config.mqtt.password) == (None, None)
    assert (config.display.https, config.display.login) == (None, None)


def test_every_mistake_is_named_with_its_line_at_once(
    tmp_path: Path, certificates: Certificates
) -> None:
    display = """
[display]
bind = "localhost"
port = 80000
password_file = "/nonexistent/display-password"
colour = "green"

[display.login]
username = "pit:boss"
"""
    path = _file(tmp_path, certificates, display)
    with pytest.raises(ConfigErrors) as caught:
        load_display_config(path, environ={})
    where = str(path)
    assert [str(error) for error in caught.value.errors] == [
        (
            f"{where}:19: display.bind: must be an IP address to listen on, e.g. '127.0.0.1' "
            "or '0.0.0.0'; not a string ('localhost')"
        ),
        f"{where}:20: display.port: must be from 1 to 65535, not 80000",
        (f"{where}:21: display.password_file: no such file: '/nonexistent/display-password'"),
        (
            f"{where}:21: display.password_file: a password needs its broker user: set "
            "display.username"
        ),
        (
            f"{where}:22: display.colour: unknown setting; settings: bind, client_id, https, "
            "login, password_file, port, title, username"
        ),
        f"{where}:24: display.login.password_file: required: the file holding the password",
        f"{where}:25: display.login.username: required: a quoted name without ':'",
    ]


def test_check_config_checks_the_display_section_without_reading_its_files(
    tmp_path: Path, certificates: Certificates
) -> None:
    """The daemon's user may rightly be unable to read the display's password file; a
    mistake in the section's shape is still a mistake in the file."""
    readable_by_the_display_only = '\n[display]\nusername = "d"\npassword_file = "/nowhere"\n'
    path = _file(tmp_path, certificates, readable_by_the_display_only)
    assert load_config(path, environ={}).tables[0].table.table_id == "bj-1"
    _file(tmp_path, certificates, "\n[display]\nport = true\n")
    with pytest.raises(ConfigErrors) as caught:
        load_config(path, environ={})
    assert [e.field for e in caught.value.errors] == ["display.port"]


def test_the_example_configuration_has_a_display_section_that_checks() -> None:
    result = subprocess.run(  # noqa: S603 - our own command on our own example
        [Path(sys.executable).parent / "shoe2mqtt", "check-config", str(EXAMPLE)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    # The example names files of a table PC (/etc/shoe2mqtt/...): only those may be missing,
    # and they are this host's problems, not mistakes in the file; the display's own file
    # is named too, under its own heading (the daemon's check alone would not read it).
    mistakes, _, problems = result.stderr.partition(HOST_PROBLEMS_HEADING)
    host_problems, _, display_problems = problems.partition(DISPLAY_PROBLEMS_HEADING)
    assert mistakes == "", result.stderr
    assert all(
        "/etc/shoe2mqtt/" in line and "no such file" in line
        for line in (host_problems + display_problems).splitlines()
    ), result.stderr
    assert "display.password_file: no such file" in display_problems, result.stderr
    assert result.returncode == ExitCode.CONFIG
    assert "[display]" in EXAMPLE.read_text(encoding="utf-8")


def test_a_display_on_a_host_of_its_own_needs_no_node(
    tmp_path: Path, certificates: Certificates
) -> None:
    path = _file(tmp_path, certificates, "")
    path.write_text(path.read_text().replace('node = "pit-a"\n', ""), encoding="utf-8")
    config = load_display_config(path, environ={})
    assert config.mqtt.client_id == f"shoe2mqtt-display-{default_node({})}"
