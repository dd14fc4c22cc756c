"""The service configuration file: every mistake is named by file, line and field."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from daemon.cli import ExitCode
from daemon.configuration.file import ConfigErrors
from daemon.configuration.service_config import load_config
from daemon.journal import Journal, prepare_state_directory
from drivers.transports import SerialSettings, TcpSettings

SHOE2MQTT = Path(sys.executable).parent / "shoe2mqtt"

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
        (
            'host = "127.0.0.1"',
            'host = "127.0.0.1"\ncontract = 5',
            ":3: mqtt.contract: must be 3 or 4 (the console contract",
        ),
        (
            'host = "127.0.0.1"',
            'host = "127.0.0.1"\ncontract = 4.0',
            ":3: mqtt.contract: must be 3 or 4 (the console contract",
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


# ---------------------------------------------------------------- every mistake, one run

TEN_MISTAKES = """\
[mqtt]
host = "broker.pit.example"
port = 70000

[journal]
outbox_limit = 9223372036854775807

[logging]
level = "verbose"

[[table]]
id = "bj-1\\n"
game = "blackjack"
decsk = 6
seats = 9
paytable = "C"

[table.limits.blackjack]
min = "10.00"
max = "100000000000000000000000000000000000000000000000000"

[table.limits.twenty_point_bonus]
min = "500.00"
max = "100.00"

