"""``ctx.events``: a message bus shared by the plugins of one session (pi's ``pi.events``).

``emit(channel, data)`` calls every handler of ``channel`` at once, in the order they subscribed;
``on(channel, handler)`` returns a function that unsubscribes. A handler may be ``async``: it is
scheduled on the running loop. A failing handler is reported (it never reaches the emitter) and the
other handlers still run.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

Handler = Callable[[Any], Any]


class EventBus:
    """Channels by name, handlers per channel."""

    def __init__(self, on_error: Callable[[str, BaseException], None] | None = None) -> None:
        self._handlers: dict[str, list[Handler]] = {}
        self._on_error = on_error or (lambda channel, exc: None)
        self._tasks: set[asyncio.Future[Any]] = set()

    def on(self, channel: str, handler: Handler) -> Callable[[], None]:
        """Call ``handler(data)`` for every ``emit(channel, data)``; returns the unsubscribe function."""
        self._handlers.setdefault(channel, []).append(handler)

        def off() -> None:
            handlers = self._handlers.get(channel, [])
            if handler in handlers:
                handlers.remove(handler)

        return off

    def emit(self, channel: str, data: Any = None) -> None:
        """Deliver ``data`` to the handlers of ``channel`` (none: nothing happens)."""
        for handler in list(self._handlers.get(channel, ())):
            try:
                result = handler(data)
            except Exception as exc:  # a handler's bug is reported, never raised into the emitter
                self._on_error(channel, exc)
                continue
            if inspect.isawaitable(result):
                self._schedule(channel, result)

    def _schedule(self, channel: str, awaitable: Any) -> None:
        async def run() -> None:
            try:
                await awaitable
            except Exception as exc:
                self._on_error(channel, exc)

        task = asyncio.ensure_future(run())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


__all__ = ["EventBus"]
