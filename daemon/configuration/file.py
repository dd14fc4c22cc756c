"""The daemon's TOML configuration file: load it, check it, and point at each mistake.

Every mistake is reported with the file, the line and the dotted field it concerns
(`shoe2mqtt.toml:14: table[1].limits.blackjack.min: must be more than zero`), because the
person reading it is standing at a table PC with an editor, not a debugger.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

FieldPath = tuple[str | int, ...]

_HEADER = re.compile(r"\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?")
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


# A file of 256 tables, each with its shoe and a comment or two, is about 200 KiB; anything
# past this limit is not a configuration written by a person.
MAX_FILE_BYTES: Final = 4 * 1024 * 1024
# How deep arrays and tables may nest. The deepest a shoe2mqtt file needs is four
# (`[[table]]` > `limits` > `blackjack` > `min`); beyond this a file is malformed, and the
# TOML parser would exhaust Python's stack (RecursionError) somewhere past 400 levels.
MAX_NESTING: Final = 8


def read_toml(path: Path) -> tuple[dict[str, Any], str]:
    """The parsed document and its text; a syntax error is a ConfigFileError with its line.

    Also refused, each with its line: a file larger than `MAX_FILE_BYTES`, arrays or inline
    tables nested deeper than `MAX_NESTING`, and an integer of more digits than Python
    converts (tomllib raises a bare ValueError for it).
    """
    try:
        with path.open("rb") as file:
            raw = file.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ConfigFileError(
            str(path), None, "", f"cannot read the file: {exc.strerror}"
        ) from None
    if len(raw) > MAX_FILE_BYTES:
        raise ConfigFileError(
            str(path),
            None,
            "",
            f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB: not a configuration",
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        where = raw[: exc.start].count(b"\n") + 1
        raise ConfigFileError(str(path), where, "", "not valid TOML: not UTF-8 text") from None
    too_deep = _too_deep(text)
    if too_deep is not None:
        raise ConfigFileError(
            str(path),
            too_deep,
            format_field(FieldLines(text).set_on(too_deep)),
            f"nested deeper than {MAX_NESTING} arrays or tables",
        )
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # Python 3.11's error carries its position only in its text: "... (at line 6, column 8)".
        position = re.search(r"\(at line (\d+), column \d+\)", str(exc))
        line = int(position.group(1)) if position else None
        message = str(exc).split(" (at line", 1)[0]
        raise ConfigFileError(str(path), line, "", f"not valid TOML: {message}") from None
    except ValueError:  # an integer past int()'s 4,300 digits; tomllib says not where
        raise ConfigFileError(
            str(path), _long_number_line(text), "", "not valid TOML: a number far too long"
        ) from None
    deep = _nested_too_deep(document)
    if deep is not None:  # dotted keys and headers nest without a bracket: `a.b.c.d = 1`
        raise ConfigFileError(
            str(path),
            locate(text, deep),
            format_field(deep),
            f"nested deeper than {MAX_NESTING} arrays or tables",
        )
    return document, text


def _too_deep(text: str) -> int | None:
    """The line where arrays or inline tables nest deeper than MAX_NESTING, or None.

    Counts brackets and braces outside strings and comments: table headers open and close
    on their line, values nest. Strings are skipped by their TOML quoting (basic, literal,
    and the multi-line forms of each) so that a bracket in a string is not counted.
    """
    depth = 0
    line = 1
    at = 0
    while at < len(text):
        character = text[at]
        if character in "\"'":
            quote = text[at : at + 3] if text.startswith(character * 3, at) else character
            end = _string_end(text, at + len(quote), quote)
            line += text.count("\n", at, end)
            at = end
            continue
        if character == "#":
            newline = text.find("\n", at)
            at = len(text) if newline < 0 else newline
            continue
        if character == "\n":
            line += 1
        elif character in "[{":
            depth += 1
            if depth > MAX_NESTING:
                return line
        elif character in "]}":
            depth = max(0, depth - 1)
        at += 1
    return None


def _nested_too_deep(document: dict[str, Any]) -> FieldPath | None:
    """The path of an array or table nested deeper than MAX_NESTING in the parsed document."""
    stack: list[tuple[FieldPath, object, int]] = [((), document, 0)]
    while stack:
        path, value, depth = stack.pop()
        if depth > MAX_NESTING:
            return path
        children: Iterable[tuple[str | int, object]] = ()
        if isinstance(value, dict):
            children = value.items()
        elif isinstance(value, list):
            children = enumerate(value)
        stack.extend(
            ((*path, key), child, depth + 1)
            for key, child in children
            if isinstance(child, dict | list)
        )
    return None


def _string_end(text: str, start: int, quote: str) -> int:
    """Where the string opened by `quote` ends (past its closing quote), or the end of text."""
    at = start
    while True:
        found = text.find(quote, at)
        if found < 0:
            return len(text)
        if quote[0] == "'" or not _escaped(text, found):
            return found + len(quote)
        at = found + 1


def _escaped(text: str, at: int) -> bool:
    """Whether the character at `at` follows an odd number of backslashes."""
    count = 0
    while at - count - 1 >= 0 and text[at - count - 1] == "\\":
        count += 1
    return count % 2 == 1


def _long_number_line(text: str) -> int | None:
    match = re.search(r"\d{4000}", text)
    return None if match is None else text.count("\n", 0, match.start()) + 1


def locate(text: str, path: FieldPath) -> int | None:
    """The line that sets `path` (or the closest enclosing table or key), 1-based."""
    return FieldLines(text).line_of(path)


class FieldLines:
    """Where each field of a file is set, found in one pass over its text.

    TOML parsers do not keep positions, so this walks the text: table headers (`[a.b]`,
    `[[table]]`, counting array entries) and key lines (`x = ...`, dotted keys too). A
    field's line is the first line on the way to it that goes furthest along its path.
    """

    def __init__(self, text: str) -> None:
        self._first: dict[tuple[str | int, ...], int] = {}
        self._set_on: dict[int, tuple[str | int, ...]] = {}
        header: list[str | int] = []
        array_counts: dict[tuple[str | int, ...], int] = {}
        # TOML ends a line at LF alone (CRLF is LF with a CR before it); str.splitlines would
        # also break at characters a string may hold as they are (U+0085, U+2028, U+2029)
        # and count every later line one too many.
        for number, raw in enumerate(text.split("\n"), start=1):
            header_match = _HEADER.fullmatch(raw)
            if header_match:
                header = _header_path(header_match, array_counts)
                current: list[str | int] = header
            else:
                key_match = _KEY.match(raw)
                if not key_match:
                    continue
                current = [
                    *header,
                    *(p.strip().strip('"') for p in key_match.group(1).split(".")),
                ]
            self._set_on[number] = tuple(current)
            # Each enclosing path too: `[[table]]` is where `table` begins, `[mqtt.tls]`
            # where `mqtt` does if no `[mqtt]` came first.
            for length in range(1, len(current) + 1):
                self._first.setdefault(tuple(current[:length]), number)

    def set_on(self, line: int) -> FieldPath:
        """The field a line sets or opens; () for a line that continues a value."""
        return self._set_on.get(line, ())

    def line_of(self, path: FieldPath) -> int | None:
        for length in range(len(path), 0, -1):
            found = self._first.get(tuple(path[:length]))
            if found is not None:
                return found
        return None


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


# The logging choices a `[logging]` section and the display's own `[display]` both offer.
LOG_FORMATS = ("auto", "json", "console")
LOG_LEVELS = ("debug", "info", "warning", "error")
LOGGING_KEYS = frozenset({"format", "level", "raw_frames"})


class ConfigErrors(Exception):
    """Every mistake found in a configuration file, in file order; and apart from them, every
    problem of this host (`host_problems`): the file is right, the machine is not ready."""

    def __init__(
        self, errors: Iterable[ConfigFileError], host_problems: Iterable[ConfigFileError] = ()
    ) -> None:
        self.errors = _in_file_order(errors)
        self.host_problems = _in_file_order(host_problems)
        super().__init__("\n".join(map(str, [*self.errors, *self.host_problems])))


def _in_file_order(errors: Iterable[ConfigFileError]) -> list[ConfigFileError]:
    return sorted(errors, key=lambda e: (e.line or 0, e.field))
