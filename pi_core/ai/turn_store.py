"""Converted turns kept on disk, so the next process on the same session converts only what is new.

:class:`~pi_core.ai.wire.TurnCache` keeps a conversation's converted turns between the requests of one
process. A user who resumes a long session (``pi -c``, ``pi --session FILE -p ...`` run again and
again) starts a new process every time, and its first request would convert every stored message
again: seconds on a session of 100,000 entries. This store keeps the converted turns of conversations
read from a big session file in ``<agent dir>/cache/wire/``, one file per session file, model and
converting code.

Why reuse is safe: a stored message is read from exactly the bytes of one line of the session file
(:meth:`~pi_core.ai.DeferredMessage.spans_of`), and a turn's conversion depends only on its messages,
the model and the converting code. Each saved turn records where its messages' lines are and a CRC-32
of the session file from its start to the end of the turn's last line; saved turns are reused only
while the conversation holds messages read from the same places, turn by turn, and the file (read
through the very descriptor the messages are read from) still starts with bytes of that CRC; the part
of the file its derived index checked when the session was opened is not read again (the reader's
``checkpoints``). A file edited, repaired or replaced stops the reuse at the first turn it touches.
Anything wrong with the store itself is a cache miss.

The file: ``MAGIC``, then blocks, one per save, each holding its turns as columns (so that a hundred
thousand turns load and compare at C speed): ``_BLOCK`` (turns, messages), seven ``int64`` columns
(``COLUMNS``), the ``(offset, length)`` of every message's line, the turns' encoded items one after
the other. A writer appends a block under an exclusive ``flock`` (or rewrites the file when reuse
stopped inside it); a reader ignores a block that runs past the end of the file.
"""

from __future__ import annotations

import bisect
import hashlib
import os
import struct
import sys
import threading
import weakref
import zlib
from array import array
from collections.abc import Iterator
from itertools import accumulate, chain
from pathlib import Path
from typing import Any

MAGIC = b"PITURNS3"
_BLOCK = struct.Struct("<QQ")
COLUMNS = ("end", "crc", "size", "count", "consumed", "offset", "messages")
MIN_SOURCE = 4 << 20
"""Session files smaller than this convert fast enough; their turns are not stored."""
LIMIT = 1 << 30
"""Bytes the store may hold; the files used least recently go first."""
_MAX_BLOCKS = 64
"""A file of more blocks is rewritten as one."""
_CHUNK = 4 << 20


def _column(data: Any = b"") -> array:
    out = array("q")
    out.frombytes(data)
    if sys.byteorder != "little":  # pragma: no cover - stored little-endian
        out.byteswap()
    return out


def _stored(values: array) -> bytes:
    if sys.byteorder != "little":  # pragma: no cover - stored little-endian
        values = array("q", values)
        values.byteswap()
    return values.tobytes()


