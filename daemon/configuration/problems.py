"""One way to judge a configuration file: every problem collected, then said at once.

Every reader of a section of the file (the daemon's own, the tables and their shoes, the
pit display's, the dealer console's) records what is wrong in one `Problems` collector and
goes on with the default in the wrong value's place, so one run of `shoe2mqtt check-config`
names every problem of the file, each with its line and field, in the same words wherever
it is found. Nothing stops at the first.

The settings objects that check themselves when built (rules/' `TableConfig`, drivers/'
transports and backoff, the `[mqtt]` settings) cannot import this collector: rules/ and
drivers/ import nothing of the daemon, and the `[mqtt]` settings are built in code as well as
from a file. Each raises its own typed error carrying every problem (field, message, and
the value where it has it); `Problems.record` files each under its key path
(docs/decisions.md, D25 and D26).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from daemon.configuration.file import ConfigErrors, ConfigFileError, FieldLines, format_field
from daemon.mqtt.errors import MqttSettingsError
from drivers.transports import is_absolute_path, is_host
from drivers.transports.errors import SettingsError
from rules.config import describe_value, out_of_range, unknown_setting
from rules.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Iterable

    from daemon.configuration.file import FieldPath


class Absent:
    """The value of a setting the file leaves out (None is no TOML value, but is no marker
    either: a reader may hold None for "not given")."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Final = Absent()


class Kind(StrEnum):
    """Whose problem it is: the file's, this host's, or a setting on its way out."""

    MISTAKE = "mistake"  # the file says something that can never work: fix the file
    HOST = "host"  # the file is right, this machine is not ready (a file missing, a variable unset)
    DEPRECATED = "deprecated"  # works today; check-config prints it and fails nothing


@dataclass(frozen=True, slots=True)
class Problem:
    """One problem at one key path: where, what was expected there, and the value found.

    `value` is data for a program (a test, a tool), never printed: the message names it as
    `describe_value` allows (a password typed in the wrong place is never echoed).
    """

    where: FieldPath
    expected: str
    value: object = field(default=ABSENT, repr=False, compare=False)
    kind: Kind = Kind.MISTAKE


def dotted(name: str) -> FieldPath:
    """`limits.blackjack.min` → ("limits", "blackjack", "min"): a typed error's field."""
    return tuple(name.split("."))


class Problems:
    """Every problem found in one configuration file, in the order found."""

    def __init__(self) -> None:
        self.found: list[Problem] = []

    def wrong(self, where: FieldPath, expected: str, value: object = ABSENT) -> None:
        self.found.append(Problem(where, expected, value))

    def host_problem(self, where: FieldPath, expected: str, value: object = ABSENT) -> None:
        self.found.append(Problem(where, expected, value, Kind.HOST))

    def deprecated(self, where: FieldPath, expected: str) -> None:
        self.found.append(Problem(where, expected, kind=Kind.DEPRECATED))

    def record(
        self, where: FieldPath, error: ConfigError | SettingsError | MqttSettingsError
    ) -> None:
        """Every problem a settings object raised when built, under `where` (the key path of
        the table it was built from; `[mqtt]`'s errors name their full path already)."""
        for problem in error.problems:
            match problem:
                case ConfigError():
                    self.wrong((*where, *dotted(problem.field)), problem.detail)
                case SettingsError():
                    path = (*where, *dotted(problem.field))
                    self.wrong(path, problem.message, problem.value)
                case MqttSettingsError():
                    kind = Kind.HOST if problem.host else Kind.MISTAKE
                    path = (*where, *dotted(problem.field))
                    self.found.append(Problem(path, problem.message, kind=kind))

    def unknown(self, where: FieldPath, values: dict[str, Any], known: frozenset[str]) -> None:
        """Each key of `values` that is no setting of the table at `where`."""
        for key in sorted(set(values) - known):
            self.wrong((*where, key), unknown_setting(key, known), values[key])

    def extend(self, problems: Iterable[Problem]) -> None:
        self.found.extend(problems)

    def blocking(self) -> bool:
        """Whether anything but a deprecation was found: the file cannot be used as it is."""
        return any(problem.kind is not Kind.DEPRECATED for problem in self.found)

    def section(
        self, where: FieldPath | str, value: object, known: frozenset[str]
    ) -> Section | None:
        """A table of settings read a key at a time, or None (and a problem) if it is not a
        table; absent, it is an empty one: every setting takes its default."""
        path = (where,) if isinstance(where, str) else where
        if value is None:
            value = {}
        if not isinstance(value, dict):
            self.wrong(
                path,
                f"must be a table ([{format_field(path)}]), not {describe_value(value)}",
                value,
            )
            return None
        return Section(self, path, value, known)

    def said_in(self, path: Path | str, text: str) -> Located:
        """The problems as a person reads them: each with the file, its line and its field."""
        return Located(self.found, str(path), FieldLines(text))


