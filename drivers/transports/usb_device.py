"""A narrow, typed, blocking wrapper around pyusb: find a shoe, claim it, read and write.

pyusb has no type information, so everything untyped stays inside this module. All calls
block (a read for up to its timeout): only the USB transport's worker thread, or
`asyncio.to_thread`, may call them, never the event loop.
"""

from __future__ import annotations

import contextlib
import errno
from dataclasses import dataclass
from typing import Final

# pyusb ships neither inline types nor stubs; this module is the typed boundary around it.
import usb.core  # type: ignore[import-untyped]
import usb.util  # type: ignore[import-untyped]

from drivers.transports.errors import LinkLost, OpenFailed, SettingsCheck, describe_value

_READABLE_TYPES: Final = frozenset({usb.util.ENDPOINT_TYPE_BULK, usb.util.ENDPOINT_TYPE_INTR})
# A USB string descriptor holds at most 126 UTF-16 code units (its length is one byte).
_SERIAL_NUMBER_MAX: Final = 126


@dataclass(frozen=True, slots=True)
class UsbSettings:
    """A native USB shoe: which device, which interface, and how the worker thread reads."""

    vendor_id: int
    product_id: int
    serial_number: str | None = None  # tells two identical shoes on one host apart
    interface: int = 0  # bInterfaceNumber of the interface that carries the shoe's data
    # One endpoint read blocks at most this long. A timeout is not an error: it is how the
    # worker thread notices, this often, that it has been asked to stop.
    read_timeout_ms: int = 200
    write_timeout_ms: int = 1000

    def __post_init__(self) -> None:
        check = SettingsCheck()
        for field in ("vendor_id", "product_id"):
            check.whole_number(
                field,
                getattr(self, field),
                allowed=range(0x10000),
                message="must be a 16-bit USB id such as 0x0403 (see `lsusb`)",
            )
        serial = self.serial_number
        if serial is not None and (
            not isinstance(serial, str)
            or not serial
            or not serial.isprintable()
            or len(serial) > _SERIAL_NUMBER_MAX
        ):
            check.refuse(
                "serial_number",
                serial,
                f"must be the device's serial number (printable, at most {_SERIAL_NUMBER_MAX} "
                f"characters), or left out; not {describe_value(serial)}",
            )
        check.whole_number(
            "interface",
            self.interface,
            allowed=range(256),
            message="must be an interface number 0-255",
        )
        for field in ("read_timeout_ms", "write_timeout_ms"):
            check.whole_number(
                field,
                getattr(self, field),
                allowed=range(10, 60_001),
                message="must be a whole number of milliseconds from 10 to 60000",
            )
        check.raise_any()

    @property
    def device_id(self) -> str:
        """How the device is named in logs and errors: "usb 0403:6001 serial A1B2"."""
        name = f"usb {self.vendor_id:04x}:{self.product_id:04x}"
        return name if self.serial_number is None else f"{name} serial {self.serial_number}"


def is_timeout(exc: usb.core.USBError) -> bool:
    # libusb1 raises USBTimeoutError; libusb0 and openusb only set the errno.
    return isinstance(exc, usb.core.USBTimeoutError) or exc.errno == errno.ETIMEDOUT


