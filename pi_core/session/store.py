"""Reading and writing session files: tail repair, one-writer lock, appends (the scan that opens a file
is in :mod:`pi_core.session.scan`).

Writing: one ``write()`` per entry on an ``O_APPEND`` descriptor; the line and its newline go together.
Before each append the file size is checked against what this writer knows, so lines written by
another program are noticed (and merged into the session, see ``SessionManager``) instead of being
interleaved with ours.
"""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import SessionConflictError, SessionError, SessionLockedError
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
        store = RecordStore.of_scan(scan, FileReader.for_scan(path, scan))
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
    """An exclusive lock on ``<session file>.lock`` holding the owner's pid (and start time).

    The operating system drops it when the holder dies, so a crash never leaves a session locked; a
    lock still held after its owner died (a process the owner started kept the descriptor) is taken
    over at once.
    """

    def __init__(self, session_file: Path) -> None:
        self.session_file = session_file
        self.path = lock_path(session_file)
        self._fd: int | None = None

    def acquire(self) -> None:
        for _ in range(10):
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NONBLOCK, 0o644)
            except OSError as exc:  # a directory in its place, no permission, ...
                raise SessionError(f"cannot lock session {self.session_file}: {self.path} cannot be opened "
                                   f"({exc.strerror}); remove or fix it, or continue in a copy with "
                                   f"`pi --fork {self.session_file}`") from None
            if not _try_lock(fd):
                holder = _read_owner(fd)
                os.close(fd)
                if holder is not None and not _alive(*holder):
                    # The owner is gone but something it started still holds the descriptor: the
                    # lock is stale. Take it over with a fresh lock file.
                    log.warning("session %s: taking over the lock of process %s, which has exited",
                                self.session_file, holder[0])
                    self.path.unlink(missing_ok=True)
                    continue
                raise SessionLockedError(self.session_file, holder[0] if holder else None)
            if _same_file(fd, self.path):
                os.ftruncate(fd, 0)
                os.write(fd, _owner_line(os.getpid()).encode())
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


def _start_time(pid: int) -> str | None:
    """When process ``pid`` started (Linux: clock ticks since boot), to tell it from a reused pid."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2:].split()
    return fields[19].decode() if len(fields) > 19 else None


def _owner_line(pid: int) -> str:
    start = _start_time(pid)
    return f"{pid} {start}\n" if start else f"{pid}\n"


def _parse_owner(text: str) -> tuple[int, str | None] | None:
    parts = text.split()
    if not parts or not parts[0].isdigit():
        return None
    return int(parts[0]), parts[1] if len(parts) > 1 else None


def _read_owner(fd: int) -> tuple[int, str | None] | None:
    try:
        text = os.pread(fd, 64, 0).decode("ascii", "replace")
    except (OSError, AttributeError):
        return None
    return _parse_owner(text)


def _alive(pid: int, start: str | None) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    now = _start_time(pid)
    return start is None or now is None or now == start


def holder_pid(session_file: Path) -> int | None:
    """The pid recorded by the process holding ``session_file`` open for writing, if any."""
    try:
        owner = _parse_owner(lock_path(session_file).read_text("ascii"))
    except (OSError, UnicodeDecodeError):
        return None
    return owner[0] if owner else None


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
        fd = os.open(path, os.O_RDWR | os.O_APPEND)
        return cls(path, fd, size, fsync)

    @classmethod
    def create(cls, path: Path, data: bytes, fsync: bool = False) -> Appender:
        """Create ``path`` (it must not exist) holding ``data``."""
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o644)
        appender = cls(path, fd, 0, fsync)
        try:
            appender.append(data)
        except BaseException:
            appender.close()
            path.unlink(missing_ok=True)
            raise
        return appender

    def current_size(self) -> int:
        """The file's size now. A file replaced by a copy that starts with everything this writer knows
        (``cp`` + ``mv``, an editor or a sync tool saving it) is followed: appends go to the new one.
        Raises :class:`SessionConflictError` if it shrank, was removed, or was replaced by something
        else (continuing would write after something we never saw)."""
        mine = os.fstat(self._fd)
        try:
            on_disk = os.stat(self.path)
        except FileNotFoundError:
            raise SessionConflictError(self.path, self.size, -1, "removed") from None
        if (mine.st_dev, mine.st_ino) != (on_disk.st_dev, on_disk.st_ino):
            if not self._follow_replacement():
                raise SessionConflictError(self.path, self.size, on_disk.st_size, "replaced")
            mine = os.fstat(self._fd)
        if mine.st_size < self.size:
            raise SessionConflictError(self.path, self.size, mine.st_size, "truncated")
        return mine.st_size

    def _follow_replacement(self) -> bool:
        """Append to the file now at ``path`` if its first ``size`` bytes are those of ours."""
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND)
        except OSError:
            return False
        try:
            same = os.fstat(fd).st_size >= self.size and _same_bytes(self._fd, fd, self.size)
        except OSError:
            same = False
        if not same:
            os.close(fd)
            return False
        log.warning("session %s was replaced by a copy of itself (another program saved it); pi goes on "
                    "appending to the new file", self.path)
        os.close(self._fd)
        self._fd = fd
        return True

    def read_from(self, start: int, end: int) -> bytes:
        """Bytes ``start``..``end`` of the file (what another program appended)."""
        with open(self.path, "rb") as handle:
            handle.seek(start)
            return handle.read(end - start)

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


def _same_bytes(a: int, b: int, size: int) -> bool:
    """Whether the first ``size`` bytes of the files open as ``a`` and ``b`` are the same."""
    offset, block = 0, 1 << 20
    while offset < size:
        length = min(block, size - offset)
        if os.pread(a, length, offset) != os.pread(b, length, offset):
            return False
        offset += length
    return True


def backup_file(path: Path) -> Path:
    """Copy ``path`` to ``<file>.bak-<time>`` (not ``.jsonl``: listings never show it) before it is rewritten."""
    backup = path.with_name(f"{path.name}.bak-{file_timestamp(iso_now())}")
    n = 1
    while backup.exists():
        backup = path.with_name(f"{path.name}.bak-{file_timestamp(iso_now())}-{n}")
        n += 1
    with open(path, "rb") as source, open(backup, "xb") as out:
        while block := source.read(1 << 20):
            out.write(block)
        out.flush()
        os.fsync(out.fileno())
    return backup


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
    "backup_file",
    "holder_pid",
    "lock_path",
    "read_session_file",
    "repair_tail",
    "rewrite_file",
]
