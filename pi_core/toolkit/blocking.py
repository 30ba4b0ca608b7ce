"""Tool work that may block: refuse what would block for ever, and never wait past an abort.

A ``read`` of a named pipe waits for a writer that may never come; a read of ``/dev/zero`` never
ends; a file on a hung network mount blocks in the kernel. Such calls cannot be interrupted from
Python, so the file tools

* refuse anything that is not a regular file (or a directory, where that makes sense) before they
  open it: :func:`check_regular_file`;
* do their file work through :func:`run_blocking`: a thread of its own (a daemon, so it never holds
  the process open at exit), awaited until it finishes *or the abort signal fires* — then the call
  returns at once and the thread's result is dropped. The event loop's shared executor is not used,
  so threads stuck in the kernel can never starve other tools of workers.
"""

from __future__ import annotations

import asyncio
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ..ai.abort import AbortError, AbortSignal

T = TypeVar("T")

_KINDS = {
    stat.S_IFIFO: "a named pipe (FIFO)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


class SpecialFileError(OSError):
    """The path is a pipe, a device or a socket: file tools do not open those (they may block for ever)."""


def special_file_kind(path: Path | str) -> str | None:
    """``"a named pipe (FIFO)"``, ``"a character device"``, ... or ``None`` for a regular file, a
    directory or a missing path (symlinks are followed)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    return _KINDS.get(stat.S_IFMT(mode))


def check_regular_file(path: Path | str, action: str = "read") -> None:
    """Raise :class:`SpecialFileError` when ``path`` is a pipe, a device or a socket.

    :param action: what the tool was going to do ("read", "edit", "write"), for the message.
    """
    kind = special_file_kind(path)
    if kind is not None:
        raise SpecialFileError(f"Cannot {action} {path}: it is {kind}, not a regular file. The file tools only "
                               "handle regular files (a pipe or device could block for ever); use bash with a "
                               "timeout for it instead.")


async def run_blocking(fn: Callable[..., T], /, *args: Any, signal: AbortSignal | None = None,
                       name: str = "tool") -> T:
    """Run ``fn(*args)`` in a thread of its own; return its result, or raise :class:`AbortError` as soon
    as ``signal`` fires (the thread is left to finish on its own and its result is discarded).

    Exceptions raised by ``fn`` propagate. Cancelling the awaiting task also stops waiting at once.
    """
    if signal is not None:
        signal.throw_if_aborted()
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()

    def settle(ok: bool, value: Any) -> None:
        if done.done():
            return  # abandoned: nobody waits for this result any more
        if ok:
            done.set_result(value)
        else:
            done.set_exception(value)

    def work() -> None:
        try:
            outcome: tuple[bool, Any] = (True, fn(*args))
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task
            outcome = (False, exc)
        try:
            loop.call_soon_threadsafe(settle, *outcome)
        except RuntimeError:  # the loop is closed: the program has moved on
            pass

    threading.Thread(target=work, name=f"pi-{name}", daemon=True).start()
    if signal is None:
        return await done
    aborted = asyncio.ensure_future(signal.wait())
    try:
        await asyncio.wait({done, aborted}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        aborted.cancel()
    if done.done():
        return done.result()
    done.cancel()
    raise AbortError(signal.reason or "Operation aborted")


__all__ = ["SpecialFileError", "check_regular_file", "run_blocking", "special_file_kind"]