class Turns:
    """Stored turns, as columns: ``end[t]``, ``crc[t]`` (of the session file up to ``end[t]``),
    ``size[t]`` (bytes of encoded items), ``count[t]`` (items), ``consumed[t]``, ``offset[t]`` (the
    converter's offset argument), ``messages[t]``;
    ``spans``: the ``(offset, length)`` of every message, turn after turn; the encoded items."""

    def __init__(self) -> None:
        self.end, self.crc, self.size = array("q"), array("q"), array("q")
        self.count, self.consumed, self.offset, self.messages = array("q"), array("q"), array("q"), array("q")
        self.spans = array("q")
        self.parts: list[Any] = []
        self.blocks = 0
        self.file_end = 0
        """Where the last complete block ends in the file it was loaded from."""

    def __len__(self) -> int:
        return len(self.end)

    def head(self, count: int) -> Turns:
        """The first ``count`` turns."""
        out = Turns()
        for name in COLUMNS:
            setattr(out, name, getattr(self, name)[:count])
        out.spans = self.spans[:2 * sum(self.messages[:count])]
        out.parts = self.parts[:count]
        return out

    def extend(self, end: list[int], crc: list[int], parts: list[Any], count: list[int], consumed: list[int],
               offset: list[int], messages: list[int], spans: array) -> None:
        """Turns added after these, column by column (``messages``: how many each holds; ``spans``: their
        messages' ``(offset, length)``, flat)."""
        self.end.extend(end)
        self.crc.extend(crc)
        self.size.extend(map(len, parts))
        self.count.extend(count)
        self.consumed.extend(consumed)
        self.offset.extend(offset)
        self.messages.extend(messages)
        self.spans.extend(spans)
        self.parts.extend(parts)

    def block(self, start: int = 0) -> Iterator[bytes]:
        """Turns ``start:`` as one block, in pieces of a few megabytes (a block may hold tens of them)."""
        first = sum(self.messages[:start])
        columns = [_stored(getattr(self, name)[start:]) for name in COLUMNS]
        yield b"".join([_BLOCK.pack(len(self) - start, len(self.spans) // 2 - first), *columns,
                        _stored(self.spans[2 * first:])])
        pending: list[Any] = []
        size = 0
        for part in self.parts[start:]:
            pending.append(part)
            size += len(part)
            if size >= _CHUNK:
                yield b"".join(pending)
                pending, size = [], 0
        if pending:
            yield b"".join(pending)


class TurnStore:
    """The folder of stored turns (``None`` folder: nothing is stored)."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder

    def file_for(self, source: Any, key: str, code: str) -> Path | None:
        if self.folder is None or not hasattr(source, "path"):
            return None
        name = hashlib.sha1("\0".join((os.path.abspath(source.path), key, code)).encode()).hexdigest()[:32]
        return self.folder / f"{source_tag(source.path)}-{name}.turns"

    def has_turns_for(self, path: Any) -> bool:
        """Whether turns read from session file ``path`` are stored (for any model)."""
        return self.folder is not None and any(self.folder.glob(f"{source_tag(path)}-*.turns"))

    def load(self, file: Path) -> Turns:
        """The complete blocks of ``file`` (no turns when it is missing or not a store file)."""
        flush()
        turns = Turns()
        try:
            data = _read_written(file)
        except OSError:
            return turns
        if not data.startswith(MAGIC):
            return turns
        try:
            os.utime(file)  # used: the last to be evicted
        except OSError:
            pass
        view = memoryview(data)  # the turns' items are slices of it, not copies
        pos, size = len(MAGIC), len(data)
        while pos + _BLOCK.size <= size:
            count, messages = _BLOCK.unpack_from(data, pos)
            at = pos + _BLOCK.size
            columns_end = at + 8 * count * len(COLUMNS)
            spans_end = columns_end + 16 * messages
            if spans_end > size:
                break
            columns = [_column(view[at + 8 * count * n:at + 8 * count * (n + 1)]) for n in range(len(COLUMNS))]
            sizes = columns[COLUMNS.index("size")]
            block_end = spans_end + sum(sizes)
            if block_end > size or sum(columns[COLUMNS.index("messages")]) != messages:
                break
            for name, column in zip(COLUMNS, columns):
                getattr(turns, name).extend(column)
            turns.spans.extend(_column(view[columns_end:spans_end]))
            bounds = list(accumulate(sizes, initial=spans_end))
            turns.parts += [view[lo:hi] for lo, hi in zip(bounds, bounds[1:])]
            turns.blocks += 1
            pos = block_end
        turns.file_end = pos
        return turns

    def save(self, file: Path, turns: Turns, kept: int, loaded: Turns) -> None:
        """Write ``turns`` (its first ``kept`` are ``loaded``'s first ``kept``, already in ``file``):
        appended as a block when ``file`` holds exactly those, else the file is written anew.
        Best effort: a store that cannot be written is only a cache that misses."""
        if os.name == "nt":  # pragma: no cover - no flock: nothing is stored
            return
        append = kept == len(loaded) and 0 < kept and loaded.blocks < _MAX_BLOCKS
        fd = _held.pop(file, None)  # locked before the process that converted the turns exited
        if fd is None:
            fd = _lock(file)
        if fd is None:
            return
        try:
            if append and os.fstat(fd).st_size >= loaded.file_end and os.pread(fd, len(MAGIC), 0) == MAGIC:
                at, pieces = loaded.file_end, turns.block(kept)
            else:
                at, pieces = 0, chain([MAGIC], turns.block())
            os.ftruncate(fd, at)
            for piece in pieces:
                with memoryview(piece) as view:
                    done = 0
                    while done < len(view):  # a write may take less than it is given
                        done += os.pwrite(fd, view[done:], at + done)
                at += done
        except OSError:
            pass
        finally:
            os.close(fd)
        self._evict(keep=file)

    def _evict(self, keep: Path) -> None:
        try:
            files = [(f.stat(), f) for f in self.folder.glob("*.turns")] if self.folder is not None else []
        except OSError:
            return
        total = sum(st.st_size for st, _ in files)
        for st, f in sorted(files, key=lambda pair: pair[0].st_mtime):
            if total <= LIMIT:
                break
            if f != keep:
                f.unlink(missing_ok=True)
                total -= st.st_size


_pending: list[threading.Thread] = []
_deferred: list[tuple[Any, tuple[Any, ...], Path | None, tuple[int, ...]]] = []
_held: dict[Path, int] = {}  # store files locked by this process for a save it runs, by path
_defer = False


def source_tag(path: Any) -> str:
    """The start of the name of every file of turns read from session file ``path``."""
    return hashlib.sha1(os.fsencode(os.path.realpath(path))).hexdigest()[:12]


def in_background(work: Any, *args: Any, lock: Path | None = None, keep: tuple[int, ...] = ()) -> None:
    """Run ``work(*args)`` in a thread of its own: storing turns reads the session file and writes
    tens of megabytes, which can happen while the request is sent and answered. Not a daemon: the
    interpreter waits for it at exit (a process killed before leaves a torn block, which is a miss).

    After :func:`defer_to_exit` the work waits for the process's exit instead, and runs in a detached
    process then; ``lock``: the store file it writes (locked from before this process exits until
    the work is done, so a later reader waits for it), ``keep``: descriptors the work reads."""
    if _defer:
        if not _deferred:
            import atexit

            atexit.register(_run_deferred)
        _deferred.append((work, args, lock, keep))
        return
    thread = threading.Thread(target=work, args=args, name="pi-turn-store")
    _pending.append(thread)
    thread.start()


def defer_to_exit() -> None:
    """This process ends soon after its answer (``pi -p``, ``--mode json``): store turns after it,
    from a detached process, instead of beside the request (where saving takes a core, and the
    exit waits for it)."""
    global _defer
    _defer = True


def _run_deferred() -> None:
    """At exit: the deferred work, in a detached child holding the store locks (taken here, before
    this process is gone), or right here where there is no ``fork``."""
    works = list(_deferred)
    _deferred.clear()
    if not hasattr(os, "fork") or not hasattr(os, "setsid"):  # pragma: no cover - Windows
        for work, args, _, _ in works:
            work(*args)
        return
    locks = {lock: fd for lock in {w[2] for w in works if w[2] is not None} if (fd := _lock(lock)) is not None}
    ready, tell = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        pid = -1
    if pid == 0:
        os.close(ready)
        _detached(works, locks, tell)
    os.close(tell)
    for fd in locks.values():  # the child holds them now (or, if it could not start, nobody)
        os.close(fd)
    if pid > 0:  # exit once the child has let go of the rest (a session's writer lock among them)
        import select

        select.select([ready], [], [], 2.0)
    os.close(ready)
    if pid < 0:
        for work, args, _, _ in works:
            work(*args)


def _detached(works: list[Any], locks: dict[Path, int], tell: int) -> None:
    """The child: nothing of the parent's but what the works need (a session lock must not outlive
    the parent), no terminal, and never the parent's exit handlers; ``tell`` is closed once that holds."""
    code = 1
    try:
        os.setsid()
        keep = {fd for w in works for fd in w[3]} | set(locks.values()) | {tell}
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        for fd in sorted(set(range(3, _max_fd())) - keep):
            try:
                os.close(fd)
            except OSError:
                pass
        os.close(tell)
        _held.update(locks)
        for work, args, _, _ in works:
            work(*args)
        code = 0
    finally:
        os._exit(code)


def _max_fd() -> int:
    try:
        return max(int(name) for name in os.listdir("/proc/self/fd")) + 1
    except (OSError, ValueError):
        return os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 1024


def _lock(file: Path) -> int | None:
    """``file`` (created if missing) opened and locked for writing; ``None`` when it cannot be."""
    import fcntl

    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(file, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError:
        os.close(fd)
        return None
    return fd


#: How long a reader waits for another process to finish writing a store file before it reads what is
#: there (a block still being written is ignored: a miss).
WRITER_WAIT = 10.0


def _read_written(file: Path) -> bytes:
    """``file``'s bytes once no process is writing it (see :func:`in_background`)."""
    fd = os.open(file, os.O_RDONLY)
    try:
        if os.name != "nt":
            import fcntl
            import time

            deadline = time.monotonic() + WRITER_WAIT
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        break
                    time.sleep(0.005)
        with open(fd, "rb", closefd=False) as handle:
            return handle.read()
    finally:
        os.close(fd)


def flush() -> None:
    """Wait for the turns being stored by this process (deferred ones are stored now)."""
    while _pending:
        _pending.pop().join()
    while _deferred:
        work, args, _, _ = _deferred.pop(0)
        work(*args)


def source_size(source: Any) -> int:
    """The size of the file behind ``source`` (0 when unknown)."""
    try:
        return os.fstat(source.fileno()).st_size
    except (OSError, AttributeError, TypeError, ValueError):
        return 0


class OwnReader:
    """A descriptor of its own on the file ``source`` reads (the same open file), so that storing turns
    in the background goes on reading the very bytes the messages were read from after the session has
    closed its reader (``pi -p`` closes it as soon as the answer is in)."""

    def __init__(self, source: Any) -> None:
        self.path = source.path
        self.checkpoints = getattr(source, "checkpoints", [])
        self._fd = os.dup(source.fileno())
        self._finalizer = weakref.finalize(self, os.close, self._fd)

    def fileno(self) -> int:
        return self._fd

    def read(self, offset: int, length: int) -> bytes:
        return os.pread(self._fd, length, offset)

    def close(self) -> None:
        self._finalizer()


class PrefixCrc:
    """The CRC-32 of ``source`` from its start to a position that only moves forward, read in big
    blocks (turns end a few kilobytes apart)."""

    def __init__(self, source: Any) -> None:
        self.source = source
        self.crc, self.pos = 0, 0
        self._block, self._block_at = b"", 0

    def advance(self, end: int) -> int | None:
        """The CRC of bytes ``0:end`` (``end`` at or after the last position; ``None`` if the file
        has fewer bytes)."""
        crc, pos = self.crc, self.pos
        checkpoints = getattr(self.source, "checkpoints", None)
        if checkpoints:  # the file was checked up to there when it was opened: go on from the last
            at = bisect.bisect_right(checkpoints, (end, 1 << 32)) - 1
            if at >= 0 and checkpoints[at][0] > pos:
                pos, crc = checkpoints[at]
        while pos < end:
            block, at = self._block, self._block_at
            if not at <= pos < at + len(block):
                try:
                    block = self.source.read(pos, _CHUNK)
                except OSError:
                    return None
                if not block:
                    return None
                self._block, self._block_at, at = block, pos, pos
            stop = min(end, at + len(block))
            with memoryview(block) as view:
                crc = zlib.crc32(view[pos - at:stop - at], crc)
            pos = stop
        self.crc, self.pos = crc, pos
        return crc


    def advance_all(self, ends: list[int]) -> list[int]:
        """:meth:`advance` to each of ``ends`` (in order), the CRCs as long as the file has the bytes."""
        out: list[int] = []
        add, crc32 = out.append, zlib.crc32
        n = 0
        while n < len(ends):
            found = self.advance(ends[n])  # reads the block holding this end when it must
            if found is None:
                break
            add(found)
            n += 1
            crc, pos, block, at = self.crc, self.pos, self._block, self._block_at
            limit = at + len(block)
            with memoryview(block) as view:  # the ends within the block read last, without a call each
                while n < len(ends) and pos <= ends[n] <= limit:
                    crc = crc32(view[pos - at:ends[n] - at], crc)
                    pos = ends[n]
                    add(crc)
                    n += 1
            self.crc, self.pos = crc, pos
        return out


_CODE: dict[str, str] = {}


def code_version(filename: str) -> str:
    """What the converting code is: the stat of ``filename`` and of the model layer's and session
    store's modules (a changed converter must not reuse turns converted by the old one)."""
    found = _CODE.get(filename)
    if found is None:
        here = Path(__file__).resolve().parent
        files = [Path(filename), *sorted(here.glob("*.py")), *sorted((here.parent / "session").glob("*.py"))]
        parts = []
        for f in files:
            try:
                st = f.stat()
                parts.append(f"{f}:{st.st_size}:{st.st_mtime_ns}")
            except OSError:
                parts.append(f"{f}:-")
        found = _CODE[filename] = hashlib.sha1("\n".join(parts).encode()).hexdigest()
    return found


__all__ = ["LIMIT", "MIN_SOURCE", "WRITER_WAIT", "OwnReader", "PrefixCrc", "TurnStore", "Turns", "code_version",
           "defer_to_exit", "flush", "in_background", "source_size", "source_tag"]
