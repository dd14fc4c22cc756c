"""A manifest that is not one, and a day file that is not one: a clear error, never a crash.

Hypothesis writes manifests of every shape (any JSON, and valid manifests with one part
changed, removed or of another type) and the archive reads each: a manifest's files, read
back exactly, or `ManifestError`, and nothing else. A daemon that finds such a manifest
moves the archive aside (nothing deleted but what a killed archiver left half written),
tells the pit, goes on serving and archives into a fresh manifest; `journal verify` names
the quarantined archive until its manifest is repaired in place, and reads it again then.
"""

from __future__ import annotations

import copy
import gzip
import json
import shutil
from typing import TYPE_CHECKING, Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from daemon.journal.archive import (
    QUARANTINE,
    Archive,
    ArchiveFile,
    ManifestError,
    manifest_text,
)
from tests.daemon.commands import shoe2mqtt
from tests.daemon.pit import play, read_example, running_pit, shoe_script

if TYPE_CHECKING:
    from pathlib import Path

    from daemon.testing import Mosquitto
    from tests.daemon.journals import RealJournal

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
HASH = st.text("0123456789abcdef", min_size=64, max_size=64)


@st.composite
def manifests(draw: st.DrawFn) -> list[ArchiveFile]:
    """Valid manifests: per table, runs of events one after another."""
    files = []
    for table in draw(st.lists(st.from_regex(r"[a-z][a-z0-9-]{0,5}", fullmatch=True),
                               unique=True, max_size=3)):  # fmt: skip
        first = draw(st.integers(1, 1000))
        for k in range(draw(st.integers(0, 3))):
            last = first + draw(st.integers(0, 500))
            day = draw(st.dates()).isoformat()
            name = f"{table}/{day}.jsonl.gz" if k == 0 else f"{table}/{day}.{k + 1}.jsonl.gz"
            rounds = tuple(
                {"table": table, "round": r, "first": first, "last": last, "started": day,
                 "ended": day, "settlements": 0, "voided": False, "review": []}
                for r in range(draw(st.integers(0, 2)))
            )  # fmt: skip
            files.append(ArchiveFile(
                table, day, name, first, last, draw(HASH), draw(st.integers(1, 10**6)),
                draw(st.integers(1, 10**9)), draw(HASH), rounds,
            ))  # fmt: skip
            first = last + 1
    return files


