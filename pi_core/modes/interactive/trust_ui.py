"""``ctx.ui`` for ``project_trust`` handlers in the terminal.

The trust question is settled while plugins load, before the terminal interface (and its keyboard handling)
exists, so these dialogs are asked line by line: the question on stderr, the answer from the next line of
stdin — the way pi's own trust question is asked there.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

from pi_core import UI
from pi_core.ai.abort import unless_aborted

from .dialogs import LineDialogs

if TYPE_CHECKING:
    from pi_core.ai.abort import AbortSignal

T = TypeVar("T")


def _write(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


async def _read_line() -> str | None:
    try:
        return await asyncio.to_thread(input)
    except (EOFError, KeyboardInterrupt):
        return None


class TrustPromptUI(UI):
    """Dialogs and notices before the terminal interface starts; ``has_ui`` is true."""

    has_ui = True

    def __init__(self, write: Callable[[str], None] = _write,
                 read_line: Callable[[], Awaitable[str | None]] = _read_line) -> None:
        self._write = write
        self._dialogs = LineDialogs(write, read_line)

    async def notify(self, message: str, level: str = "info") -> None:
        self._write(f"pi: {message}" if level == "info" else f"pi: {level}: {message}")

    async def select(self, title: str, options: Sequence[str], *, timeout: float | None = None,
                     signal: AbortSignal | None = None) -> str | None:
        choices = list(options)
        index = await _bounded(self._dialogs.select(title, choices), timeout, signal) if choices else None
        return None if index is None else choices[index]

    async def confirm(self, title: str, message: str = "", *, timeout: float | None = None,
                      signal: AbortSignal | None = None) -> bool:
        heading = f"{title} — {message}" if message else title
        return await _bounded(self._dialogs.select(heading, ["Yes", "No"]), timeout, signal) == 0

    async def input(self, title: str, placeholder: str = "", *, timeout: float | None = None,
                    signal: AbortSignal | None = None) -> str | None:
        return await _bounded(self._dialogs.input(title, placeholder), timeout, signal)


async def _bounded(asking: Awaitable[T], timeout: float | None, signal: AbortSignal | None) -> T | None:
    try:
        return await unless_aborted(asking if timeout is None else asyncio.wait_for(asking, timeout), signal)
    except asyncio.TimeoutError:
        return None


__all__ = ["TrustPromptUI"]