class UsbDevice:
    """One opened, claimed device with an IN endpoint and perhaps an OUT endpoint."""

    def __init__(
        self,
        settings: UsbSettings,
        device: usb.core.Device,
        in_ep: usb.core.Endpoint,
        out_ep: usb.core.Endpoint | None,
    ) -> None:
        self.settings = settings
        self._device = device
        self._in_address: int = int(in_ep.bEndpointAddress)
        self._in_size: int = int(in_ep.wMaxPacketSize) or 64
        self._out_address: int | None = None if out_ep is None else int(out_ep.bEndpointAddress)

    @classmethod
    def open(cls, settings: UsbSettings, backend: object | None = None) -> UsbDevice:
        """Find, configure and claim the device; raises `OpenFailed` saying what to check.

        `backend` is a `usb.backend.IBackend`; None lets pyusb pick libusb.
        """
        name = settings.device_id
        try:
            device = usb.core.find(
                backend=backend,
                idVendor=settings.vendor_id,
                idProduct=settings.product_id,
                custom_match=lambda candidate: _serial_matches(candidate, settings.serial_number),
            )
        except usb.core.NoBackendError as exc:
            message = f"cannot look for {name}: no libusb found; install libusb-1.0"
            raise OpenFailed(message, endpoint=name) from exc
        except usb.core.USBError as exc:
            raise _open_failed(name, "cannot enumerate USB devices", exc) from exc
        if device is None:
            message = f"no USB device {name}: check it is plugged in (`lsusb`) and the ids"
            raise OpenFailed(message, endpoint=name, errno=errno.ENODEV)
        try:
            return cls._claim(settings, device)
        except usb.core.USBError as exc:
            usb.util.dispose_resources(device)
            raise _open_failed(name, "cannot claim", exc) from exc
        except OpenFailed:
            usb.util.dispose_resources(device)
            raise

    @classmethod
    def _claim(cls, settings: UsbSettings, device: usb.core.Device) -> UsbDevice:
        name = settings.device_id
        number = settings.interface
        # Only configure an unconfigured device: setting the configuration again resets
        # the device's endpoints, and some devices misbehave after it.
        try:
            configuration = device.get_active_configuration()
        except usb.core.USBError:
            device.set_configuration()
            configuration = device.get_active_configuration()
        interface = usb.util.find_descriptor(configuration, bInterfaceNumber=number)
        if interface is None:
            message = f"{name} has no interface {number}: check the interface setting"
            raise OpenFailed(message, endpoint=name)
        if _kernel_driver_active(device, number):
            device.detach_kernel_driver(number)
        usb.util.claim_interface(device, number)
        in_ep = _find_endpoint(interface, usb.util.ENDPOINT_IN)
        if in_ep is None:
            message = f"{name} interface {number} has no bulk or interrupt IN endpoint"
            raise OpenFailed(message, endpoint=name)
        return cls(settings, device, in_ep, _find_endpoint(interface, usb.util.ENDPOINT_OUT))

    def read(self) -> bytes:
        """What the device sent, or b"" when nothing came within the read timeout."""
        try:
            data = self._device.read(
                self._in_address, self._in_size, timeout=self.settings.read_timeout_ms
            )
        except usb.core.USBError as exc:
            if is_timeout(exc):
                return b""
            raise _lost(self.settings.device_id, exc) from exc
        return bytes(data)

    def write(self, data: bytes) -> None:
        name = self.settings.device_id
        if self._out_address is None:
            raise LinkLost(f"{name} has no OUT endpoint: it cannot take commands", endpoint=name)
        try:
            self._device.write(self._out_address, data, timeout=self.settings.write_timeout_ms)
        except usb.core.USBError as exc:
            raise _lost(name, exc) from exc

    def close(self) -> None:
        """Release the interface and the handle; a device that is gone is closed too."""
        # Unplugged: the kernel has already released everything, and saying so again is noise.
        with contextlib.suppress(usb.core.USBError):
            usb.util.dispose_resources(self._device)


def _serial_matches(candidate: usb.core.Device, wanted: str | None) -> bool:
    if wanted is None:
        return True
    try:
        return bool(candidate.serial_number == wanted)
    except (usb.core.USBError, ValueError):
        return False  # no readable serial number: it cannot be the one asked for


def _kernel_driver_active(device: usb.core.Device, number: int) -> bool:
    try:
        return bool(device.is_kernel_driver_active(number))
    except NotImplementedError:  # backends without the call cannot have a driver to detach
        return False


def _find_endpoint(interface: usb.core.Interface, direction: int) -> usb.core.Endpoint | None:
    return usb.util.find_descriptor(
        interface,
        custom_match=lambda ep: (
            usb.util.endpoint_direction(ep.bEndpointAddress) == direction
            and usb.util.endpoint_type(ep.bmAttributes) in _READABLE_TYPES
        ),
    )


def _open_failed(name: str, what: str, exc: usb.core.USBError) -> OpenFailed:
    code = exc.errno if isinstance(exc.errno, int) else None
    advice = {
        errno.EACCES: f"permission denied on {name}: add a udev rule giving the daemon access",
        errno.EPERM: f"permission denied on {name}: add a udev rule giving the daemon access",
        errno.EBUSY: f"{name} is in use by another program or kernel driver",
        errno.ENODEV: f"{name} went away while being opened: unplugged?",
    }.get(code or 0, f"{what} {name}: {exc.strerror or exc}")
    return OpenFailed(advice, endpoint=name, errno=code)


def _lost(name: str, exc: usb.core.USBError) -> LinkLost:
    code = exc.errno if isinstance(exc.errno, int) else None
    if code == errno.ENODEV:
        message = f"{name} went away: unplugged or powered off?"
    else:
        message = f"lost {name}: {exc.strerror or exc}"
    return LinkLost(message, endpoint=name, errno=code)
