"""The service configuration file: every mistake is named by file, line and field."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from daemon.config import ConfigErrors, load_config
from drivers.transports import SerialSettings, TcpSettings

EXAMPLE = Path(__file__).parents[2] / "examples" / "shoe2mqtt.toml"

GOOD = """\
[mqtt]
host = "127.0.0.1"

[[table]]
id = "bj-1"
game = "blackjack"
[table.limits.blackjack]
min = "10"
max = "1000"
[table.limits.twenty_point_bonus]
min = "5"
max = "100"
[table.shoe]
protocol = "enq"
transport = "serial"
port = "/dev/ttyUSB0"
baudrate = 4800

[[table]]
id = "ta-1"
game = "triple_attack"
limits.first_attack = { min = "10", max = "500" }
limits.second_attack = { min = "10", max = "500" }
limits.third_attack = { min = "10", max = "500" }
shoe = { protocol = "reference", transport = "tcp", host = "moxa-3.pit", port = 4001 }
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "shoe2mqtt.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _errors(tmp_path: Path, text: str) -> list[str]:
    with pytest.raises(ConfigErrors) as caught:
        load_config(_write(tmp_path, text), environ={})
    return [
        str(error).removeprefix(str(tmp_path / "shoe2mqtt.toml")) for error in caught.value.errors
    ]


def test_a_good_file_gives_every_table_its_game_and_its_shoe(tmp_path: Path) -> None:
    config = load_config(_write(tmp_path, GOOD), environ={})
    assert config.mqtt.host == "127.0.0.1"
    assert [t.table.table_id for t in config.tables] == ["bj-1", "ta-1"]
    assert config.tables[0].shoe.transport == SerialSettings("/dev/ttyUSB0", baudrate=4800)
    assert config.tables[1].shoe.protocol == "reference"
    assert isinstance(config.tables[1].shoe.transport, TcpSettings)


def test_the_shipped_example_is_valid_once_its_files_exist(
    tmp_path: Path, certificates: Any
) -> None:
    shutil.copy(certificates.ca, tmp_path / "ca.crt")
    (tmp_path / "mqtt-password").write_text("s3cret\n", encoding="utf-8")
    text = EXAMPLE.read_text(encoding="utf-8").replace("/etc/shoe2mqtt/", f"{tmp_path}/")
    config = load_config(_write(tmp_path, text), environ={})
    assert config.tables[0].table.queen_of_hearts_aggregate_limit == 2_500_000
    assert "s3cret" not in repr(config)


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            'max = "1000"',
            'max = "5"',
            ":9: table[1].limits.blackjack.max: must not be below the minimum",
        ),
        (
            "baudrate = 4800",
            "baudrate = 4801",
            ":17: table[1].shoe.baudrate: must be a standard baud rate (shoes use 4800 or 9600",
        ),
        (
            'protocol = "enq"',
            'protocol = "angel"',
            ":14: table[1].shoe.protocol: unknown protocol 'angel'",
        ),
        ('game = "triple_attack"', 'game = "poker"', ":21: table[2].game: must be one of"),
        (
            "port = 4001 }",
            'port = 4001, parity = "E" }',
            ":25: table[2].shoe.parity: not a setting of a tcp shoe",
        ),
        (
            'host = "127.0.0.1"',
            'host = "127.0.0.1"\npassword = "x"',
            ":3: mqtt.password: the password must not be in the config file",
        ),
    ],
)
def test_each_mistake_names_its_line_and_field(
    tmp_path: Path, old: str, new: str, expected: str
) -> None:
    errors = _errors(tmp_path, GOOD.replace(old, new, 1))
    assert len(errors) == 1
    assert errors[0].startswith(expected), errors[0]


def test_mistakes_in_several_sections_are_all_reported(tmp_path: Path) -> None:
    text = GOOD.replace('host = "127.0.0.1"', "port = 1883").replace('id = "ta-1"', 'id = "bj-1"')
    errors = _errors(tmp_path, text)
    assert [e.split(": ", 2)[1] for e in errors] == ["mqtt.host", "table[2].id"]


def test_a_toml_syntax_error_names_its_line(tmp_path: Path) -> None:
    errors = _errors(tmp_path, GOOD.replace('game = "blackjack"', "game = blackjack"))
    assert errors[0].startswith(":6: not valid TOML")


def test_a_missing_file_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    with pytest.raises(ConfigErrors, match="cannot read the file"):
        load_config(tmp_path / "absent.toml", environ={})


def test_unknown_sections_and_settings_are_refused(tmp_path: Path) -> None:
    errors = _errors(
        tmp_path, GOOD + '\n[journal]\nstate_dir = "/var/lib/x"\n[loging]\nlevel = "debug"\n'
    )
    assert [e.split(": ", 2)[1] for e in errors] == ["journal.state_dir", "loging"]


def test_run_with_a_bad_config_exits_78_so_systemd_does_not_restart_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from daemon.cli import ExitCode, main

    path = _write(tmp_path, GOOD.replace('max = "1000"', 'max = "5"'))
    assert main(["run", "--config", str(path)]) == ExitCode.CONFIG.value == 78
    assert "table[1].limits.blackjack.max" in capsys.readouterr().err


def test_the_old_driver_key_still_works_and_says_it_is_now_protocol(tmp_path: Path) -> None:
    """A site's file written before `protocol` was the key keeps working, with a note."""
    config = load_config(_write(tmp_path, GOOD.replace('protocol = "enq"', 'driver = "enq"')))
    assert config.tables[0].shoe.protocol == "enq"
    (note,) = config.deprecations
    assert (note.line, note.field) == (14, "table[1].shoe.driver")
    assert "renamed `protocol`" in note.message
    assert load_config(_write(tmp_path, GOOD), environ={}).deprecations == ()


def test_the_old_and_the_new_key_together_are_a_mistake(tmp_path: Path) -> None:
    both = GOOD.replace('protocol = "enq"', 'protocol = "enq"\ndriver = "enq"')
    assert _errors(tmp_path, both) == [
        ":15: table[1].shoe.driver: the old name of `protocol`: give only `protocol`"
    ]
