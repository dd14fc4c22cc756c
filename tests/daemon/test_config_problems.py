"""A file with N independent problems is refused with exactly those N problems, each once.

Hypothesis draws a valid file (tests/daemon/config_documents.py: the documented ranges, not
the checker) and breaks N settings of it that no other setting's judgement depends on, each
in its own way (a wrong type, a number out of its range, a key nobody reads). The oracle is
what the test broke: the field and the line it wrote each broken setting on. The checker
must name each of them, once, and nothing else: nothing stops at the first problem, and no
problem hides or repeats another.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from daemon.configuration.file import ConfigErrors
from daemon.configuration.problems import ABSENT, Kind, Problems
from daemon.configuration.service_config import load_config
from daemon.mqtt.errors import MqttSettingsError
from drivers.transports import SettingsError, TcpSettings
from rules.errors import ConfigError
from tests.daemon.config_documents import (
    RANGES,
    TYPES,
    FieldPath,
    RawToml,
    documents,
    field_name,
    get,
    leaves,
    pattern_of,
    put,
    toml_text,
)

if TYPE_CHECKING:
    from pathlib import Path

# Settings another setting's judgement depends on, so breaking one may rightly say more than
# one thing: the game and its wagers decide which limits a table needs, the transport which
# keys its shoe takes, the node the default client id, each limit and each backoff bound is
# judged against its partner.
_COUPLED: Final = {"game", "paytable", "other_wagers", "twenty_point_bonus", "limits",
                   "transport", "node", "reconnect"}  # fmt: skip


def _independent(path: FieldPath) -> bool:
    return not _COUPLED.intersection(part for part in path if isinstance(part, str))


def _other_types(accepted: tuple[type, ...]) -> st.SearchStrategy[object]:
    """A value of a TOML type the setting does not take."""
    return st.one_of(
        st.text(max_size=8) if str not in accepted else st.nothing(),
        st.integers(-(2**31), 2**31) if int not in accepted else st.nothing(),
        st.booleans() if bool not in accepted else st.nothing(),
        st.lists(st.integers(0, 9), max_size=3) if list not in accepted else st.nothing(),
        st.just(RawToml("1979-05-27T07:32:00Z")),
    )


@st.composite
def broken(draw: st.DrawFn, state_directory: str) -> tuple[dict[str, Any], list[FieldPath]]:
    """A valid document with N of its settings broken, and the paths of what was broken."""
    document = draw(documents(state_directory))
    candidates = [path for path in leaves(document) if _independent(path)]
    chosen = draw(st.lists(st.sampled_from(candidates), min_size=1, max_size=6, unique=True))
    problems: list[FieldPath] = []
    for setting in chosen:
        path, pattern = setting, pattern_of(setting)
        ways = ["unknown"]
        if pattern in TYPES:
            ways.append("type")
        if pattern in RANGES and pattern[-1] != "idle_timeout":
            ways.append("range")
        way = draw(st.sampled_from(ways))
        if way == "unknown":  # a misspelt key beside the setting: the setting stays right
            path = (*setting[:-1], f"{setting[-1]}_typo")
            put(document, path, draw(st.integers(0, 9) | st.booleans()))
        elif way == "type":
            accepted = TYPES[pattern]
            if path[-1] == "port" and path[0] == "table":  # a device path or a TCP port
                accepted = (type(get(document, path)),)
            put(document, path, draw(_other_types(accepted)))
        else:
            low, high = RANGES[pattern]
            put(document, path, draw(st.integers(high + 1, 2**40) | st.integers(-(2**40), low - 1)))
        problems.append(path)
    return document, problems


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_a_file_with_n_independent_problems_is_refused_with_exactly_those_n(
    tmp_path: Path, data: st.DataObject
) -> None:
    document, problems = data.draw(broken(str(tmp_path / "state")))
    text, lines = toml_text(document)
    path = tmp_path / "shoe2mqtt.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigErrors) as refused:
        load_config(path)
    said = sorted((error.line, error.field) for error in refused.value.errors)
    assert said == sorted((lines[p], field_name(p)) for p in problems), str(refused.value)
    assert refused.value.host_problems == []


def test_the_typed_errors_of_rules_drivers_and_mqtt_are_recorded_at_their_key_path() -> None:
    """rules/ and drivers/ cannot import the collector: their errors carry every problem,
    and the collector files each under the table the object was built from."""
    problems = Problems()
    with pytest.raises(SettingsError) as transport:
        TcpSettings(host="shoe 1", port=70000)
    problems.record(("table", 2, "shoe"), transport.value)
    problems.record(("table", 2), ConfigError("limits.blackjack.min", "must be more than zero"))
    problems.record((), MqttSettingsError("mqtt.tls.ca_file", "no such file", host=True))
    assert [(p.where, p.value, p.kind) for p in problems.found] == [
        (("table", 2, "shoe", "host"), "shoe 1", Kind.MISTAKE),
        (("table", 2, "shoe", "port"), 70000, Kind.MISTAKE),
        (("table", 2, "limits", "blackjack", "min"), ABSENT, Kind.MISTAKE),
        (("mqtt", "tls", "ca_file"), ABSENT, Kind.HOST),
    ]
    located = problems.said_in("shoe2mqtt.toml", "[mqtt]\nhost = 'x'\n").errors()
    assert [error.field for error in located.errors] == [
        "table[3].limits.blackjack.min",
        "table[3].shoe.host",
        "table[3].shoe.port",
    ]
    assert [str(problem) for problem in located.host_problems] == [
        "shoe2mqtt.toml:1: mqtt.tls.ca_file: no such file"
    ]


@pytest.mark.parametrize("character", ["\u0085", "\u2028", "\u2029"])
def test_a_line_break_of_unicode_in_a_string_does_not_move_the_lines_after_it(
    tmp_path: Path, character: str
) -> None:
    """TOML ends a line at LF only: a string may hold these as they are (the test above found
    the checker counting each as a line)."""
    path = tmp_path / "shoe2mqtt.toml"
    path.write_text(f'[mqtt]\nhost = "pit"\nnode = "a{character}b"\nport = 0\n', "utf-8")
    with pytest.raises(ConfigErrors) as refused:
        load_config(path)
    port = [error for error in refused.value.errors if error.field == "mqtt.port"]
    assert [error.line for error in port] == [4]
