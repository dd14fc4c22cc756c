"""The udev rules, read the way udev reads them (udev(7), systemd 252).

Debian 12's udevadm (252) has no `verify` (253 added it), so the rules are parsed here: every
key must be one udev knows, with the operators it allows. The commented example lines of the
readers file are parsed too, as a site will uncomment them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

from daemon.cli.ports import SERIAL_ADAPTERS
from tests.deploy.layout import SYSTEMD, UDEV

if TYPE_CHECKING:
    from pathlib import Path

MATCH_OPS = frozenset({"==", "!="})
ASSIGN_OPS = frozenset({"=", "+=", "-=", ":="})
# key → (takes an {attribute}, operators allowed), from udev(7).
KEYS: dict[str, tuple[bool, frozenset[str]]] = {
    **dict.fromkeys(
        (
            "ACTION",
            "DEVPATH",
            "KERNEL",
            "KERNELS",
            "SUBSYSTEM",
            "SUBSYSTEMS",
            "DRIVER",
            "DRIVERS",
            "TAGS",
            "PROGRAM",
            "RESULT",
        ),
        (False, MATCH_OPS),
    ),
    **dict.fromkeys(("ATTRS", "CONST", "TEST"), (True, MATCH_OPS)),
    **dict.fromkeys(("NAME", "SYMLINK", "TAG"), (False, MATCH_OPS | ASSIGN_OPS)),
    **dict.fromkeys(("ATTR", "SYSCTL", "ENV"), (True, MATCH_OPS | ASSIGN_OPS)),
    **dict.fromkeys(("OWNER", "GROUP", "MODE", "OPTIONS"), (False, ASSIGN_OPS)),
    **{key: (False, frozenset({"="})) for key in ("LABEL", "GOTO")},
    **dict.fromkeys(("SECLABEL", "RUN", "IMPORT"), (True, ASSIGN_OPS)),
}
_PAIR = re.compile(
    r'\s*(?P<key>[A-Z]+)(?:\{(?P<attr>[^}]*)\})?\s*(?P<op>==|!=|\+=|-=|:=|=)\s*"(?P<value>[^"]*)"\s*'
)
# An example rule line in a comment: `#KEY...` with no space after the hash.
_COMMENTED_RULE = re.compile(r"^#(?=[A-Z]+[{=!+:-])")


@dataclass(frozen=True)
class Pair:
    key: str
    attr: str | None
    op: str
    value: str


def parse_line(line: str) -> list[Pair]:
    """One rule: comma-separated KEY[{attr}]OP"value" pairs, or an AssertionError that says why."""
    pairs: list[Pair] = []
    rest = line
    while rest:
        match = _PAIR.match(rest)
        assert match, f'not a KEY="value" pair at: {rest!r}'
        pair = Pair(match["key"], match["attr"], match["op"], match["value"])
        assert pair.key in KEYS, f"udev has no key {pair.key}"
        takes_attr, ops = KEYS[pair.key]
        assert (pair.attr is not None) == takes_attr, f"{pair.key}: {{attribute}} misused"
        assert pair.op in ops, f"{pair.key} cannot take {pair.op}"
        pairs.append(pair)
        rest = rest[match.end() :]
        if rest:
            assert rest.startswith(","), f"pairs are separated by commas: {rest!r}"
            rest = rest[1:]
    return pairs


def rules(path: Path, *, with_examples: bool = False) -> list[list[Pair]]:
    parsed = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = _COMMENTED_RULE.sub("", raw) if with_examples else raw
        if line.strip() and not line.lstrip().startswith("#"):
            parsed.append(parse_line(line))
    return parsed


RULE_FILES = sorted(UDEV.glob("*.rules"))


def test_both_rule_files_ship() -> None:
    assert [path.name for path in RULE_FILES] == [
        "69-shoe2mqtt-readers.rules",
        "70-shoe2mqtt.rules",
    ]


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda path: path.name)
def test_every_key_is_one_udev_knows_and_every_goto_lands(path: Path) -> None:
    parsed = rules(path, with_examples=True)
    assert parsed
    labels = {p.value for rule in parsed for p in rule if p.key == "LABEL"}
    gotos = {p.value for rule in parsed for p in rule if p.key == "GOTO"}
    assert gotos <= labels


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda path: path.name)
def test_nothing_is_run_and_nothing_world_accessible(path: Path) -> None:
    pairs = [p for rule in rules(path, with_examples=True) for p in rule]
    # udev kills RUN programs after a few seconds; a daemon belongs in SYSTEMD_WANTS.
    assert not [p for p in pairs if p.key in {"RUN", "PROGRAM"}]
    for mode in (p.value for p in pairs if p.key == "MODE"):
        assert int(mode, 8) & 0o007 == 0, f"MODE={mode} lets every user at the reader"


def test_every_reader_gets_its_name_its_group_and_its_instance() -> None:
    pairs = [p for rule in rules(UDEV / "70-shoe2mqtt.rules") for p in rule]
    assigned = {(p.key, p.attr, p.op, p.value) for p in pairs if p.op in ASSIGN_OPS}
    assert {
        ("SYMLINK", None, "+=", "shoe2mqtt/$env{SHOE2MQTT_NAME}"),
        ("MODE", None, "=", "0660"),
        ("GROUP", None, "=", "shoe2mqtt"),
        ("TAG", None, "+=", "systemd"),
        ("ENV", "SYSTEMD_WANTS", "+=", "shoe2mqtt@$env{SHOE2MQTT_NAME}.service"),
    } <= assigned
    # Only devices a readers rule has named get any of it.
    first = rules(UDEV / "70-shoe2mqtt.rules")[:3]
    assert any(
        p.key == "ENV" and p.attr == "SHOE2MQTT_NAME" and p.op == "!=" for r in first for p in r
    )


def test_the_template_binds_to_the_device_the_rules_name() -> None:
    template = (SYSTEMD / "shoe2mqtt@.service").read_text(encoding="utf-8")
    # /dev/shoe2mqtt/NAME is the device unit dev-shoe2mqtt-NAME.device, NAME the instance.
    assert "BindsTo=dev-shoe2mqtt-%i.device" in template
    assert "DeviceAllow=/dev/shoe2mqtt/%i rw" in template


def test_the_example_readers_are_the_adapters_shoe2mqtt_ports_knows() -> None:
    examples = rules(UDEV / "69-shoe2mqtt-readers.rules", with_examples=True)
    named = [r for r in examples if any(p.attr == "SHOE2MQTT_NAME" for p in r)]
    assert len(named) >= 5
    for rule in named:
        fields = {(p.key, p.attr): p.value for p in rule}
        name = fields["ENV", "SHOE2MQTT_NAME"]
        # A name becomes a path and a unit name: '-' would be read as '/' in the device unit.
        assert re.fullmatch(r"[A-Za-z0-9_]+|\$env\{ID_SERIAL_SHORT\}", name), name
        if ("ATTRS", "idVendor") in fields:  # USB-serial adapters
            ids = int(fields["ATTRS", "idVendor"], 16), int(fields["ATTRS", "idProduct"], 16)
            assert ids in SERIAL_ADAPTERS
            # Generic chips: one adapter, by serial number or by USB socket, never all of them.
            assert ("ATTRS", "serial") in fields or ("ENV", "ID_PATH") in fields
    # Shipped with every example commented out: a fresh install claims no device.
    assert not [r for r in rules(UDEV / "69-shoe2mqtt-readers.rules") if len(r) > 2]


@pytest.mark.parametrize(
    "line",
    [
        'SUBSYSTEM=="tty", MODE="0666"',
        'KERNEL=="ttyUSB0", RUN+="/opt/shoe2mqtt/bin/shoe2mqtt run"',
        'SUBSYSTEMS=="usb", FOO="bar"',
        'ATTRS=="x"',
        'ACTION="add"',
        'KERNEL=="ttyUSB0" MODE="0660"',
    ],
)
def test_the_checks_catch_what_they_are_for(line: str, tmp_path: Path) -> None:
    path = tmp_path / "bad.rules"
    path.write_text(line + "\n")
    with pytest.raises(AssertionError):
        test_nothing_is_run_and_nothing_world_accessible(path)
