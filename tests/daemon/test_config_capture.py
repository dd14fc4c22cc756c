"""`[table.shoe] transport = "capture"`: a capture played as the table's shoe (docs/captures.md),
its settings checked like every transport's, and its file like every file a configuration
names: this host must have it, it must read as a capture, of the table's own protocol."""

from __future__ import annotations

from pathlib import Path

import pytest

from daemon.configuration.file import ConfigErrors
from daemon.configuration.service_config import load_config
from drivers.transports import CaptureSettings

CLEAN_ROUND = Path(__file__).parents[2] / "examples" / "captures" / "enq" / "clean-round.jsonl"

CONFIG = """\
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
protocol = "{protocol}"
transport = "capture"
{settings}
"""


def load(tmp_path: Path, settings: str, protocol: str = "enq") -> CaptureSettings:
    path = tmp_path / "shoe2mqtt.toml"
    path.write_text(CONFIG.format(protocol=protocol, settings=settings), encoding="utf-8")
    (table,) = load_config(path, environ={}).tables
    assert isinstance(table.shoe.transport, CaptureSettings)
    return table.shoe.transport


def mistakes(tmp_path: Path, settings: str, protocol: str = "enq") -> tuple[list[str], list[str]]:
    """(mistakes in the file, problems of this host), each as `line: field: message`."""
    with pytest.raises(ConfigErrors) as caught:
        load(tmp_path, settings, protocol)
    prefix = f"{tmp_path / 'shoe2mqtt.toml'}:"
    return (
        [str(error).removeprefix(prefix) for error in caught.value.errors],
        [str(error).removeprefix(prefix) for error in caught.value.host_problems],
    )


def test_a_capture_is_a_shoe_with_a_path_and_a_speed(tmp_path: Path) -> None:
    assert load(tmp_path, f'path = "{CLEAN_ROUND}"') == CaptureSettings(str(CLEAN_ROUND), 1.0)
    assert load(tmp_path, f'path = "{CLEAN_ROUND}"\nspeed = 0').speed == 0


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ("", "13: table[1].shoe.path: required for a capture shoe"),
        ('path = "shoe.jsonl"', "16: table[1].shoe.path: must be the capture file's absolute path"),
        (f'path = "{CLEAN_ROUND}"\nspeed = -1', "17: table[1].shoe.speed: must be a number from 0"),
        (f'path = "{CLEAN_ROUND}"\nspeed = "fast"', "17: table[1].shoe.speed: must be a number"),
        (
            f'path = "{CLEAN_ROUND}"\nport = 4001',
            "17: table[1].shoe.port: not a setting of a capture",
        ),
    ],
)
def test_settings_that_cannot_work_are_mistakes_in_the_file(
    tmp_path: Path, settings: str, expected: str
) -> None:
    errors, _ = mistakes(tmp_path, settings)
    assert len(errors) == 1
    assert errors[0].startswith(expected), errors


@pytest.mark.parametrize(
    ("content", "protocol", "expected"),
    [
        (None, "enq", "cannot read"),
        ('{"format": "pcap"}\n', "enq", "line 1: not a capture"),
        (
            "clean-round",
            "reference",
            "recorded from a shoe of protocol 'enq', not this table's 'reference'",
        ),
    ],
    ids=["missing", "not-a-capture", "another-protocol"],
)
def test_a_capture_this_host_cannot_play_is_a_problem_of_the_host(
    tmp_path: Path, content: str | None, protocol: str, expected: str
) -> None:
    capture = tmp_path / "shoe.jsonl"
    if content == "clean-round":
        capture.write_bytes(CLEAN_ROUND.read_bytes())
    elif content is not None:
        capture.write_text(content, encoding="utf-8")
    errors, host = mistakes(tmp_path, f'path = "{capture}"', protocol)
    assert errors == []
    assert len(host) == 1
    assert host[0].startswith("16: table[1].shoe.path: ")
    assert expected in host[0]


def test_any_number_of_tables_may_play_one_capture(tmp_path: Path) -> None:
    path = tmp_path / "shoe2mqtt.toml"
    one = CONFIG.format(protocol="enq", settings=f'path = "{CLEAN_ROUND}"')
    two = one + one.split("\n\n", 1)[1].replace('id = "bj-1"', 'id = "bj-2"')
    path.write_text(two, encoding="utf-8")
    assert len(load_config(path, environ={}).tables) == 2
