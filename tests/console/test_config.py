"""`[console]`: what `shoe2mqtt console` reads of the configuration file, and what the daemon's
check-config says of it (daemon/dealer_console/config.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from daemon.cli.check_config import CONSOLE_PROBLEMS_HEADING
from daemon.cli.exit_codes import ExitCode
from daemon.configuration.file import ConfigErrors
from daemon.configuration.service_config import load_config
from daemon.dealer_console.config import load_console_config, parse_dealers
from tests.console.table import console_section, write_dealers

TABLE = """[[table]]
id = "bj-1"
game = "blackjack"
seats = 5
twenty_point_bonus = false
[table.limits.blackjack]
min = "10"
max = "500"
[table.shoe]
protocol = "reference"
transport = "serial"
port = "/dev/null"
"""


def _file(tmp_path: Path, console: str, *, table: str = TABLE) -> Path:
    path = tmp_path / "shoe2mqtt.toml"
    path.write_text(f'[mqtt]\nhost = "127.0.0.1"\n{console}\n{table}\n', "utf-8")
    return path


def test_a_console_takes_its_table_from_the_file(tmp_path: Path) -> None:
    dealers = write_dealers(tmp_path / "dealers", {"ann": "1234", "bo": "pass word"})
    config = load_console_config(_file(tmp_path, console_section("bj-1", 8123, dealers)))
    settings = config.console
    assert (settings.table.table_id, settings.table.seats, settings.port) == ("bj-1", 5, 8123)
    assert sorted(settings.dealers) == ["ann", "bo"]
    assert settings.dealers["bo"].reveal() == "pass word"
    assert settings.chips == (500, 2500, 10000)
    assert config.mqtt.client_id == "shoe2mqtt-console-bj-1"
    assert config.mqtt.username is None  # never the daemon's


def test_every_mistake_is_said_with_its_field(tmp_path: Path) -> None:
    section = (
        '[console]\ntable = "bj-9"\nport = 0\nchips = ["5", "lots"]\n'
        f'dealers_file = "{tmp_path / "missing"}"\npassword = "x"\n'
    )
    with pytest.raises(ConfigErrors) as refused:
        load_console_config(_file(tmp_path, section))
    said = {error.field: error.message for error in refused.value.errors}
    assert "no [[table]] with id = 'bj-9'" in said["console.table"]
    assert said["console.port"] == "must be from 1 to 65535, not 0"
    assert said["console.chips"].startswith("chip 2 must be an amount above zero in quotes")
    assert said["console.chips"].endswith("; not a string ('lots')")
    assert said["console.dealers_file"].startswith("no such file")
    assert said["console.password"].startswith("the password must not be in this file")


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("ann:1\nann:2\n", "line 2: 'ann' is named twice"),
        ("# nobody\n", "no dealer in it"),
        ("ann\n", "line 1: not `name:PIN`"),
        ("ann:\n", "line 1: not `name:PIN`"),
    ],
)
def test_a_dealers_file_that_names_no_one_rightly_is_refused(text: str, said: str) -> None:
    with pytest.raises(ValueError, match="^" + said.replace("(", r"\(")):
        parse_dealers(text)


def test_the_daemon_checks_the_console_section_s_shape_and_runs_beside_it(
    tmp_path: Path,
) -> None:
    good = _file(tmp_path, '[console]\ntable = "bj-1"\ndealers_file = "/not/read/here"')
    assert load_config(good).tables[0].table.table_id == "bj-1"
    bad = _file(tmp_path, '[console]\ntable = "bj-1"\nbind = "anywhere"\ncolour = 1')
    with pytest.raises(ConfigErrors) as refused:
        load_config(bad)
    fields = sorted(error.field for error in refused.value.errors)
    assert fields == ["console.bind", "console.colour", "console.dealers_file"]


def _check_config(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - our own command, as a user types it
        [Path(sys.executable).parent / "shoe2mqtt", "check-config", "--config", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_check_config_names_what_the_console_would_refuse_under_its_own_heading(
    tmp_path: Path,
) -> None:
    """A file `run` accepts can still stop `shoe2mqtt console`: check-config says so, as it
    says what would stop the display, and the daemon's own check (`--daemon`) does not."""
    missing = tmp_path / "no-dealers"
    path = _file(tmp_path, f'[console]\ntable = "bj-2"\ndealers_file = "{missing}"')
    checked = _check_config(path)
    assert checked.returncode == ExitCode.CONFIG
    mistakes, heading, problems = checked.stderr.partition(CONSOLE_PROBLEMS_HEADING)
    assert (mistakes, heading) == ("", CONSOLE_PROBLEMS_HEADING), checked.stderr
    assert problems.splitlines() == [
        (
            f"{path}:4: console.table: no [[table]] with id = 'bj-2' in this file: the console "
            "takes the table's game, seats and limits from it"
        ),
        f"{path}:5: console.dealers_file: no such file: '{missing}'",
    ]
    daemon_only = subprocess.run(  # noqa: S603 - our own command, as a user types it
        [Path(sys.executable).parent / "shoe2mqtt", "check-config", "--daemon", str(path)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert daemon_only.returncode == ExitCode.OK, daemon_only.stderr
    dealers = write_dealers(tmp_path / "dealers", {"ann": "1234"})
    _file(tmp_path, console_section("bj-1", 8123, dealers))
    assert _check_config(path).returncode == ExitCode.OK


def test_a_mistake_of_the_shared_broker_section_is_said_once_as_the_daemon_s(
    tmp_path: Path,
) -> None:
    """`[mqtt]` is the daemon's and the console's: its mistake stops `run` too, so it is not
    repeated under the console's heading ("`run` does not" need it mended)."""
    dealers = write_dealers(tmp_path / "dealers", {"ann": "1234"})
    path = _file(tmp_path, "contract = 5\n" + console_section("bj-1", 8123, dealers))
    checked = _check_config(path)
    assert checked.returncode == ExitCode.CONFIG
    assert CONSOLE_PROBLEMS_HEADING not in checked.stderr
    assert checked.stderr.count("mqtt.contract") == 1, checked.stderr
