"""A pyusb backend that plays one shoe, so the USB transport is tested through real pyusb.

pyusb asks a backend for descriptors, opens and claims through it, and reads endpoints
through it; this one answers from memory. Frames queued with `send` come out of the IN
endpoint one per read; with none queued a read times out like libusb does. `unplug` makes
every call fail with ENODEV (what libusb reports for a device that went away) and
`plug_in` brings back a fresh device, which a stale handle cannot use.
"""

from __future__ import annotations

import array
import collections
import errno
import threading
from dataclasses import dataclass, field

import usb.backend  # type: ignore[import-untyped]  # pyusb has no type information
import usb.core  # type: ignore[import-untyped]
import usb.util  # type: ignore[import-untyped]

IN_ENDPOINT = 0x81
OUT_ENDPOINT = 0x02
LANGID_EN_US = 0x0409
SERIAL_STRING_INDEX = 3
TIMEOUT_ERROR_CODE = -7  # LIBUSB_ERROR_TIMEOUT
NO_DEVICE_ERROR_CODE = -4  # LIBUSB_ERROR_NO_DEVICE


@dataclass(frozen=True)
class DeviceDescriptor:
    idVendor: int  # noqa: N815 - pyusb reads descriptor fields by their USB names
    idProduct: int  # noqa: N815
    iSerialNumber: int  # noqa: N815
    bLength: int = 18  # noqa: N815
    bDescriptorType: int = usb.util.DESC_TYPE_DEVICE  # noqa: N815
    bcdUSB: int = 0x0200  # noqa: N815
    bDeviceClass: int = 0xFF  # noqa: N815 - vendor specific, as shoe readers are
    bDeviceSubClass: int = 0  # noqa: N815
    bDeviceProtocol: int = 0  # noqa: N815
    bMaxPacketSize0: int = 64  # noqa: N815
    bcdDevice: int = 0x0100  # noqa: N815
    iManufacturer: int = 0  # noqa: N815
    iProduct: int = 0  # noqa: N815
    bNumConfigurations: int = 1  # noqa: N815
    address: int = 7
    bus: int = 1
    port_number: int = 2
    port_numbers: tuple[int, ...] = (2,)
    speed: int = 2


@dataclass(frozen=True)
class ConfigurationDescriptor:
    bLength: int = 9  # noqa: N815
    bDescriptorType: int = usb.util.DESC_TYPE_CONFIG  # noqa: N815
    wTotalLength: int = 32  # noqa: N815
    bNumInterfaces: int = 1  # noqa: N815
    bConfigurationValue: int = 1  # noqa: N815
    iConfiguration: int = 0  # noqa: N815
    bmAttributes: int = 0x80  # noqa: N815
    bMaxPower: int = 50  # noqa: N815
    extra_descriptors: bytes = b""


@dataclass(frozen=True)
class InterfaceDescriptor:
    bNumEndpoints: int  # noqa: N815
    bLength: int = 9  # noqa: N815
    bDescriptorType: int = usb.util.DESC_TYPE_INTERFACE  # noqa: N815
    bInterfaceNumber: int = 0  # noqa: N815
    bAlternateSetting: int = 0  # noqa: N815
    bInterfaceClass: int = 0xFF  # noqa: N815
    bInterfaceSubClass: int = 0  # noqa: N815
    bInterfaceProtocol: int = 0  # noqa: N815
    iInterface: int = 0  # noqa: N815
    extra_descriptors: bytes = b""


@dataclass(frozen=True)
class EndpointDescriptor:
    bEndpointAddress: int  # noqa: N815
    bmAttributes: int  # noqa: N815
    wMaxPacketSize: int = 64  # noqa: N815
    bLength: int = 7  # noqa: N815
    bDescriptorType: int = usb.util.DESC_TYPE_ENDPOINT  # noqa: N815
    bInterval: int = 1  # noqa: N815
    bRefresh: int = 0  # noqa: N815
    bSynchAddress: int = 0  # noqa: N815
    extra_descriptors: bytes = b""


@dataclass
class _Handle:
    generation: int  # which plug-in this handle belongs to
    claimed: set[int] = field(default_factory=set)


