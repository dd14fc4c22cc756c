"""Configuration documents for property tests: valid ones drawn from the documented ranges,
written out as TOML with the line of every key they hold.

Nothing here imports the checker under test: what is valid comes from docs/configuration.md
and the regulations (seven seats, eight decks, the wagers of each game), written out again
as data, so the property test's oracle is independent of daemon/configuration/service_config.py and
rules/config.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from hypothesis import strategies as st

# ------------------------------------------------------------------ TOML, written out


@dataclass(frozen=True, slots=True)
class RawToml:
    """A value written into the file as it is: nesting, dates, numbers past 64 bits."""

    text: str


FieldPath = tuple[str | int, ...]
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def toml_text(document: dict[str, Any]) -> tuple[str, dict[FieldPath, int]]:
    """`document` as TOML, and the line (from 1) on which each key of it is written.

    Sections are tables (`[mqtt]`); a list of tables is an array of tables (`[[table]]`)
    whose sub-tables follow each entry; everything else is a value on its key's line.
    """
    lines: list[str] = []
    where: dict[FieldPath, int] = {}
    _section(document, (), lines, where)
    return "\n".join(lines) + "\n", where


def _section(
    table: dict[str, Any], path: FieldPath, lines: list[str], where: dict[FieldPath, int]
) -> None:
    nested = {k: v for k, v in table.items() if _is_table(v) or _is_array_of_tables(v)}
    for key, value in table.items():
        if key not in nested:
            lines.append(f"{_key(key)} = {value_text(value)}")
            where[(*path, key)] = len(lines)
    for key, value in nested.items():
        header = ".".join(_key(str(part)) for part in _names((*path, key)))
        if _is_table(value):
            lines.append(f"[{header}]")
            where[(*path, key)] = len(lines)
            _section(value, (*path, key), lines, where)
            continue
        for index, entry in enumerate(value):
            lines.append(f"[[{header}]]")
            where[(*path, key, index)] = len(lines)
            where.setdefault((*path, key), len(lines))
            _section(entry, (*path, key, index), lines, where)


def _names(path: FieldPath) -> list[str]:
    """A header names tables only: array positions are implied (the last entry)."""
    return [part for part in path if isinstance(part, str)]


def _is_table(value: object) -> bool:
    return isinstance(value, dict)


def _is_array_of_tables(value: object) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def _key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else string_text(key)


def value_text(value: object) -> str:
    match value:
        case RawToml(text=text):
            return text
        case bool():
            return "true" if value else "false"
        case int() | float():
            return repr(value)  # TOML writes inf, -inf and nan as Python does
        case str():
            return string_text(value)
        case list():
            return "[" + ", ".join(value_text(item) for item in value) + "]"
        case dict():
            return "{ " + ", ".join(f"{_key(k)} = {value_text(v)}" for k, v in value.items()) + " }"
    raise TypeError(value)


def string_text(text: str) -> str:
    """A TOML basic string: quotes, backslashes and control characters escaped."""
    out = []
    for character in text:
        if character in '"\\':
            out.append("\\" + character)
        elif ord(character) < 0x20 or ord(character) == 0x7F:
            out.append(f"\\u{ord(character):04x}")
        else:
            out.append(character)
    return '"' + "".join(out) + '"'


# ------------------------------------------------------------------ what the docs allow

REFERENCE: Final = Path(__file__).parents[2] / "docs" / "configuration.md"
_SETTING_ROW: Final = re.compile(r"\| `(?P<name>[a-z_]+\.[a-z0-9_.<>]+)` \|")


def documented_settings() -> set[str]:
    """Every setting docs/configuration.md lists in its tables, dotted: `table.shoe.port`."""
    text = REFERENCE.read_text(encoding="utf-8")
    return {match["name"] for match in _SETTING_ROW.finditer(text)}


MAX_CENTS: Final = 1_000_000_000  # $10,000,000.00
STANDARD_BAUDRATES: Final = (300, 1200, 2400, 4800, 9600, 19200, 38400, 57600, 115200)
WAGERS: Final = {
    "blackjack": ("blackjack", "twenty_point_bonus"),
    "double_attack": ("initial", "optional_bonus", "double_attack"),
    "triple_attack": ("first_attack", "second_attack", "third_attack"),
}
OTHER_WAGERS: Final = ("insurance", "match_the_dealer", "lucky_ladies", "twenty_one_plus_three")

segments = st.from_regex(r"[a-z0-9][a-z0-9_-]{0,15}", fullmatch=True)
table_ids = st.from_regex(r"[a-z0-9][a-z0-9_-]{0,31}", fullmatch=True)
host_names = st.sampled_from(["127.0.0.1", "::1", "localhost", "broker.pit.example", "10.1.2.3"])


def amount(cents: int) -> str | int:
    whole, part = divmod(cents, 100)
    return whole if part == 0 and whole % 3 == 0 else f"{whole}.{part:02d}"


@st.composite
def limits(draw: st.DrawFn, *, floor: int = 1) -> dict[str, str | int]:
    low = draw(st.integers(floor, MAX_CENTS))
    high = draw(st.integers(low, MAX_CENTS))
    return {"min": amount(low), "max": amount(high)}


@st.composite
def tables(draw: st.DrawFn, table_id: str) -> dict[str, Any]:
    game = draw(st.sampled_from(sorted(WAGERS)))
    table: dict[str, Any] = {"id": table_id, "game": game}
    bonus = game == "blackjack" and draw(st.booleans())
    if game == "blackjack" and not bonus:
        table["twenty_point_bonus"] = False
    # 13:69F-2.2(a)2: the 20 point bonus is dealt from two decks or more.
    table["decks"] = draw(st.integers(2 if bonus else 1, 8))
    if draw(st.booleans()):
        table["seats"] = draw(st.integers(1, 7))
    if draw(st.booleans()):
        table["burn_cards"] = draw(st.integers(0, 10))
    for flag in ("hole_card_reader", "dealer_hits_soft_17", "mid_shoe_entry"):
        if draw(st.booleans()):
            table[flag] = draw(st.booleans())
    offered = [w for w in WAGERS[game] if w != "twenty_point_bonus" or bonus]
    # 13:69F-26.6(b): the optional bonus wager is at least $1.00.
    table["limits"] = {
        wager: draw(limits(floor=100 if wager == "optional_bonus" else 1)) for wager in offered
    }
    if game != "triple_attack" and draw(st.booleans()):
        table["paytable"] = draw(
            st.sampled_from(["A", "B"] if game == "blackjack" else ["regulation"])
        )
    if bonus:
        table["other_wagers"] = draw(st.lists(st.sampled_from(OTHER_WAGERS), unique=True))
    table["shoe"] = draw(shoes(table_id))
    return table


@st.composite
def shoes(draw: st.DrawFn, table_id: str) -> dict[str, Any]:
    shoe: dict[str, Any] = {"protocol": draw(st.sampled_from(["reference", "enq"]))}
    transport = draw(st.sampled_from(["serial", "tcp", "usb"]))
    shoe["transport"] = transport
    if transport == "serial":
        shoe["port"] = f"/dev/shoe2mqtt/{table_id}"
        shoe["baudrate"] = draw(st.sampled_from(STANDARD_BAUDRATES))
        shoe["parity"] = draw(st.sampled_from("NEOMS"))
        shoe["stopbits"] = draw(st.sampled_from([1, 1.5, 2]))
        shoe["bytesize"] = draw(st.integers(5, 8))
    elif transport == "tcp":
        shoe["host"] = draw(host_names)
        shoe["port"] = draw(st.integers(1, 65535))
    else:
        shoe["vendor_id"] = draw(st.integers(0, 0xFFFF))
        shoe["product_id"] = draw(st.integers(0, 0xFFFF))
        if draw(st.booleans()):
            shoe["serial_number"] = draw(st.from_regex(r"[A-Z0-9]{1,20}", fullmatch=True))
    if draw(st.booleans()):
        shoe["idle_timeout"] = draw(st.floats(1, 3600) | st.integers(1, 3600))
    return shoe


@st.composite
def documents(draw: st.DrawFn, state_directory: str) -> dict[str, Any]:
    """A whole valid file: a broker, a journal, logging, and one to four tables."""
    mqtt: dict[str, Any] = {"host": draw(host_names)}
    if draw(st.booleans()):
        mqtt["port"] = draw(st.integers(1, 65535))
    if draw(st.booleans()):
        mqtt["keepalive"] = draw(st.integers(5, 65535))
    mqtt["node"] = draw(segments)
    if draw(st.booleans()):
        mqtt["contract"] = draw(st.sampled_from([3, 4]))
    if draw(st.booleans()):
        mqtt["base_topic"] = "/".join(draw(st.lists(segments, min_size=1, max_size=3)))
    if draw(st.booleans()):
        initial = draw(st.floats(0.01, 3600))
        mqtt["reconnect"] = {
            "initial": initial,
            "maximum": draw(st.floats(initial, 3600)),
            "multiplier": draw(st.floats(1, 10)),
            "jitter": draw(st.floats(0, 0.99)),
        }
    journal: dict[str, Any] = {"state_directory": state_directory}
    if draw(st.booleans()):
        journal["outbox_limit"] = draw(st.integers(100, 1_000_000))
    logging = {
        "format": draw(st.sampled_from(["auto", "json", "console"])),
        "level": draw(st.sampled_from(["debug", "info", "warning", "error"])),
    }
    ids = draw(st.lists(table_ids, min_size=1, max_size=4, unique=True))
    drawn = [draw(tables(table_id)) for table_id in ids]
    for index, table in enumerate(drawn):  # one shoe, one table: no two share a device
        shoe = table["shoe"]
        if shoe["transport"] == "tcp":
            shoe["port"] = max(shoe["port"] // 8 * 8, 8) + index
        elif shoe["transport"] == "usb":
            shoe["product_id"] = shoe["product_id"] // 8 * 8 + index
    return {"mqtt": mqtt, "journal": journal, "logging": logging, "table": drawn}


# The TOML type(s) each setting takes (docs/configuration.md), by its path with every table
# index written as 0 and every wager as "<wager>": what a wrong type is judged against.
TYPES: Final[dict[FieldPath, tuple[type, ...]]] = {
    ("mqtt", "host"): (str,),
    ("mqtt", "port"): (int,),
    ("mqtt", "keepalive"): (int,),
    ("mqtt", "contract"): (int,),
    ("mqtt", "node"): (str,),
    ("mqtt", "base_topic"): (str,),
    ("mqtt", "reconnect", "initial"): (int, float),
    ("mqtt", "reconnect", "maximum"): (int, float),
    ("mqtt", "reconnect", "multiplier"): (int, float),
    ("mqtt", "reconnect", "jitter"): (int, float),
    ("journal", "state_directory"): (str,),
    ("journal", "outbox_limit"): (int,),
    ("logging", "format"): (str,),
    ("logging", "level"): (str,),
    ("table", 0, "id"): (str,),
    ("table", 0, "game"): (str,),
    ("table", 0, "twenty_point_bonus"): (bool,),
    ("table", 0, "decks"): (int,),
    ("table", 0, "seats"): (int,),
    ("table", 0, "burn_cards"): (int,),
    ("table", 0, "hole_card_reader"): (bool,),
    ("table", 0, "dealer_hits_soft_17"): (bool,),
    ("table", 0, "mid_shoe_entry"): (bool,),
    ("table", 0, "paytable"): (str, dict),
    ("table", 0, "other_wagers"): (list,),
    ("table", 0, "limits", "<wager>", "min"): (str, int),
    ("table", 0, "limits", "<wager>", "max"): (str, int),
    ("table", 0, "shoe", "protocol"): (str,),
    ("table", 0, "shoe", "transport"): (str,),
    ("table", 0, "shoe", "port"): (str, int),  # a device path, or a TCP port: by transport
    ("table", 0, "shoe", "baudrate"): (int,),
    ("table", 0, "shoe", "parity"): (str,),
    ("table", 0, "shoe", "stopbits"): (int, float),
    ("table", 0, "shoe", "bytesize"): (int,),
    ("table", 0, "shoe", "host"): (str,),
    ("table", 0, "shoe", "vendor_id"): (int,),
    ("table", 0, "shoe", "product_id"): (int,),
    ("table", 0, "shoe", "serial_number"): (str,),
    ("table", 0, "shoe", "idle_timeout"): (int, float),
}

# Whole numbers with their documented range, by the same paths.
RANGES: Final[dict[FieldPath, tuple[int, int]]] = {
    ("mqtt", "port"): (1, 65535),
    ("mqtt", "keepalive"): (5, 65535),
    ("mqtt", "contract"): (3, 4),
    ("journal", "outbox_limit"): (100, 1_000_000),
    ("table", 0, "decks"): (1, 8),
    ("table", 0, "seats"): (1, 7),
    ("table", 0, "burn_cards"): (0, 10),
    ("table", 0, "shoe", "bytesize"): (5, 8),
    ("table", 0, "shoe", "vendor_id"): (0, 0xFFFF),
    ("table", 0, "shoe", "product_id"): (0, 0xFFFF),
    ("table", 0, "shoe", "idle_timeout"): (1, 3600),
}


def pattern_of(path: FieldPath) -> FieldPath:
    """`path` as TYPES and RANGES key it: table indexes 0, wager names `<wager>`."""
    parts = [0 if isinstance(part, int) else part for part in path]
    if len(parts) > 4 and parts[:1] == ["table"] and parts[2] == "limits":
        parts[3] = "<wager>"
    return tuple(parts)


def leaves(document: dict[str, Any], path: FieldPath = ()) -> list[FieldPath]:
    """The path of every value that is not a table or an array of tables."""
    found: list[FieldPath] = []
    for key, value in document.items():
        here = (*path, key)
        if _is_table(value):
            found += leaves(value, here)
        elif _is_array_of_tables(value):
            for index, entry in enumerate(value):
                found += leaves(entry, (*here, index))
        else:
            found.append(here)
    return found


def get(document: dict[str, Any], path: FieldPath) -> Any:
    value: Any = document
    for part in path:
        value = value[part]
    return value


def put(document: dict[str, Any], path: FieldPath, value: object) -> None:
    get(document, path[:-1])[path[-1]] = value


def field_name(path: FieldPath) -> str:
    """("table", 0, "seats") → "table[1].seats", as docs/configuration.md writes fields."""
    out = ""
    for part in path:
        out += f"[{part + 1}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out
