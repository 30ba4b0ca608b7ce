"""The lock pi puts on ``auth.json``, so that both programs can write the file without losing entries.

pi (through the ``proper-lockfile`` package) locks a file by creating the directory ``<file>.lock`` and
keeps the lock alive by touching that directory; a lock directory older than the stale limit belongs to
a process that died and may be taken over. Using the same directory makes a Python pi and a TypeScript
pi exclude each other. The lock guards the real file: a symlinked ``auth.json`` and its target share it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

#: Seconds after which an untouched lock directory is considered abandoned (pi uses 30 s).
STALE_SECONDS = 30.0
#: How long to wait for another holder before giving up.
WAIT_SECONDS = 30.0
#: How often a holder refreshes the lock directory's time.
TOUCH_SECONDS = STALE_SECONDS / 3


class LockTimeout(TimeoutError):
    """Another process held the lock for longer than :data:`WAIT_SECONDS`."""


def lock_path(path: Path) -> Path:
    real = Path(os.path.realpath(path))
    return real.with_name(real.name + ".lock")


def _try_acquire(lock: Path) -> bool:
    try:
        lock.mkdir()
        return True
    except FileExistsError:
        pass
    try:
        age = time.time() - lock.stat().st_mtime
    except FileNotFoundError:
        return False  # released meanwhile: try again at once
    if age > STALE_SECONDS:
        with contextlib.suppress(OSError):
            lock.rmdir()
    return False


def _release(lock: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        lock.rmdir()


def _delay(attempt: int) -> float:
    return min(0.01 * 2 ** attempt, 1.0) * (1 + random.random())


class _Toucher(threading.Thread):
    """Keeps the lock directory fresh while it is held (a refresh can take several seconds)."""

    def __init__(self, lock: Path) -> None:
        super().__init__(daemon=True, name="pi-auth-lock")
        self.lock = lock
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(TOUCH_SECONDS):
            with contextlib.suppress(OSError):
                os.utime(self.lock)


@contextlib.contextmanager
def locked(path: Path, *, wait: float = WAIT_SECONDS) -> Iterator[None]:
    """Hold the lock of ``path`` (blocking)."""
    lock = lock_path(path)
    deadline = time.monotonic() + wait
    attempt = 0
    while not _try_acquire(lock):
        if time.monotonic() > deadline:
            raise LockTimeout(f"{path} is locked by another process ({lock} exists)")
        time.sleep(_delay(attempt))
        attempt += 1
    toucher = _Toucher(lock)
    toucher.start()
    try:
        yield
    finally:
        toucher.stopped.set()
        _release(lock)


@contextlib.asynccontextmanager
async def locked_async(path: Path, *, wait: float = WAIT_SECONDS) -> AsyncIterator[None]:
    """Hold the lock of ``path`` without blocking the event loop while waiting for it."""
    lock = lock_path(path)
    deadline = time.monotonic() + wait
    attempt = 0
    while not _try_acquire(lock):
        if time.monotonic() > deadline:
            raise LockTimeout(f"{path} is locked by another process ({lock} exists)")
        await asyncio.sleep(_delay(attempt))
        attempt += 1
    toucher = _Toucher(lock)
    toucher.start()
    try:
        yield
    finally:
        toucher.stopped.set()
        _release(lock)


__all__ = ["LockTimeout", "STALE_SECONDS", "lock_path", "locked", "locked_async"]
