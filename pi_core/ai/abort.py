"""Abort signals: one controller per run, its signal handed to the model stream and to every tool.

asyncio cancellation alone cannot tell a tool "kill your process group first", so a signal carries
callbacks as well as a flag, and can be awaited.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


class AbortError(Exception):
    """Raised by :meth:`AbortSignal.throw_if_aborted` once the signal has fired."""


class AbortSignal:
    """Read side of an :class:`AbortController`."""

    __slots__ = ("_aborted", "_reason", "_callbacks", "_waiters")

    def __init__(self) -> None:
        self._aborted = False
        self._reason: str | None = None
        self._callbacks: list[Callable[[], object]] = []
        self._waiters: list[asyncio.Future[None]] = []

    @property
    def aborted(self) -> bool:
        return self._aborted

    @property
    def reason(self) -> str | None:
        return self._reason

    def add_callback(self, callback: Callable[[], object]) -> Callable[[], None]:
        """Call ``callback`` once when the signal fires (at once if it already has).

        Returns a function that removes the callback again.
        """
        if self._aborted:
            callback()
            return lambda: None
        self._callbacks.append(callback)

        def remove() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return remove

    def throw_if_aborted(self) -> None:
        if self._aborted:
            raise AbortError(self._reason or "Operation aborted")

    async def wait(self) -> None:
        """Return when the signal fires."""
        if self._aborted:
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(future)
        try:
            await future
        finally:
            if future in self._waiters:
                self._waiters.remove(future)

    def _fire(self, reason: str | None) -> None:
        if self._aborted:
            return
        self._aborted = True
        self._reason = reason
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()
        for future in self._waiters:
            if not future.done():
                future.get_loop().call_soon_threadsafe(_resolve, future)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


async def unless_aborted(awaitable: Awaitable[T], signal: AbortSignal | None) -> T | None:
    """``awaitable``'s result, or ``None`` when ``signal`` fires first (``awaitable`` is then cancelled):
    how a dialog is dismissed by an abort signal."""
    if signal is None:
        return await awaitable
    task = asyncio.ensure_future(awaitable)
    if signal.aborted:
        task.cancel()
    waiter = asyncio.ensure_future(signal.wait())
    try:
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
        if not task.done():
            task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        return await task
    return None


class AbortController:
    """Owns a signal and fires it."""

    __slots__ = ("signal",)

    def __init__(self) -> None:
        self.signal = AbortSignal()

    def abort(self, reason: str | None = None) -> None:
        self.signal._fire(reason)


__all__ = ["AbortController", "AbortError", "AbortSignal", "unless_aborted"]
