"""Serialising changes to one file while tools run in parallel, and writing files safely.

Tools that modify files (write, edit, or a plugin's own) wrap their read-modify-write in
``async with file_mutation_lock(path):``. Calls on the same file (after resolving symlinks) run one
after another; calls on different files still run in parallel.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path


@dataclass
class _Entry:
    lock: asyncio.Lock
    users: int = 0


_locks: dict[tuple[int, str], _Entry] = {}


def mutation_key(path: Path | str) -> str:
    """The identity of a file for locking: its real path (the absolute path if it does not exist)."""
    return os.path.realpath(os.path.abspath(path))


@contextlib.asynccontextmanager
async def file_mutation_lock(*paths: Path | str) -> AsyncIterator[None]:
    """Hold the mutation lock of every path given (taken in a fixed order, so no deadlock)."""
    loop_id = id(asyncio.get_running_loop())
    keys = sorted({mutation_key(p) for p in paths})
    entries = []
    for key in keys:
        entry = _locks.setdefault((loop_id, key), _Entry(asyncio.Lock()))
        entry.users += 1
        entries.append((key, entry))
    acquired: list[_Entry] = []
    try:
        for _, entry in entries:
            await entry.lock.acquire()
            acquired.append(entry)
        yield
    finally:
        for entry in reversed(acquired):
            entry.lock.release()
        for key, entry in entries:
            entry.users -= 1
            if entry.users == 0:
                _locks.pop((loop_id, key), None)


def atomic_write(path: Path, data: bytes) -> None:
    """Replace ``path``'s contents with ``data`` so that a crash leaves the old or the new file.

    Writes a temporary file beside the real target (symlinks are followed, not replaced), keeps the
    old file's permission bits, then renames it over the target. Where no temporary file can be made
    (a read-only directory holding a writable file) it writes in place instead.
    """
    target = Path(os.path.realpath(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".pi-tmp", dir=target.parent)
    except OSError:
        target.write_bytes(data)
        return
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        if mode is not None:
            os.chmod(tmp, mode)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


__all__ = ["atomic_write", "file_mutation_lock", "mutation_key"]
