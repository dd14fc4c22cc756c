"""docs/writing-a-protocol.md says what the code does: its Python sessions run as doctests,
its tables of each codec's sequence policy and of the template's lines are the codecs', and
the template installed by the entry point it shows is a protocol like the built-in ones to
the registry, to a capture and to `shoe2mqtt listen`, which prints what the page shows."""

from __future__ import annotations

import doctest
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Final

import pytest

from drivers.captures import CaptureHeader, CaptureWriter
from drivers.codecs import enq, reference, template
from drivers.registry import (
    BUILTIN_DRIVERS,
    ENTRY_POINT_GROUP,
    available_drivers,
    load_decoder_class,
)

PAGE: Final = Path(__file__).parent.parent / "docs" / "writing-a-protocol.md"
CODECS: Final = {"reference": reference, "enq": enq, "template": template}


def page() -> str:
    return PAGE.read_text(encoding="utf-8")


def fenced(kind: str) -> list[str]:
    """The page's fenced blocks of `kind` (```toml, ```sh ...), in order."""
    return re.findall(rf"^```{kind}\n(.*?)^```$", page(), re.MULTILINE | re.DOTALL)


def entry_point() -> tuple[str, str, str]:
    """(group, name, target) of the entry point the page declares."""
    [block] = fenced("toml")
    [(group, entries)] = tomllib.loads(block)["project"]["entry-points"].items()
    [(name, target)] = entries.items()
    return group, name, target


def test_the_python_sessions_run_as_shown() -> None:
    result = doctest.testfile(str(PAGE), module_relative=False, verbose=False, report=True)
    assert result.attempted >= 8
    assert result.failed == 0


def _rows(heading: str) -> list[list[str]]:
    """The body rows of the first table after `heading`, cell by cell."""
    after = page().split(heading, 1)[1]
    table = re.search(r"^\|.*?(?=\n\n)", after, re.MULTILINE | re.DOTALL)
    assert table is not None, heading
    return [
        [cell.strip() for cell in line.strip("|").split("|")] for line in table[0].splitlines()[2:]
    ]


def test_the_sequence_table_is_each_codec_s_policy() -> None:
    rows = _rows("## 3. The sequence policy")
    assert [row[0] for row in rows] == list(CODECS)
    for name, modulus, gaps, reliable in rows:
        policy = CODECS[name].SEQUENCE
        assert int(modulus.replace(",", "")) == policy.modulus, name
        assert gaps.startswith("yes" if policy.reports_gaps else "no"), name
        assert reliable.startswith("yes" if policy.reliable else "no"), name


def test_the_template_s_lines_decode_to_the_events_the_table_says() -> None:
    from drivers.events import (  # the names the table's events are written with
        CardDrawn,
        CardUnreadable,
        CutCardReached,
        DeviceIdentity,
        NewShoe,
    )

    names = {cls.__name__: cls for cls in (CardDrawn, CardUnreadable, CutCardReached,
                                            DeviceIdentity, NewShoe)}  # fmt: skip
    rows = _rows("Six lines and their events")
    assert len(rows) == 6
    for line, event in rows:
        expected = eval(event.strip("`"), {"__builtins__": {}}, names)  # noqa: S307 - the page's own table, names only
        assert template.DeviceFrameDecoder().feed(line.strip("`").encode() + b"\n") == [expected]


def test_the_entry_point_names_the_template_s_decoder() -> None:
    assert entry_point() == (
        ENTRY_POINT_GROUP, "template", "drivers.codecs.template:DeviceFrameDecoder"
    )  # fmt: skip


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A distribution on sys.path that declares the page's entry point, as pip would have
    installed a vendor's package."""
    group, name, target = entry_point()
    dist_info = tmp_path / "site" / "template_shoe-1.0.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: template-shoe\nVersion: 1.0\n"
    )
    (dist_info / "entry_points.txt").write_text(f"[{group}]\n{name} = {target}\n")
    monkeypatch.syspath_prepend(str(dist_info.parent))
    return dist_info.parent


def test_not_installed_the_template_is_no_protocol() -> None:
    assert "template" not in available_drivers()
    assert "template" not in BUILTIN_DRIVERS


@pytest.mark.usefixtures("site")
def test_installed_it_loads_as_any_protocol_does() -> None:
    assert load_decoder_class("template") is template.DeviceFrameDecoder
    assert "template" in available_drivers()


def test_listen_prints_the_capture_as_the_page_shows(site: Path, tmp_path: Path) -> None:
    """The greeting answered, three cards with a line lost between the first two."""
    capture = tmp_path / "shoe.jsonl"
    with capture.open("w", encoding="utf-8") as file:
        writer = CaptureWriter(file, CaptureHeader("template", {"kind": "serial"}))
        writer.chunk("rx", b"SHOE Acme S1 0042 1.0 0*60\nCARD 10S 0*76\n", t=0.0)
        writer.chunk("rx", b"CARD QH 2*3F\nNOREAD 3*00\n", t=0.5)
    [typed] = [line for line in fenced("sh") if "--protocol template" in line]
    words = shlex.split(typed.replace("shoe.jsonl", str(capture)))
    assert words[0] == "shoe2mqtt"
    done = subprocess.run(  # noqa: S603 - this Python, our own command, as the page types it
        [sys.executable, "-m", "daemon.cli", *words[1:]],
        capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "PYTHONPATH": str(site)},
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    shown = next(block for block in fenced("") if '"type":"Connecting"' in block)
    assert done.stdout == shown.replace("capture:/tmp/shoe.jsonl", f"capture:{capture}")


@pytest.mark.parametrize("codec", sorted(CODECS))
def test_every_codec_the_page_compares_has_a_host_link_row(codec: str) -> None:
    assert codec in [row[0] for row in _rows("## 4. The host link")]
