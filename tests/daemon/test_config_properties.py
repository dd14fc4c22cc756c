"""Hypothesis writes configuration files; `check-config` and `run` must agree on every one.

Each file is a valid document drawn from the documented ranges (tests/daemon/
config_documents.py), or one mutation of one: a wrong type, a number out of its range, an
unknown key, nesting past the limit, an id with a trailing newline or a letter that is not
lowercase ASCII, odd unicode in free text, a file of this host that is missing. The oracle
is the generator's own knowledge of what it wrote, never the checker: a valid document is
accepted; a mutation known to be a mistake is refused on the line the writer put that key,
naming its field; a missing file is this host's problem, reported apart. For every file:

- check-config exits 0 or 78, never with a traceback, and every line it writes is
  `file:line: field: message` (or the heading of this host's problems);
- `run` refuses (78) exactly what check-config refuses, with the same lines, and starts on
  exactly what it accepts. In process, `run` goes through its own code up to the daemon's
  start-up (the tables, codecs, transports and MQTT link built from the configuration) and
  stops before connecting; a sample is run for real below, as a subprocess.
"""

from __future__ import annotations

import asyncio
import io
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from unittest import mock

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from daemon.cli import ExitCode, build_parser
from daemon.cli.command import HOST_PROBLEMS_HEADING
from daemon.configuration.service_config import load_config
from daemon.testing import DaemonProcess
from tests.daemon.config_documents import (
    RANGES,
    TYPES,
    FieldPath,
    RawToml,
    documented_settings,
    documents,
    field_name,
    get,
    leaves,
    pattern_of,
    put,
    toml_text,
)

if TYPE_CHECKING:
    from daemon.configuration.service_config import ServiceConfig
    from daemon.testing import Mosquitto

SHOE2MQTT: Final = Path(sys.executable).parent / "shoe2mqtt"


@dataclass(frozen=True, slots=True)
class Refused:
    """The file has a mistake at `path` (None: the writer cannot say which key)."""

    path: FieldPath | None


@dataclass(frozen=True, slots=True)
class HostProblem:
    path: FieldPath


Expectation = Refused | HostProblem | None  # None: valid, or unknown (`judged=False`)


@dataclass(frozen=True, slots=True)
class Case:
    document: dict[str, Any]
    expected: Expectation
    judged: bool = True  # False: free text, where only agreement and form are held


# ------------------------------------------------------------------ mutations


def _values_of_other_types(accepted: tuple[type, ...]) -> st.SearchStrategy[object]:
    candidates: list[st.SearchStrategy[object]] = [
        st.text(max_size=8) if str not in accepted else st.nothing(),
        st.integers(-(2**63), 2**63 - 1) if int not in accepted else st.nothing(),
        st.floats(allow_nan=True) if float not in accepted else st.nothing(),
        st.booleans() if bool not in accepted else st.nothing(),
        st.lists(st.integers(0, 9), max_size=3) if list not in accepted else st.nothing(),
        st.just(RawToml("{ a = 1 }")) if dict not in accepted else st.nothing(),
        st.just(RawToml("1979-05-27T07:32:00Z")),
    ]
    return st.one_of(*candidates)


@st.composite
def wrong_type(draw: st.DrawFn, document: dict[str, Any]) -> Case:
    paths = [p for p in leaves(document) if pattern_of(p) in TYPES]
    path = draw(st.sampled_from(paths))
    accepted = TYPES[pattern_of(path)]
    if path[-1] == "port" and path[0] == "table":  # a device path or a TCP port: not both
        accepted = (type(get(document, path)),)
    put(document, path, draw(_values_of_other_types(accepted)))
    return Case(document, Refused(path))


