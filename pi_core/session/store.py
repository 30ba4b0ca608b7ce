"""Reading and writing session files: tail repair, one-writer lock, appends (the scan that opens a file
is in :mod:`pi_core.session.scan`).

Writing: one ``write()`` per entry on an ``O_APPEND`` descriptor; the line and its newline go together.
Before each append the file size is checked against what this writer knows, so lines written by
another program are noticed instead of being interleaved with ours.
"""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import SessionConflictError, SessionLockedError
from .ids import file_timestamp, iso_now
from .scan import Diagnostic, FileReader, RecordStore, Scan, scan_session_file

log = logging.getLogger("pi_core.session")

SessionDiagnostic = Diagnostic


@dataclass
class LoadResult:
    """What a session file holds: its parsed records and the state of its last line."""

    records: list[dict[str, Any]] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    size: int = 0
    """Size of the file in bytes when it was read."""
    tail_offset: int = 0
    """Byte offset where the last line without a newline starts (== size when there is none)."""
    tail: bytes = b""
    """That last line's bytes, if it did not end in a newline."""
    tail_parsed: bool = False
    """True if the unterminated last line is a complete record (it is then in ``records``)."""


def read_session_file(path: Path) -> LoadResult:
    """Parse a whole session file without changing it (every record a dict). A missing file reads as
    empty. Opening a session does not need this: it scans the file and reads entries on demand."""
    scan = scan_session_file(path)
    result = LoadResult(diagnostics=scan.diagnostics, size=scan.size, tail_offset=scan.tail_offset,
                        tail=scan.tail, tail_parsed=scan.tail_parsed)
    if scan.header is not None:
        result.records.append(scan.header)
    if len(scan):
        store = RecordStore.of_scan(scan, FileReader(path))
        try:
            result.records.extend(store)
        finally:
            store.close()
    return result


def repair_tail(path: Path, result: LoadResult | Scan) -> Diagnostic | None:
    """Make the file end in a newline after its last complete record.

    A last line without a newline that is a complete record gets its newline (as pi 1.x does). One
    that is not (a write torn by a crash) is saved to ``<file>.torn-<time>`` and cut off, so the next
    append starts on a fresh line and nothing before it is touched. Call with the writer lock held.
    """
    if not result.tail:
        return None
    if result.tail_parsed:
        with open(path, "ab") as handle:
            handle.write(b"\n")
        result.size += 1
        return None
    sidecar = path.with_name(f"{path.name}.torn-{file_timestamp(iso_now())}")
    sidecar.write_bytes(result.tail)
    with open(path, "r+b") as handle:
        handle.truncate(result.tail_offset)
    result.size, result.tail = result.tail_offset, b""
    diagnostic = next(d for d in result.diagnostics if d.kind == "torn_tail")
    diagnostic.message = diagnostic.message.replace("was ignored", f"was moved to {sidecar.name}")
    diagnostic.sidecar = sidecar
    log.warning("session %s: %s", path, diagnostic.message)
    return diagnostic


# ---------------------------------------------------------------------------------------------
# the writer lock

if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True


def lock_path(session_file: Path) -> Path:
    return session_file.with_name(session_file.name + ".lock")


class WriterLock:
    """An exclusive lock on ``<session file>.lock`` holding the owner's pid.

    The operating system drops it when the holder dies, so a crash never leaves a session locked.
    """

    def __init__(self, session_file: Path) -> None:
        self.session_file = session_file
        self.path = lock_path(session_file)
        self._fd: int | None = None

    def acquire(self) -> None:
        for _ in range(10):
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            if not _try_lock(fd):
                holder = _read_pid(fd)
                os.close(fd)
                raise SessionLockedError(self.session_file, holder)
            if _same_file(fd, self.path):
                os.ftruncate(fd, 0)
                os.write(fd, f"{os.getpid()}\n".encode())
                self._fd = fd
                return
            os.close(fd)  # the previous holder removed the lock file meanwhile; take the new one
        raise SessionLockedError(self.session_file, None)

    def release(self) -> None:
        if self._fd is None:
            return
        try:
            self.path.unlink()
        except OSError:
            pass
        os.close(self._fd)
        self._fd = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def __del__(self) -> None:  # a manager dropped without close() must not keep the lock
        self.release()


def _same_file(fd: int, path: Path) -> bool:
    try:
        on_disk = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (mine.st_dev, mine.st_ino) == (on_disk.st_dev, on_disk.st_ino)


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except (OSError, AttributeError):
        return None
    return int(text) if text.isdigit() else None


def holder_pid(session_file: Path) -> int | None:
    """The pid recorded by the process holding ``session_file`` open for writing, if any."""
    try:
        text = lock_path(session_file).read_text("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() else None


# ---------------------------------------------------------------------------------------------
# appending


class Appender:
    """Appends whole lines to a session file, one ``write()`` each, checking nobody else wrote."""

    def __init__(self, path: Path, fd: int, size: int, fsync: bool = False) -> None:
        self.path = path
        self._fd = fd
        self.size = size
        self.fsync = fsync

    @classmethod
    def open_existing(cls, path: Path, size: int, fsync: bool = False) -> Appender:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        return cls(path, fd, size, fsync)

    @classmethod
    def create(cls, path: Path, data: bytes, fsync: bool = False) -> Appender:
        """Create ``path`` (it must not exist) holding ``data``."""
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o644)
        appender = cls(path, fd, 0, fsync)
        try:
            appender.append(data)
        except BaseException:
            appender.close()
            path.unlink(missing_ok=True)
            raise
        return appender

    def append(self, data: bytes) -> None:
        actual = os.fstat(self._fd).st_size
        if actual != self.size:
            raise SessionConflictError(self.path, self.size, actual)
        try:
            written = os.write(self._fd, data)
            while written < len(data):  # only on a full disk or a signal; finish the line
                written += os.write(self._fd, data[written:])
            if self.fsync:
                os.fsync(self._fd)
        except BaseException:
            os.ftruncate(self._fd, self.size)  # never leave half a line behind
            raise
        self.size += len(data)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __del__(self) -> None:
        self.close()


def rewrite_file(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically (write a temporary file, then rename it)."""
    temp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(temp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temp, path)


__all__ = [
    "Appender",
    "Diagnostic",
    "LoadResult",
    "SessionDiagnostic",
    "WriterLock",
    "holder_pid",
    "lock_path",
    "read_session_file",
    "repair_tail",
    "rewrite_file",
]