[table.shoe]
protocol = "enq"
transport = "serial"
port = "/dev/shoe2mqtt/bj-1"
baudrate = "4800"
"""


def test_a_file_with_ten_mistakes_gets_ten_lines(tmp_path: Path) -> None:
    """A typo (`decsk`) hides nothing; three mistakes in one table are three lines;
    a type mistake is named as one; every value is bounded ($10^50, 2**63 - 1)."""
    path = _write(tmp_path, TEN_MISTAKES)
    result = subprocess.run(  # noqa: S603 - our own command, as a person types it
        [SHOE2MQTT, "check-config", str(path)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 78
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        f"{path}:{line}: {message}"
        for line, message in [
            (3, "mqtt.port: must be from 1 to 65535, not 70000"),
            (
                6,
                (
                    "journal.outbox_limit: must be from 100 to 1000000, "
                    "not a number of more than 15 digits"
                ),
            ),
            (
                9,
                (
                    "logging.level: must be one of debug, info, warning, error; "
                    "not a string ('verbose')"
                ),
            ),
            (
                12,
                (
                    "table[1].id: a table id is 1-32 lowercase ASCII letters, digits, '-' or '_', "
                    "starting with a letter or digit; not a string ('bj-1\\n')"
                ),
            ),
            (14, "table[1].decsk: unknown setting; did you mean 'decks'?"),
            (15, "table[1].seats: must be from 1 to 7, not 9"),
            (
                16,
                (
                    "table[1].paytable: unknown paytable 'C': name one of ['A', 'B'] "
                    "or give the odds of every line"
                ),
            ),
            (
                20,
                (
                    "table[1].limits.blackjack.max: at most 10000000.00, "
                    "not a string ('1000000000000000000000000000000000000...')"
                ),
            ),
            (
                24,
                (
                    "table[1].limits.twenty_point_bonus.max: must not be below the minimum, "
                    "500.00; not 100.00"
                ),
            ),
            (30, "table[1].shoe.baudrate: must be a whole number, not a string ('4800')"),
        ]
    ]


def test_what_this_host_lacks_is_reported_apart_and_stops_only_what_needs_it(
    tmp_path: Path,
) -> None:
    """The CA file's absence hides nothing (the password file's is said too), neither is
    a mistake in the file, `run` refuses to start without them (78), and `journal`, which
    never connects, reads its journal regardless."""
    state = tmp_path / "state"
    text = GOOD.replace(
        'host = "127.0.0.1"',
        f'host = "127.0.0.1"\nusername = "pit-a"\npassword_file = "{tmp_path}/mqtt-password"\n'
        f'[mqtt.tls]\nca_file = "{tmp_path}/ca.crt"\n[journal]\nstate_directory = "{state}"',
    )
    path = _write(tmp_path, text)
    checked = _shoe2mqtt("check-config", str(path))
    assert checked.returncode == 78
    assert checked.stderr == (
        "problems of this host, not of the file (`run` needs them mended):\n"
        f"{path}:4: mqtt.password_file: no such file: '{tmp_path}/mqtt-password'\n"
        f"{path}:6: mqtt.tls.ca_file: no such file: '{tmp_path}/ca.crt'\n"
    )
    run = _shoe2mqtt("run", "--config", str(path))
    assert (run.returncode, run.stderr) == (78, checked.stderr)

    asyncio.run(_make_journal(state))
    listed = _shoe2mqtt("journal", "--config", str(path), "list")
    assert (listed.returncode, listed.stdout, listed.stderr) == (0, "", "")


async def _make_journal(state: Path) -> None:
    journal = Journal(prepare_state_directory(state))
    await journal.open()
    await journal.close()


def _shoe2mqtt(*words: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - our own command, as a person types it
        [SHOE2MQTT, *words], capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.parametrize("contract", [None, 3, 4])
def test_check_config_says_the_broker_the_console_contract_and_the_tables(
    tmp_path: Path, contract: int | None
) -> None:
    """The contract decides what the consoles and the pit read (docs/mqtt.md): a file
    that changes it, or keeps the default, says which in its OK line."""
    text = (
        GOOD if contract is None else GOOD.replace("[mqtt]\n", f"[mqtt]\ncontract = {contract}\n")
    )
    path = _write(tmp_path, text)
    checked = _shoe2mqtt("check-config", str(path))
    assert (checked.returncode, checked.stderr) == (0, "")
    assert checked.stdout == (
        f"{path}: OK: broker 127.0.0.1:1883, console contract {contract or 3}; "
        "tables: bj-1 (blackjack, enq), ta-1 (triple_attack, reference)\n"
    )


MQTT_ONLY = GOOD.split("[[table]]", 1)[0]
TABLE_1, TABLE_2 = ("[[table]]" + t for t in GOOD.split("[[table]]")[1:])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "table = [1, 2]\n" + MQTT_ONLY,
            [
                ":1: table[1]: must be a [[table]] section of settings, not a whole number (1)",
                ":1: table[2]: must be a [[table]] section of settings, not a whole number (2)",
            ],
        ),
        (
            "x = " + "[" * 5000 + "]" * 5000 + "\n" + GOOD,
            [
                ":1: x: nested deeper than 8 arrays or tables",
            ],
        ),
        (
            "a" + ".a" * 5000 + " = 1\n" + GOOD,
            [
                ":1: a.a.a.a.a.a.a.a.a: nested deeper than 8 arrays or tables",
            ],
        ),
        (
            "mqtt = 5\n" + TABLE_1,
            [
                ":1: mqtt: required: an [mqtt] section with at least `host`, not a whole ...",
            ],
        ),
        (
            MQTT_ONLY + TABLE_1.replace("[[table]]", "[table]"),
            [
                ":4: table: required: at least one [[table]] section, not a table",
            ],
        ),
        (
            MQTT_ONLY + TABLE_2.replace("shoe = {", 'shoe = "moxa-3"\nx = {'),
            [
                (
                    ":10: table[1].shoe: required: a [table.shoe] section with protocol, "
                    "transport and its settings, not a string ('moxa-3')"
                ),
                ":11: table[1].x: unknown setting; settings: burn_cards, dealer_hits_soft_17, ...",
            ],
        ),
        (
            MQTT_ONLY + "[[table]]\nlimits = [[[[1]]]]\n",
            [
                ":4: table[1].game: required, one of ['blackjack', 'double_attack', 'triple_...",
                ":4: table[1].id: required: the table's id, e.g. 'bj-1'",
                (
                    ":4: table[1].shoe: required: a [table.shoe] section with protocol, "
                    "transport and its settings"
                ),
                ":5: table[1].limits: required: a table of {min, max} per wager kind, not an array",
            ],
        ),
        (
            '[mqtt]\nhost = "h"\nport = ' + "9" * 5000 + "\n",
            [
                ":3: not valid TOML: a number far too long",
            ],
        ),
    ],
)
def test_every_malformed_shape_is_refused_with_its_line_and_exit_78(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, expected: list[str]
) -> None:
    """Several were tracebacks (AttributeError, RecursionError) with exit 1, which
    systemd restarts; a mistake in the file is exit 78, which it does not."""
    from daemon.cli import main

    path = _write(tmp_path, text)
    assert main(["run", "--config", str(path)]) == ExitCode.CONFIG
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == len(expected), lines
    for start in expected:
        prefix = f"{path}{start.removesuffix('...')}"
        assert any(line.startswith(prefix) for line in lines), (prefix, lines)


def _tables(count: int) -> str:
    return MQTT_ONLY + "".join(
        TABLE_2.replace('"ta-1"', f'"ta-{n}"').replace("moxa-3.pit", f"moxa-{n}.pit")
        for n in range(count)
    )


def test_one_process_serves_at_most_256_tables(tmp_path: Path) -> None:
    """The scale goal; more tables go to another instance (docs/deploy.md)."""
    assert _errors(tmp_path, _tables(257)) == [
        (
            ":4: table: 257 tables: one process serves at most 256; "
            "give the others to another instance (docs/deploy.md)"
        )
    ]
    assert len(load_config(_write(tmp_path, _tables(256)), environ={}).tables) == 256


SHOE = 'shoe = { protocol = "reference", transport = '


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        (
            '"serial", port = "/dev/ttyUSB0" }',
            '"serial", port = "/dev/ttyUSB0" }',
            "table[2].shoe.port: table [1] reads this shoe already: one shoe, one table",
        ),
        (
            '"tcp", host = "moxa-3.pit", port = 4001 }',
            '"tcp", host = "MOXA-3.pit", port = 4001 }',
            "table[2].shoe.host: table [1] reads this shoe already: one shoe, one table",
        ),
        (
            '"usb", vendor_id = 0x0403, product_id = 1 }',
            '"usb", vendor_id = 0x0403, product_id = 1, serial_number = "B2" }',
            (
                "table[2].shoe.serial_number: table [1] reads this shoe already: one shoe, "
                "one table (give each USB shoe its serial_number)"
            ),
        ),
        (
            '"usb", vendor_id = 0x0403, product_id = 1, serial_number = "A1" }',
            '"usb", vendor_id = 0x0403, product_id = 1 }',
            (
                "table[2].shoe.product_id: table [1] reads this shoe already: one shoe, one table "
                "(give each USB shoe its serial_number)"
            ),
        ),
        (
            '"usb", vendor_id = 0x0403, product_id = 1, serial_number = "A1" }',
            '"usb", vendor_id = 0x0403, product_id = 1, serial_number = "B2" }',
            None,
        ),
        (
            '"tcp", host = "moxa-3.pit", port = 4001 }',
            '"tcp", host = "moxa-3.pit", port = 4002 }',
            None,
        ),
    ],
)
def test_two_tables_never_read_one_shoe(
    tmp_path: Path, first: str, second: str, expected: str | None
) -> None:
    """One of them would never get a byte (the port is locked; a device server serves one
    client; a USB shoe without its serial number is whichever of its kind comes first):
    check-config says so, rather than a daemon reconnecting forever."""
    text = _tables(2).replace(SHOE + '"tcp", host = "moxa-0.pit", port = 4001 }', SHOE + first)
    text = text.replace(SHOE + '"tcp", host = "moxa-1.pit", port = 4001 }', SHOE + second)
    assert text.count(SHOE) == 2
    if expected is None:
        assert len(load_config(_write(tmp_path, text), environ={}).tables) == 2
    else:
        line = text.count("\n", 0, text.rfind(SHOE)) + 1
        assert _errors(tmp_path, text) == [f":{line}: {expected}"]


def test_a_relative_file_path_is_a_mistake_not_a_missing_file(tmp_path: Path) -> None:
    """Under systemd the daemon runs in `/`; check-config runs wherever a person stands."""
    text = GOOD.replace('host = "127.0.0.1"', 'host = "127.0.0.1"\ntls = { ca_file = "ca.crt" }')
    assert _errors(tmp_path, text) == [
        (
            ":3: mqtt.tls.ca_file: must be an absolute file path in quotes, e.g. "
            "'/etc/shoe2mqtt/ca.crt'; not a string ('ca.crt')"
        )
    ]