@st.composite
def out_of_range(draw: st.DrawFn, document: dict[str, Any]) -> Case:
    paths = [p for p in leaves(document) if pattern_of(p) in RANGES]
    amounts = [p for p in leaves(document) if pattern_of(p)[-3:-1] == ("limits", "<wager>")]
    path = draw(st.sampled_from(paths + amounts + [("table", 0, "shoe", "idle_timeout")]))
    if path in amounts:
        # $10,000,000.00 is the largest amount a table may name; every minimum is above 0.
        value: object = draw(
            st.sampled_from(["10000000.01", "1" + "0" * 50, 10**50, "25.001", "-5"])
        )
    elif pattern_of(path) == ("table", 0, "shoe", "idle_timeout"):
        value = draw(st.sampled_from([0, 0.5, 3600.5, float("inf"), float("nan"), -1]))
    else:
        low, high = RANGES[pattern_of(path)]
        value = draw(
            st.integers(high + 1, 2**63 - 1)
            | st.integers(-(2**63), low - 1)
            | st.just(2**63 - 1)
            | st.just(RawToml("9" * 30))
        )
    put(document, path, value)
    return Case(document, Refused(path))


def _documented_keys(where: FieldPath) -> set[str]:
    """The keys docs/configuration.md lists directly under `where` (the spec, not the code)."""
    prefix = ".".join(part for part in map(str, pattern_of(where)) if part != "0")
    names = [
        name.removeprefix(f"{prefix}.")
        for name in documented_settings()
        if not prefix or name.startswith(f"{prefix}.")
    ]
    keys = {name.split(".")[0] for name in names}
    # The password, so that its mistake can say where a password belongs.
    return keys | ({"password"} if prefix == "mqtt" else set())


@st.composite
def unknown_key(draw: st.DrawFn, document: dict[str, Any]) -> Case:
    index = draw(st.integers(0, len(document["table"]) - 1))
    where = draw(
        st.sampled_from(
            [(), ("mqtt",), ("journal",), ("logging",), ("table", index), ("table", index, "shoe")]
        )
    )
    key = draw(st.from_regex(r"[a-z_]{1,12}", fullmatch=True))
    if key in _documented_keys(where):
        key += "_x"
    section = get(document, where)
    section[key] = draw(st.integers(0, 9) | st.text(max_size=4) | st.booleans())
    return Case(document, Refused((*where, key)))


@st.composite
def deep_nesting(draw: st.DrawFn, document: dict[str, Any]) -> Case:
    """Arrays or inline tables nested past the limit of 8, up to 5,000 deep."""
    path = draw(st.sampled_from(leaves(document)))
    depth = draw(st.integers(9, 30) | st.sampled_from([500, 1000, 5000]))
    opener, closer = draw(st.sampled_from([("[", "]"), ("{ a = ", " }")]))
    put(document, path, RawToml(opener * depth + "1" + closer * depth))
    return Case(document, Refused(path))


# Characters that make a table id or a topic segment wrong: the trailing newline `$` let
# through, other white space, non-ASCII letters and digits, capitals, and MQTT wildcards.
_NOT_IN_A_SEGMENT: Final = [
    "\n",
    "\r\n",
    " ",
    "\t",
    "\x00",
    "é",
    "\u0661",
    "\u200b",
    "+",
    "#",
    "/",
    "A",
    "\u212a",
]


@st.composite
def odd_id(draw: st.DrawFn, document: dict[str, Any]) -> Case:
    index = draw(st.integers(0, len(document["table"]) - 1))
    path = draw(st.sampled_from([("table", index, "id"), ("mqtt", "node")]))
    odd = draw(st.sampled_from(_NOT_IN_A_SEGMENT))
    value = get(document, path)
    put(document, path, draw(st.sampled_from([value + odd, odd + value])))
    return Case(document, Refused(path))


@st.composite
def trailing_newline(draw: st.DrawFn, document: dict[str, Any]) -> Case:
    """The newline a regular expression's `$` lets through: `id = "bj-1\\n"` and the like."""
    index = draw(st.integers(0, len(document["table"]) - 1))
    paths: list[FieldPath] = [("table", index, "id")] * 4 + [("mqtt", "node")] * 2
    paths += [
        ("mqtt", "host"),
        ("mqtt", "base_topic"),
        ("table", index, "game"),
        ("table", index, "shoe", "protocol"),
        ("table", index, "shoe", "transport"),
        ("logging", "level"),
    ]
    path = draw(st.sampled_from(paths))
    value = get(document, path) if path != ("mqtt", "base_topic") else "shoe2mqtt"
    put(document, path, value + draw(st.sampled_from(["\n", "\n", "\r\n", "\n\n"])))
    return Case(document, Refused(path))


