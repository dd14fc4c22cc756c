"""Native USB shoes: blocking endpoint reads in one worker thread, bytes handed to the loop.

The worker thread owns the device from open to close: it opens and claims it, reads until
asked to stop, and releases it. The event loop never makes a blocking pyusb call; writes,
which are rare, go through `asyncio.to_thread`.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import TYPE_CHECKING, Any

from drivers.transports.base import Transport
from drivers.transports.errors import LinkLost, NotConnected, OpenFailed, TransportError
from drivers.transports.usb_device import UsbDevice, UsbSettings

if TYPE_CHECKING:
    from collections.abc import Callable


class UsbTransport(Transport):
    def __init__(self, settings: UsbSettings, *, backend: object | None = None) -> None:
        """`backend` is a `usb.backend.IBackend`; None lets pyusb pick libusb."""
        self.settings = settings
        self.endpoint = settings.device_id
        self._backend = backend
        self._device: UsbDevice | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._received: asyncio.Queue[bytes | LinkLost] = asyncio.Queue()
        self._failure: LinkLost | None = None
        self._finished: asyncio.Future[None] | None = None

    async def open(self) -> None:
        if self._thread is not None:
            raise RuntimeError(f"{self.endpoint} is already open")
        loop = asyncio.get_running_loop()
        opened: asyncio.Future[UsbDevice] = loop.create_future()
        self._finished = loop.create_future()
        self._thread = threading.Thread(
            target=self._work,
            args=(loop, opened, self._finished),
            name=f"shoe2mqtt {self.endpoint} reader",
            # close() always stops and joins it; daemon only so that a crash elsewhere
            # cannot leave the interpreter waiting forever on a blocked USB read.
            daemon=True,
        )
        self._thread.start()
        try:
            self._device = await opened
        except BaseException:  # OpenFailed, or cancelled while opening: stop the thread
            await self.close()
            raise

    async def read(self) -> bytes:
        if self._device is None:
            raise NotConnected("not open", endpoint=self.endpoint)
        if self._failure is None:
            item = await self._received.get()
            if isinstance(item, bytes):
                return item
            self._failure = item
        raise self._failure

    def may_hold_more(self) -> bool:
        """Chunks the reading thread has handed over and no read has taken yet."""
        return not self._received.empty()

    async def write(self, data: bytes) -> None:
        device = self._device
        if device is None:
            raise NotConnected("not open", endpoint=self.endpoint)
        if self._failure is not None:
            raise self._failure
        await asyncio.to_thread(device.write, data)

    async def close(self) -> None:
        self._stop.set()
        thread, finished = self._thread, self._finished
        self._device = None
        if thread is None or finished is None:
            return
        # The thread notices the stop within one read timeout; wait without blocking the loop,
        # then join, which by then returns at once.
        await asyncio.shield(finished)
        thread.join()
        self._thread = None

    # ---------------------------------------------------------------- the worker thread

    def _work(
        self,
        loop: asyncio.AbstractEventLoop,
        opened: asyncio.Future[UsbDevice],
        finished: asyncio.Future[None],
    ) -> None:
        try:
            self._open_and_read(loop, opened)
        finally:
            _call_soon(loop, _resolve, finished, None)

    def _open_and_read(
        self, loop: asyncio.AbstractEventLoop, opened: asyncio.Future[UsbDevice]
    ) -> None:
        try:
            device = UsbDevice.open(self.settings, self._backend)
        except OpenFailed as exc:
            _call_soon(loop, _reject, opened, exc)
            return
        try:
            _call_soon(loop, _resolve, opened, device)
            while not self._stop.is_set():
                try:
                    data = device.read()
                except LinkLost as exc:
                    _call_soon(loop, self._received.put_nowait, exc)
                    return
                if data:
                    _call_soon(loop, self._received.put_nowait, data)
        finally:
            device.close()


def _call_soon(
    loop: asyncio.AbstractEventLoop, callback: Callable[..., object], *args: object
) -> None:
    with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is left to tell
        loop.call_soon_threadsafe(callback, *args)


def _resolve(future: asyncio.Future[Any], result: object) -> None:
    if not future.done():
        future.set_result(result)


def _reject(future: asyncio.Future[Any], error: TransportError) -> None:
    if not future.done():
        future.set_exception(error)
