"""The daemon's TOML configuration file: load it, check it, and point at each mistake.

Every mistake is reported with the file, the line and the dotted field it concerns
(`shoe2mqtt.toml:14: table[1].limits.blackjack.min: must be more than zero`), because the
person reading it is standing at a table PC with an editor, not a debugger.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

FieldPath = tuple[str | int, ...]

_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"^\s*([A-Za-z0-9_\-\".]+?)\s*=")


@dataclass(frozen=True, slots=True)
class ConfigFileError(Exception):
    """One mistake in a configuration file."""

    path: str
    line: int | None
    field: str
    message: str

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return (
            f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"
        )


def format_field(path: FieldPath) -> str:
    """("table", 0, "limits", "blackjack", "min") → `table[1].limits.blackjack.min`.

    Array positions are counted from 1, as a person counts `[[table]]` sections.
    """
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part + 1}]"
        else:
            out += f".{part}" if out else part
    return out


def read_toml(path: Path) -> tuple[dict[str, Any], str]:
    """The parsed document and its text; a syntax error is a ConfigFileError with its line."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigFileError(
            str(path), None, "", f"cannot read the file: {exc.strerror}"
        ) from None
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as exc:
        # Python 3.11's error carries its position only in its text: "... (at line 6, column 8)".
        position = re.search(r"\(at line (\d+), column \d+\)", str(exc))
        line = int(position.group(1)) if position else None
        message = str(exc).split(" (at line", 1)[0]
        raise ConfigFileError(str(path), line, "", f"not valid TOML: {message}") from None


def locate(text: str, path: FieldPath) -> int | None:
    """The line that sets `path` (or the closest enclosing table or key), 1-based.

    TOML parsers do not keep positions, so this walks the text: table headers (`[a.b]`,
    `[[table]]`, counting array entries) and key lines (`x = ...`, dotted keys too), and
    returns the line whose full path shares the longest prefix with `path`.
    """
    best_line: int | None = None
    best_len = 0
    header: list[str | int] = []
    array_counts: dict[tuple[str | int, ...], int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        header_match = _HEADER.match(raw)
        if header_match:
            header = _header_path(header_match, array_counts)
            current: list[str | int] = header
        else:
            key_match = _KEY.match(raw)
            if not key_match:
                continue
            current = [*header, *(p.strip().strip('"') for p in key_match.group(1).split("."))]
        shared = _shared_prefix(current, path)
        # A line can only be the place of `path` if it is on the way to it.
        if shared == len(current) and shared > best_len:
            best_line, best_len = number, shared
    return best_line


def _header_path(
    match: re.Match[str], array_counts: dict[tuple[str | int, ...], int]
) -> list[str | int]:
    """The absolute path a table header opens (TOML headers never nest relatively)."""
    is_array = match.group(1) == "[["
    names = [p.strip().strip('"') for p in match.group(2).split(".")]
    resolved: list[str | int] = []
    # Sub-tables of an array entry (`[table.shoe]` after `[[table]]`) belong to its last entry.
    for index, name in enumerate(names):
        resolved.append(name)
        key = tuple(resolved)
        last = index == len(names) - 1
        if last and is_array:
            array_counts[key] = array_counts.get(key, -1) + 1
            resolved.append(array_counts[key])
        elif key in array_counts:
            resolved.append(array_counts[key])
    return resolved


def _shared_prefix(a: list[str | int], b: FieldPath) -> int:
    count = 0
    for left, right in zip(a, b, strict=False):
        if left != right:
            break
        count += 1
    return count