@st.composite
def free_text(draw: st.DrawFn, document: dict[str, Any]) -> Case:
    """Odd unicode where text is free: whether it is accepted is not judged, only that
    check-config and run agree and answer in form."""
    path = draw(
        st.sampled_from([("mqtt", "client_id"), ("mqtt", "username"), ("mqtt", "base_topic")])
    )
    text = draw(st.text(st.characters(exclude_categories=["Cs"]), min_size=0, max_size=12))
    put(document, path, text)
    return Case(document, None, judged=False)


@st.composite
def duplicate_id(draw: st.DrawFn, document: dict[str, Any]) -> Case:
    tables = document["table"]
    if len(tables) < 2:
        tables.append({**tables[0], "shoe": dict(tables[0]["shoe"])})
    second = draw(st.integers(1, len(tables) - 1))
    tables[second]["id"] = tables[0]["id"]
    return Case(document, Refused(("table", second, "id")))


@st.composite
def missing_host_file(draw: st.DrawFn, document: dict[str, Any]) -> Case:
    """A CA or password file this host lacks: not a mistake in the file."""
    mqtt = document["mqtt"]
    key = draw(st.sampled_from(["password_file", "tls"]))
    absent = f"{document['journal']['state_directory']}/absent/{draw(st.sampled_from('abc'))}"
    if key == "tls":
        mqtt["tls"] = {"ca_file": absent}
        return Case(document, HostProblem(("mqtt", "tls", "ca_file")))
    mqtt["username"] = "pit-a"
    mqtt["password_file"] = absent
    return Case(document, HostProblem(("mqtt", "password_file")))


MUTATIONS: Final = (
    wrong_type,
    out_of_range,
    unknown_key,
    deep_nesting,
    odd_id,
    trailing_newline,
    free_text,
    duplicate_id,
    missing_host_file,
)


@st.composite
def cases(draw: st.DrawFn, state_directory: str) -> Case:
    document = draw(documents(state_directory))
    # The newline `$` lets through twice as often: it is the mistake most easily reintroduced.
    mutation = draw(st.sampled_from([None, None, trailing_newline, *MUTATIONS]))
    event("valid" if mutation is None else mutation.__name__)
    return Case(document, None) if mutation is None else draw(mutation(document))


# ------------------------------------------------------------------ the property

# `file:line: field: why`, or `file:line: why` for a mistake of the whole file; the line
# is left out only where the file holds nothing of the field (a required section).
_LINE: Final = re.compile(r"[^:]+:(?:\d+:)? \S.*")


def _command(words: list[str]) -> tuple[int, str, str]:
    args = build_parser().parse_args(words)
    out, err = io.StringIO(), io.StringIO()
    code = args.run(args, out, err)
    return code, out.getvalue(), err.getvalue()


def _start_without_connecting(config: ServiceConfig) -> int:
    """`run_service` up to the network: the daemon built from the configuration, as `run`
    builds it before its first connection (the journal opens, the broker is dialled next)."""
    from daemon.service import Daemon

    Daemon(config)
    return 0


