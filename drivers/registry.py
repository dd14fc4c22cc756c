"""Driver names → the codec each one speaks, loaded only when asked for.

Like python-can's interface table: the built-in names live in `BUILTIN_DRIVERS` as
(module, class) pairs, so naming one imports nothing else, and a separately installed
package adds a protocol by declaring an entry point in the `shoe2mqtt.drivers` group:

    [project.entry-points."shoe2mqtt.drivers"]
    acme = "acme_shoe.codec:AcmeDecoder"

A decoder class says how its shoe numbers frames in its `sequence` attribute (a
`SequencePolicy`, see `drivers.codecs.sequence`); the daemon judges a jump in the numbers
across a restart by it, and judges none for a plugin that leaves it None.

Any driver runs over any transport: the name picks the protocol, the settings pick the wire.
A built-in name wins over an entry point of the same name, so a plugin cannot quietly
replace the protocol a table was certified with.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import sys
from typing import TYPE_CHECKING, Final

from drivers.codecs.base import Decoder
from drivers.driver import ShoeDriver
from drivers.errors import DriverError
from drivers.session import HostSession
from drivers.transports import transport_factory

if TYPE_CHECKING:
    import random

    from drivers.backoff import BackoffPolicy
    from drivers.codecs.sequence import SequencePolicy
    from drivers.transports import TransportSettings

ENTRY_POINT_GROUP: Final = "shoe2mqtt.drivers"

BUILTIN_DRIVERS: Final[dict[str, tuple[str, str]]] = {
    # shoe2mqtt's own protocol (docs/protocol.md): what a vendor or adapter board implements
    "reference": ("drivers.codecs.reference", "DeviceFrameDecoder"),
    # the ENQ/ETX/BCC frame family described in public for baccarat-era smart shoes
    "enq": ("drivers.codecs.enq", "DeviceFrameDecoder"),
}


class UnknownDriver(DriverError, LookupError):
    def __init__(self, name: str, known: list[str]) -> None:
        super().__init__(f"no shoe driver named {name!r}; known drivers: {', '.join(known)}")
        self.name = name
        self.known = known


class DriverLoadFailed(DriverError, ImportError):
    """A driver is registered but cannot be loaded: a broken plugin, or a wrong target."""

    def __init__(self, name: str, target: str, detail: str) -> None:
        super().__init__(f"driver {name!r} ({target}) cannot be loaded: {detail}")
        self.name = name
        self.target = target


def _plugins() -> dict[str, importlib.metadata.EntryPoint]:
    return _plugins_on(tuple(sys.path))


@functools.cache
def _plugins_on(path: tuple[str, ...]) -> dict[str, importlib.metadata.EntryPoint]:
    """The plugins installed on this import path. Scanning every installed distribution
    takes milliseconds, and a configuration asks once per table (256 tables: 0.6 s of a
    start); what can be found changes only with the path, which is the cache's key."""
    del path  # the key only: entry_points() reads sys.path itself
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}


def available_drivers() -> list[str]:
    """Every driver name that can be loaded, built-in or installed, sorted."""
    return sorted(BUILTIN_DRIVERS.keys() | _plugins().keys())


def load_decoder_class(name: str) -> type[Decoder]:
    """The codec class of driver `name`; imports its module now if that has not happened."""
    if name in BUILTIN_DRIVERS:
        module_name, class_name = BUILTIN_DRIVERS[name]
        target = f"{module_name}:{class_name}"
        try:
            loaded: object = getattr(importlib.import_module(module_name), class_name)
        except (ImportError, AttributeError) as exc:
            raise DriverLoadFailed(name, target, str(exc)) from exc
    else:
        plugin = _plugins().get(name)
        if plugin is None:
            raise UnknownDriver(name, available_drivers())
        target = plugin.value
        try:
            loaded = plugin.load()
        except Exception as exc:  # a plugin's import can fail in any way; report, not crash
            raise DriverLoadFailed(name, target, f"{type(exc).__name__}: {exc}") from exc
    if not (isinstance(loaded, type) and issubclass(loaded, Decoder)):
        raise DriverLoadFailed(name, target, "it is not a drivers.codecs.base.Decoder subclass")
    return loaded


def sequence_policy(name: str) -> SequencePolicy | None:
    """How driver `name`'s shoe numbers its frames (None: no number anyone should judge)."""
    return load_decoder_class(name).sequence


def create_driver(
    name: str,
    transport: TransportSettings,
    *,
    table: str | None = None,
    backoff: BackoffPolicy | None = None,
    rng: random.Random | None = None,
    idle_timeout: float | None = None,
    session: HostSession | None = None,
) -> ShoeDriver:
    """A driver for shoe protocol `name` over `transport`, reading the shoe of `table`:
    what the daemon builds from its configuration. `session`: the table's (`host_session`);
    without one the driver makes its own."""
    decoder = load_decoder_class(name)()
    return ShoeDriver(
        name,
        decoder,
        transport_factory(transport),
        table=table,
        backoff=backoff,
        rng=rng,
        idle_timeout=idle_timeout,
        session=session,
    )


def host_session(name: str) -> HostSession:
    """A new host's side of driver `name`'s protocol, made by its codec (`drivers.session`)."""
    return HostSession.of(load_decoder_class(name))
