"""Reading and writing session files: fast tolerant load, tail repair, one-writer lock, appends.

Loading parses the file in chunks of about 256 KiB, each chunk as one JSON array (so object keys are
shared within the chunk and the decoder runs once per chunk), with the cyclic garbage collector paused
(it would otherwise rescan the growing heap many times). A chunk that does not parse that way —
a malformed line, a blank line — is parsed again line by line, and every line that is not a JSON object
is reported in :attr:`LoadResult.diagnostics` and skipped (it stays in the file).

Writing: one ``write()`` per entry on an ``O_APPEND`` descriptor; the line and its newline go together.
Before each append the file size is checked against what this writer knows, so lines written by
another program are noticed instead of being interleaved with ours.
"""

from __future__ import annotations

import gc
import logging
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import SessionConflictError, SessionLockedError
from .ids import file_timestamp, iso_now
from .jsonfmt import loads, loads_many

log = logging.getLogger("pi_core.session")

_CHUNK = 256 * 1024
# Short string values repeated in nearly every entry; sharing one object per value keeps a large
# session's memory close to its file size.
_SHARED_MESSAGE_KEYS = ("role", "api", "provider", "model", "stopReason", "rawStopReason",
                        "thinkingLevel", "toolName")


@dataclass
class Diagnostic:
    """Something the loader noticed and handled: a skipped line, a repaired tail."""

    kind: str
    """``malformed_line``, ``missing_newline``, ``torn_tail`` or ``invalid_header``."""
    message: str
    line: int | None = None
    """1-based line number in the file, where the problem is one line."""
    offset: int | None = None
    """Byte offset of that line."""
    sidecar: Path | None = None
    """Where a removed fragment was saved."""


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


def _share_values(records: list[Any], shared: dict[str, str]) -> None:
    keep = shared.setdefault
    for record in records:
        kind = record.get("type")
        if kind.__class__ is str:
            record["type"] = keep(kind, kind)
        message = record.get("message")
        if message.__class__ is not dict:
            continue
        for key in _SHARED_MESSAGE_KEYS:
            value = message.get(key)
            if value.__class__ is str:
                message[key] = keep(value, value)
        content = message.get("content")
        if content.__class__ is list:
            for block in content:
                if block.__class__ is dict:
                    value = block.get("type")
                    if value.__class__ is str:
                        block["type"] = keep(value, value)


class _Parser:
    def __init__(self, result: LoadResult) -> None:
        self.result = result
        self.shared: dict[str, str] = {}

    def chunk(self, data: bytes, offset: int, line: int) -> None:
        """Parse ``data`` (whole lines, ending in a newline) that starts at ``offset`` / ``line``."""
        lines = data.count(b"\n")
        try:
            text = data.decode("utf-8")
            parsed = loads_many("[" + text[:-1].replace("\n", ",") + "]")
        except ValueError:
            parsed = None
        if parsed is not None and len(parsed) == lines and all(r.__class__ is dict for r in parsed):
            _share_values(parsed, self.shared)
            self.result.records.extend(parsed)
            return
        self._by_line(data, offset, line)

    def _by_line(self, data: bytes, offset: int, line: int) -> None:
        for raw in data.split(b"\n")[:-1]:
            line += 1
            record = self.one(raw, line, offset)
            if record is not None:
                self.result.records.append(record)
            offset += len(raw) + 1

    def one(self, raw: bytes, line: int, offset: int) -> dict[str, Any] | None:
        if not raw.strip():
            return None
        try:
            record = loads(raw)
        except ValueError as exc:
            self._skip(line, offset, f"not valid JSON ({exc})")
            return None
        if record.__class__ is not dict:
            self._skip(line, offset, "not a JSON object")
            return None
        return record

    def _skip(self, line: int, offset: int, why: str) -> None:
        self.result.diagnostics.append(
            Diagnostic("malformed_line", f"line {line} skipped: {why}", line=line, offset=offset)
        )


def read_session_file(path: Path) -> LoadResult:
    """Parse a session file without changing it. A missing file reads as empty."""
    result = LoadResult()
    try:
        handle = open(path, "rb")
    except FileNotFoundError:
        return result
    parser = _Parser(result)
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        with handle:
            offset, line = _read_chunks(handle, parser)
    finally:
        if gc_was_enabled:
            gc.enable()
    result.tail_offset = offset
    result.size = offset + len(result.tail)
    _classify_tail(result, parser, line + 1)
    return result


def _read_chunks(handle: Any, parser: _Parser) -> tuple[int, int]:
    pending: list[bytes] = []
    offset = line = 0
    while block := handle.read(_CHUNK):
        cut = block.rfind(b"\n") + 1
        if cut == 0:
            pending.append(block)  # a line longer than a chunk; join once it ends
            continue
        data = b"".join([*pending, block[:cut]]) if pending else block[:cut]
        parser.chunk(data, offset, line)
        offset += len(data)
        line += data.count(b"\n")
        pending = [block[cut:]] if cut < len(block) else []
    parser.result.tail = b"".join(pending)
    return offset, line


def _classify_tail(result: LoadResult, parser: _Parser, line: int) -> None:
    tail = result.tail
    if not tail:
        return
    if not tail.strip():
        result.tail_parsed = True  # whitespace only: harmless, just needs its newline
        return
    try:
        record = loads(tail)
    except ValueError:
        record = None
    if record.__class__ is dict:
        result.records.append(record)
        result.tail_parsed = True
        result.diagnostics.append(Diagnostic(
            "missing_newline", f"line {line} had no final newline", line=line,
            offset=result.tail_offset))
        return
    result.diagnostics.append(Diagnostic(
        "torn_tail",
        f"line {line} is incomplete ({len(tail)} bytes, probably a write cut short by a crash) "
        "and was ignored", line=line, offset=result.tail_offset))


def repair_tail(path: Path, result: LoadResult) -> Diagnostic | None:
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