class Located:
    """The collected problems placed in their file."""

    def __init__(self, found: list[Problem], path: str, lines: FieldLines) -> None:
        self._found = found
        self._path = path
        self._lines = lines

    def of_kind(self, kind: Kind) -> list[ConfigFileError]:
        return [self.error(problem) for problem in self._found if problem.kind is kind]

    def error(self, problem: Problem) -> ConfigFileError:
        where = problem.where
        return ConfigFileError(
            self._path, self._lines.line_of(where), format_field(where), problem.expected
        )

    def errors(self) -> ConfigErrors:
        """One error listing them all: the file's mistakes, then apart this host's problems."""
        return ConfigErrors(self.of_kind(Kind.MISTAKE), self.of_kind(Kind.HOST))


class Section:
    """One table of settings, read a key at a time.

    Each reader returns the value, or the default after recording what was expected, so one
    pass reports every problem in the section; an unknown key is a problem too.
    """

    def __init__(
        self, problems: Problems, where: FieldPath, values: dict[str, Any], known: frozenset[str]
    ) -> None:
        self.problems = problems
        self.where = where
        self.values = values
        problems.unknown(where, values, known)

    def refuse(self, key: str, expected: str) -> None:
        self.problems.wrong((*self.where, key), expected, self.values.get(key, ABSENT))

    def whole_number(self, key: str, default: int, allowed: range) -> int:
        value = self.values.get(key, default)
        problem = whole_number_problem(value, allowed)
        if problem is None:
            return int(value)
        self.refuse(key, problem)
        return default

    def number(self, key: str, default: float, low: float, high: float) -> float:
        """A number, whole or decimal (not a boolean, not NaN), from `low` to `high`."""
        value = self.values.get(key, default)
        if not within(value, low, high):
            self.refuse(
                key, f"must be a number from {low:g} to {high:g}, not {describe_value(value)}"
            )
            return default
        return float(value)

    def choice(self, key: str, default: str, choices: tuple[str, ...]) -> str:
        value = self.values.get(key, default)
        if not isinstance(value, str) or value not in choices:
            self.refuse(key, f"must be one of {', '.join(choices)}; not {describe_value(value)}")
            return default
        return value

    def flag(self, key: str, *, default: bool) -> bool:
        value = self.values.get(key, default)
        if not isinstance(value, bool):
            self.refuse(key, f"must be true or false, not {describe_value(value)}")
            return default
        return value

    def address(self, key: str, default: str) -> str:
        """A host name or IP address to listen on, as `[mqtt] host` is checked."""
        value = self.values.get(key, default)
        if not is_host(value):
            self.refuse(
                key, f"must be a host name or IP address to listen on, not {describe_value(value)}"
            )
            return default
        return str(value)

    def directory(self, key: str, default: Path) -> Path:
        """An absolute path: relative, it would name a different place under systemd (whose
        working directory is `/`) than where check-config was run."""
        value = self.values.get(key, str(default))
        if not is_absolute_path(value):
            self.refuse(key, f"must be an absolute directory path, not {describe_value(value)}")
            return default
        return Path(value)


def whole_number_problem(value: object, allowed: range) -> str | None:
    """What is wrong with `value` as a whole number in `allowed`, or None."""
    low, high = allowed.start, allowed.stop - 1
    if isinstance(value, bool) or not isinstance(value, int):
        return f"must be a whole number from {low} to {high}, not {describe_value(value)}"
    if value not in allowed:
        return out_of_range(low, high, value)
    return None


def within(value: object, low: float, high: float) -> bool:
    """A number (not a boolean, not NaN) from `low` to `high`."""
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and low <= value <= high  # NaN compares false with everything
    )
