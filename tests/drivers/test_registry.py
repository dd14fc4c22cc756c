"""Driver names: built-ins load lazily, installed packages add more through an entry point.

The plugin tests install a real (tiny) distribution on sys.path, so importlib.metadata
finds its entry point exactly as it would find one installed by pip.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import pytest

from drivers.codecs import enq, reference
from drivers.codecs.reference import DeviceFrameDecoder
from drivers.codecs.sequence import SequencePolicy
from drivers.driver import ShoeDriver
from drivers.registry import (
    BUILTIN_DRIVERS,
    ENTRY_POINT_GROUP,
    DriverLoadFailed,
    UnknownDriver,
    available_drivers,
    create_driver,
    load_decoder_class,
    sequence_policy,
)
from drivers.transports import TcpSettings

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

PLUGIN_CODE = """
from drivers.codecs.base import Decoder


class AcmeDecoder(Decoder):
    codec_name = "acme"

    def feed(self, data):
        return []


class NotADecoder:
    pass
"""


def install_plugin(site: Path, entries: dict[str, str]) -> None:
    """A distribution `acme-shoe` whose entry points are `entries` (name -> target)."""
    (site / "acme_shoe_codec.py").write_text(PLUGIN_CODE)
    dist_info = site / "acme_shoe-1.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-shoe\nVersion: 1.0\n")
    lines = [f"[{ENTRY_POINT_GROUP}]"] + [f"{name} = {target}" for name, target in entries.items()]
    (dist_info / "entry_points.txt").write_text("\n".join(lines) + "\n")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("acme_shoe_codec", None)


def test_built_in_drivers_load_their_codecs() -> None:
    assert load_decoder_class("reference") is DeviceFrameDecoder
    assert load_decoder_class("enq") is enq.DeviceFrameDecoder
    assert {"reference", "enq"} <= set(available_drivers())


def test_an_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(UnknownDriver) as caught:
        load_decoder_class("angel-eye")
    assert str(caught.value) == "no shoe driver named 'angel-eye'; known drivers: enq, reference"
    assert caught.value.known == ["enq", "reference"]


def test_an_installed_package_adds_a_driver(site: Path) -> None:
    install_plugin(site, {"acme": "acme_shoe_codec:AcmeDecoder"})
    assert available_drivers() == ["acme", "enq", "reference"]
    assert load_decoder_class("acme").__name__ == "AcmeDecoder"


def test_a_plugin_cannot_replace_a_built_in(site: Path) -> None:
    install_plugin(site, {"reference": "acme_shoe_codec:AcmeDecoder"})
    assert load_decoder_class("reference") is DeviceFrameDecoder


@pytest.mark.parametrize(
    ("target", "says"),
    [
        ("acme_shoe_codec:NotADecoder", "not a drivers.codecs.base.Decoder subclass"),
        ("acme_shoe_codec:Missing", "AttributeError"),
        ("no_such_module:Decoder", "ModuleNotFoundError"),
    ],
)
def test_a_broken_plugin_is_reported_not_crashed_on(site: Path, target: str, says: str) -> None:
    install_plugin(site, {"broken": target})
    with pytest.raises(DriverLoadFailed, match=says) as caught:
        load_decoder_class("broken")
    assert caught.value.target == target


def test_built_in_table_points_at_real_classes() -> None:
    for name in BUILTIN_DRIVERS:
        assert load_decoder_class(name).codec_name == name


def test_create_driver_wires_codec_and_transport() -> None:
    driver = create_driver("enq", TcpSettings("nport.local", 4001))
    assert isinstance(driver, ShoeDriver)
    assert driver.name == "enq"
    assert driver.counters.frames_ok == 0
    assert not driver.connected


def test_each_protocol_says_how_its_shoe_numbers_frames(site: Path) -> None:
    """What the table service judges a jump across a restart by; a plugin that says
    nothing gets no judgement rather than a guess."""
    install_plugin(site, {"acme": "acme_shoe_codec:AcmeDecoder"})
    assert sequence_policy("reference") == SequencePolicy(65536, reports_gaps=True, reliable=True)
    assert sequence_policy("reference") is reference.SEQUENCE
    assert sequence_policy("enq") == SequencePolicy(256, reports_gaps=False)
    assert sequence_policy("acme") is None