@settings(
    max_examples=200,
    deadline=None,
    # tmp_path is only a place to write: each example overwrites its own file.
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_check_config_and_run_agree_on_every_file(tmp_path: Path, data: st.DataObject) -> None:
    case = data.draw(cases(str(tmp_path / "state")))
    text, lines = toml_text(case.document)
    path = tmp_path / "shoe2mqtt.toml"
    path.write_text(text, encoding="utf-8")

    code, out, err = _command(["check-config", str(path)])
    assert code in (ExitCode.OK, ExitCode.CONFIG)
    assert "Traceback" not in out + err
    mistakes, _, host_problems = err.partition(HOST_PROBLEMS_HEADING)
    written = [*mistakes.splitlines(), *host_problems.splitlines()]
    for line in written:
        assert _LINE.fullmatch(line), line
        assert line.startswith(f"{path}:"), line
    assert (code == ExitCode.OK) == (written == []), err

    match case.expected:
        case None if case.judged:
            assert code == ExitCode.OK, f"{text}\n{err}"
        case Refused(path=where):
            assert code == ExitCode.CONFIG, text
            if where is not None:
                at = f"{path}:{lines[where]}: {field_name(where)}: "
                assert any(line.startswith(at) for line in mistakes.splitlines()), (at, err)
        case HostProblem(path=where):
            assert mistakes == "", err
            assert f"{path}:{lines[where]}: {field_name(where)}: " in host_problems, err
            # A command that never connects (journal, analyze) is not stopped by it.
            load_config(path, read_host_files=False)

    with mock.patch("daemon.service.run_service", _start_without_connecting):
        run_code, run_out, run_err = _command(["run", "--config", str(path)])
    if code == ExitCode.OK:
        assert (run_code, run_err) == (ExitCode.OK, ""), run_err
    else:
        assert run_code == ExitCode.CONFIG
        assert run_err == err  # the very lines check-config wrote
    assert run_out == ""


# ------------------------------------------------------------------ a sample, for real

_SAMPLE_MISTAKES: Final = {
    "id with a newline": ('id = "bj-1"', 'id = "bj-1\\n"'),
    "nested 5,000 deep": ("seats = 7", "seats = " + "[" * 5000 + "]" * 5000),
    "an array where tables belong": ("[mqtt]", "table = [1, 2]\n[mqtt]"),
}
_SAMPLE: Final = """\
[mqtt]
host = "127.0.0.1"
port = {port}
node = "sample"

[journal]
state_directory = "{state}"

[logging]
format = "json"

[[table]]
id = "bj-1"
game = "blackjack"
seats = 7
limits.blackjack = {{ min = "10", max = "1000" }}
limits.twenty_point_bonus = {{ min = "5", max = "100" }}
shoe = {{ protocol = "reference", transport = "tcp", host = "127.0.0.1", port = 9 }}
"""


def _shoe2mqtt(*words: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - our own command
        [SHOE2MQTT, *words], capture_output=True, text=True, timeout=30, check=False
    )


def test_run_as_a_process_refuses_what_check_config_refuses_with_the_same_lines(
    tmp_path: Path,
) -> None:
    """Each with exit 78 (systemd does not restart it) and not a traceback."""
    good = _SAMPLE.format(port=1883, state=tmp_path / "state")
    paths = []
    for name, (old, new) in _SAMPLE_MISTAKES.items():
        path = tmp_path / f"{name.replace(' ', '-')}.toml"
        path.write_text(good.replace(old, new, 1), encoding="utf-8")
        paths.append(path)
    checked = _shoe2mqtt("check-config", *map(str, paths))
    assert checked.returncode == 78
    for path in paths:
        run = _shoe2mqtt("run", "--config", str(path))
        assert run.returncode == 78, run.stderr
        assert run.stderr.splitlines() == [
            line for line in checked.stderr.splitlines() if line.startswith(f"{path}:")
        ]
        assert "Traceback" not in run.stderr


async def test_run_as_a_process_starts_on_what_check_config_accepts(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    path = tmp_path / "shoe2mqtt.toml"
    path.write_text(_SAMPLE.format(port=mosquitto.port, state=tmp_path / "state"), encoding="utf-8")
    assert (await asyncio.to_thread(_shoe2mqtt, "check-config", str(path))).returncode == 0
    daemon = DaemonProcess(path, tmp_path / "run.log")
    await daemon.start()
    try:
        async with asyncio.timeout(20):
            while '"mqtt.connected"' not in daemon.tail(1000):
                daemon.check()  # raises if it exited by itself
                await asyncio.sleep(0.05)
    finally:
        code = await daemon.stop()
    assert code == 0, daemon.tail()