# pyusb is untyped, so its base class is Any to mypy; subclassing it is the point here.
class FakeShoeBackend(usb.backend.IBackend):  # type: ignore[misc]
    def __init__(
        self,
        vendor_id: int = 0x1209,
        product_id: int = 0x5E0E,
        serial_number: str = "SHOE-0001",
        *,
        interrupt: bool = False,
        with_out_endpoint: bool = True,
    ) -> None:
        super().__init__()
        self._device = DeviceDescriptor(
            idVendor=vendor_id, idProduct=product_id, iSerialNumber=SERIAL_STRING_INDEX
        )
        self.serial_number = serial_number
        kind = usb.util.ENDPOINT_TYPE_INTR if interrupt else usb.util.ENDPOINT_TYPE_BULK
        self._endpoints = [EndpointDescriptor(IN_ENDPOINT, kind)]
        if with_out_endpoint:
            self._endpoints.append(EndpointDescriptor(OUT_ENDPOINT, kind))
        self._changed = threading.Condition()
        self._frames: collections.deque[bytes] = collections.deque()
        self._generation = 1
        self._present = True
        self.configuration = 0  # unconfigured until the host sets one
        self.written: list[bytes] = []
        self.reads = 0  # endpoint reads, timeouts included

    # ---------------------------------------------------------------- what a test does

    def send(self, frame: bytes) -> None:
        """The device has `frame` ready for the host's next IN transfer."""
        with self._changed:
            self._frames.append(frame)
            self._changed.notify_all()

    def unplug(self) -> None:
        with self._changed:
            self._present = False
            self._frames.clear()
            self._changed.notify_all()

    def plug_in(self) -> None:
        with self._changed:
            self._present = True
            self._generation += 1
            self.configuration = 0
            self._changed.notify_all()

    # ---------------------------------------------------------------- descriptors

    def enumerate_devices(self) -> list[int]:
        with self._changed:
            return [self._generation] if self._present else []

    def get_device_descriptor(self, dev: int) -> DeviceDescriptor:  # noqa: ARG002 - one device
        return self._device

    def get_configuration_descriptor(self, dev: int, config: int) -> ConfigurationDescriptor:  # noqa: ARG002 - one device
        if config != 0:
            raise IndexError(config)
        return ConfigurationDescriptor()

    def get_interface_descriptor(
        self,
        dev: int,  # noqa: ARG002 - one device
        intf: int,
        alt: int,
        config: int,  # noqa: ARG002 - one configuration
    ) -> InterfaceDescriptor:
        if intf != 0 or alt != 0:  # pyusb probes alternate settings until IndexError
            raise IndexError((intf, alt))
        return InterfaceDescriptor(bNumEndpoints=len(self._endpoints))

    def get_endpoint_descriptor(
        self,
        dev: int,  # noqa: ARG002 - one device
        ep: int,
        intf: int,  # noqa: ARG002 - one interface
        alt: int,  # noqa: ARG002 - one alternate setting
        config: int,  # noqa: ARG002 - one configuration
    ) -> EndpointDescriptor:
        return self._endpoints[ep]

    # ---------------------------------------------------------------- handles

    def open_device(self, dev: int) -> _Handle:
        self._check(_Handle(dev))
        return _Handle(dev)

    def close_device(self, dev_handle: _Handle) -> None:
        pass

    def get_configuration(self, dev_handle: _Handle) -> int:
        self._check(dev_handle)
        return self.configuration

    def set_configuration(self, dev_handle: _Handle, config_value: int) -> None:
        self._check(dev_handle)
        self.configuration = config_value

    def claim_interface(self, dev_handle: _Handle, intf: int) -> None:
        self._check(dev_handle)
        dev_handle.claimed.add(intf)

    def release_interface(self, dev_handle: _Handle, intf: int) -> None:
        self._check(dev_handle)
        dev_handle.claimed.discard(intf)

    def is_kernel_driver_active(self, dev_handle: _Handle, intf: int) -> bool:  # noqa: ARG002 - none attached
        return False

    def ctrl_transfer(
        self,
        dev_handle: _Handle,
        bmRequestType: int,  # noqa: N803, ARG002 - pyusb's parameter names; only GET_DESCRIPTOR
        bRequest: int,  # noqa: N803, ARG002
        wValue: int,  # noqa: N803
        wIndex: int,  # noqa: N803, ARG002
        data: array.array[int],
        timeout: int,  # noqa: ARG002 - answers at once
    ) -> int:
        """Answers GET_DESCRIPTOR for strings: the language list and the serial number."""
        self._check(dev_handle)
        index = wValue & 0xFF
        if index == 0:
            payload = LANGID_EN_US.to_bytes(2, "little")
        elif index == SERIAL_STRING_INDEX:
            payload = self.serial_number.encode("utf-16-le")
        else:
            raise usb.core.USBError("Pipe error", -9, errno.EPIPE)
        descriptor = bytes([2 + len(payload), usb.util.DESC_TYPE_STRING]) + payload
        size = min(len(descriptor), len(data))
        data[:size] = array.array("B", descriptor[:size])
        return size

    # ---------------------------------------------------------------- transfers

    def bulk_read(
        self,
        dev_handle: _Handle,
        ep: int,
        intf: int,  # noqa: ARG002 - one interface
        buff: array.array[int],
        timeout: int,
    ) -> int:
        assert ep == IN_ENDPOINT
        with self._changed:
            self.reads += 1
            self._changed.wait_for(
                lambda: self._frames or not self._live(dev_handle), timeout / 1000
            )
            self._check(dev_handle)
            if not self._frames:
                raise usb.core.USBTimeoutError(
                    "Operation timed out", TIMEOUT_ERROR_CODE, errno.ETIMEDOUT
                )
            frame = self._frames.popleft()
        assert len(frame) <= len(buff), "a test frame must fit one packet"
        buff[: len(frame)] = array.array("B", frame)
        return len(frame)

    intr_read = bulk_read

    def bulk_write(
        self,
        dev_handle: _Handle,
        ep: int,
        intf: int,  # noqa: ARG002 - one interface
        data: array.array[int],
        timeout: int,  # noqa: ARG002 - answers at once
    ) -> int:
        assert ep == OUT_ENDPOINT
        self._check(dev_handle)
        self.written.append(data.tobytes())
        return len(data)

    intr_write = bulk_write

    def _live(self, handle: _Handle) -> bool:
        return self._present and handle.generation == self._generation

    def _check(self, handle: _Handle) -> None:
        if not self._live(handle):
            raise usb.core.USBError(
                "No such device (it may have been disconnected)",
                NO_DEVICE_ERROR_CODE,
                errno.ENODEV,
            )