def _paths(value: object, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON value."""
    found = [path]
    if isinstance(value, dict):
        for key, inner in value.items():
            found += _paths(inner, (*path, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            found += _paths(inner, (*path, index))
    return found


@st.composite
def changed(draw: st.DrawFn) -> object:
    """A valid manifest with one place replaced by any JSON, or removed."""
    data = json.loads(manifest_text(draw(manifests())))
    place = draw(st.sampled_from(_paths(data)))
    if not place:
        return draw(JSON)
    holder = data
    for key in place[:-1]:
        holder = holder[key]
    if draw(st.booleans()):
        del holder[place[-1]]
    else:
        holder[place[-1]] = draw(JSON)
    return data


def _read(tmp_path: Path, text: str) -> list[ArchiveFile]:
    archive = Archive(tmp_path / "archive")
    archive.directory.mkdir(exist_ok=True)
    archive.manifest_path.write_text(text, encoding="utf-8")
    return archive.files()


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(files=manifests())
def test_a_manifest_reads_back_exactly(tmp_path: Path, files: list[ArchiveFile]) -> None:
    assert _read(tmp_path, manifest_text(files)) == sorted(
        files, key=lambda f: (f.table, f.first_n)
    )


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=changed() | JSON)
def test_any_other_shape_is_a_manifest_error_and_nothing_else(tmp_path: Path, data: object) -> None:
    try:
        files = _read(tmp_path, json.dumps(data))
    except ManifestError as exc:
        error = str(exc)
        files = []
    else:
        error = str(tmp_path / "archive" / "manifest.json")
    assert str(tmp_path / "archive" / "manifest.json") in error
    for file in files:  # what it read is a manifest's: each field of its type, every path inside
        assert all(isinstance(v, int) and not isinstance(v, bool) and v >= 0
                   for v in (file.first_n, file.last_n, file.lines, file.bytes))  # fmt: skip
        assert file.file.startswith(f"{file.table}/")
        assert ".." not in file.file
        assert len(file.sha256) == len(file.last_hash) == 64
        assert all(isinstance(r["review"], list) for r in file.rounds)


def test_not_json_and_deep_json_are_manifest_errors(tmp_path: Path) -> None:
    for text in ('{"format": 1, "files": [', "[" * 100_000 + "]" * 100_000, "\ufeff{}"):
        try:
            _read(tmp_path, text)
        except ManifestError:
            continue
        raise AssertionError(text[:20])


def _manifest(journal: RealJournal) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((journal.archive / "manifest.json").read_text())
    return data


async def test_a_daemon_quarantines_a_manifest_of_another_shape_and_serves_on(
    journal_copy: RealJournal, mosquitto: Mosquitto
) -> None:
    good = _manifest(journal_copy)
    bad = copy.deepcopy(good)
    del bad["files"][0]["rounds"]  # what once killed every start: KeyError: 'rounds'
    (journal_copy.archive / "manifest.json").write_text(json.dumps(bad))
    state = journal_copy.state
    as_typed = ("journal", "--state-directory", str(state))
    listed = shoe2mqtt(*as_typed, "list")
    assert (listed.returncode, listed.stdout) == (1, "")
    assert "manifest.json: files[0]: no 'rounds'" in listed.stderr

    left = journal_copy.archive / "bj-1" / ".2026-11-29.k1ll3d.tmp"  # a killed archiver's
    left.write_bytes(bytes(4096))
    table, events, _ = read_example("blackjack-queen-of-hearts.jsonl")
    again = shoe_script(events).replace("SHUFFLE BURN ", "")
    async with running_pit(table, again, mosquitto, state_directory=state) as pit:
        notice = await pit.wait_for("notice/archive_quarantined")
        await play(pit, events)  # the table serves on
    assert "files[0]: no 'rounds'" in notice["message"]
    [quarantined] = (journal_copy.archive / QUARANTINE).iterdir()
    assert json.loads((quarantined / "manifest.json").read_text()) == bad  # moved, kept
    assert (quarantined / "bj-1").is_dir()
    assert not (quarantined / "bj-1" / left.name).exists()  # removed at start, before it
    assert not (journal_copy.archive / "bj-1").exists()
    assert not (journal_copy.archive / "manifest.json").exists()  # fresh: nothing due yet

    verified = shoe2mqtt(*as_typed, "verify")
    assert verified.returncode == 1
    assert f"archive {QUARANTINE}/{quarantined.name}: quarantined, not read:" in verified.stdout
    # Repaired in place, the quarantined archive is read again: every round, the chain whole.
    (quarantined / "manifest.json").write_text(json.dumps(good))
    verified = shoe2mqtt(*as_typed, "verify")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    rounds = [json.loads(line) for line in shoe2mqtt(*as_typed, "list").stdout.splitlines()]
    assert [(r["round"], (r["archive"] or "").startswith(QUARANTINE)) for r in rounds] == [
        (1, True), (2, True), (3, False), (4, False),
    ]  # fmt: skip


def test_a_day_file_of_another_shape_is_named_by_verify(journal_copy: RealJournal) -> None:
    [file] = Archive(journal_copy.archive).files()
    path = journal_copy.archive / file.file
    with gzip.open(path, "rt", encoding="utf-8") as text:
        lines = text.read().splitlines()
    at = next(i for i, line in enumerate(lines) if json.loads(line)["type"] == "journal")
    for replacement in ("[1, 2]", json.dumps({"type": "journal", "n": 1})):
        edited = lines.copy()
        edited[at] = replacement
        with gzip.open(path, "wt", encoding="utf-8") as text:
            text.write("\n".join(edited) + "\n")
        done = shoe2mqtt("journal", "--state-directory", str(journal_copy.state), "verify")
        assert done.returncode == 1
        assert f"{file.file} line {at + 1}" in done.stdout, done.stdout
    shutil.rmtree(journal_copy.archive / "bj-1")
    done = shoe2mqtt("journal", "--state-directory", str(journal_copy.state), "verify")
    assert (done.returncode, "bj-1: the archive: removed:") == (1, done.stdout[:27])


def test_an_empty_file_an_earlier_version_listed_is_read_past(journal_copy: RealJournal) -> None:
    """An earlier version, its clock stepped back, could list a file holding no event (its
    `table` line alone), and `verify` then failed for ever after: such an entry is kept as
    it is, and read past."""
    manifest = _manifest(journal_copy)
    [day] = manifest["files"]
    empty = {**day, "file": "bj-1/2026-11-28.jsonl.gz", "day": "2026-11-28", "first_n": 0,
             "last_n": 0, "last_hash": "", "lines": 1, "rounds": []}  # fmt: skip
    manifest["files"].append(empty)
    (journal_copy.archive / "manifest.json").write_text(json.dumps(manifest))
    shutil.copy(journal_copy.archive / day["file"], journal_copy.archive / empty["file"])
    as_typed = ("journal", "--state-directory", str(journal_copy.state))
    verified = shoe2mqtt(*as_typed, "verify")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    listed = shoe2mqtt(*as_typed, "list").stdout.splitlines()
    assert [json.loads(line)["round"] for line in listed] == [1, 2, 3]
