"""Opening a session file without parsing it: a validating scan, then entries read on demand.

The scan reads the file in blocks and decodes every line with msgspec into a small struct holding only
what the tree needs — ``type``, ``id``, ``parentId`` and, for messages, the ``role`` and whether there is
any ``content``. msgspec still checks that the whole line is JSON, so a bad line is found (and reported
with its number) at open, but nothing else of it is built: the scan runs at about a gigabyte a second
and keeps a few dozen bytes per entry. Where the entry itself is needed later, its line is read again
from the file (``pread`` at the recorded offset) and parsed then. The records needed at once (the
header, labels, the session name) and anything unusual (a line msgspec cannot decode as an object but
the standard parser can) are parsed during the scan and kept.

The file is only ever appended to while we hold it, and a replaced file keeps its old contents under an
open descriptor, so offsets stay valid; a line that no longer holds the entry expected there raises
:class:`SessionError` instead of returning something else.
"""

from __future__ import annotations

import gc
import operator
import os
import re
import stat
import weakref
from array import array
from operator import attrgetter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import SessionError
from .jsonfmt import loads

Raw = dict[str, Any]
_BLOCK = 2 * 1024 * 1024
_EAGER = frozenset({"session", "label", "session_info"})
_BOM = b"\xef\xbb\xbf"
# Enough of a broken line to link around it: pi writes type, id and parentId first.
_PREFIX = re.compile(rb'\s*\{"type":"[^"\\]*","id":"([^"\\]+)","parentId":(?:null|"([^"\\]*)")')
_decoders: Any = None


def _head_decoder() -> Any:
    global _decoders
    import msgspec

    message_head = msgspec.defstruct("MessageHead", [("role", Any, None)])
    head = msgspec.defstruct("Head", [("type", Any, None), ("id", Any, None), ("parentId", Any, None),
                                      ("message", message_head | None, None)])
    decoder = msgspec.json.Decoder(head)
    _decoders = (decoder.decode_lines, decoder.decode)
    return _decoders


@dataclass
class Diagnostic:
    """Something the loader noticed and handled: a skipped line, a repaired tail."""

    kind: str
    """``malformed_line``, ``missing_newline``, ``torn_tail``, ``invalid_header`` or ``bad_entry``."""
    message: str
    line: int | None = None
    """1-based line number in the file, where the problem is one line."""
    offset: int | None = None
    """Byte offset of that line."""
    sidecar: Path | None = None
    """Where a removed fragment was saved."""


ODD_TYPE = "\x00"
"""Stands in the ``types`` column for a ``type`` that is not a string (the record is in ``parsed``)."""


@dataclass
class Scan:
    """What a session file holds, by line: enough to build the tree, and where to find each entry.

    The columns have one item per record after the header, in file order; ``types`` and ``roles`` hold
    strings only (``ODD_TYPE`` / ``None`` where the file has something else).
    """

    path: Path
    header: Raw | None = None
    types: list[str] = field(default_factory=list)
    ids: list[Any] = field(default_factory=list)
    parent_ids: list[Any] = field(default_factory=list)
    roles: list[str | None] = field(default_factory=list)
    offsets: array = field(default_factory=lambda: array("q"))
    lengths: array = field(default_factory=lambda: array("q"))
    parsed: dict[int, Raw] = field(default_factory=dict)
    """Records parsed during the scan, by record number."""
    broken: dict[str, Any] = field(default_factory=dict)
    """id → parentId of lines that are not JSON but whose start names them (their children link past)."""
    diagnostics: list[Diagnostic] = field(default_factory=list)
    size: int = 0
    tail_offset: int = 0
    tail: bytes = b""
    tail_parsed: bool = False
    tree: Any = None
    """The tree index's columns for the first records, when they came from the derived index
    (:mod:`pi_core.session.scan_index`); :meth:`TreeIndex.load_scan` indexes only the rest."""
    verified: Any = None
    """``((device, inode), [(offset, crc), ...])`` when the derived index was checked: the file and the
    CRC-32 of its first ``offset`` bytes at points along the check (see :meth:`FileReader.for_scan`)."""

    def __len__(self) -> int:
        return len(self.ids)

    def line_of(self, offset: int) -> int:
        """The 1-based line number of the line at byte ``offset`` (counted on demand: for messages)."""
        return line_at(self.path, offset)


def line_at(path: Path, offset: int) -> int:
    line = 1
    try:
        with open(path, "rb") as handle:
            while offset > 0:
                block = handle.read(min(offset, _BLOCK))
                if not block:
                    break
                line += block.count(b"\n")
                offset -= len(block)
    except OSError:
        pass
    return line


_TYPE, _ID, _PARENT = attrgetter("type"), attrgetter("id"), attrgetter("parentId")


def _text_or(value: Any, other: Any) -> Any:
    return value if value.__class__ is str else other


class _Scanner:
    def __init__(self, scan: Scan) -> None:
        self.scan = scan
        self.decode_lines, self.decode_one = _decoders or _head_decoder()

    def block(self, buf: bytearray, view: memoryview, start: int, end: int, offset: int, line: int) -> int:
        """The whole lines of ``buf[start:end]`` (ending in a newline), which start at byte ``offset`` of
        the file, line ``line`` + 1; returns the number of lines. ``view`` is a memoryview of ``buf``:
        nothing of the block is copied."""
        find = buf.find
        starts: list[int] = []
        lengths: list[int] = []
        add_start, add_length = starts.append, lengths.append
        pos = start
        while pos < end:
            stop = find(b"\n", pos, end)
            add_start(pos)
            add_length(stop - pos)
            pos = stop + 1
        count = len(lengths)
        try:
            heads = self.decode_lines(view[start:end])
        except Exception:  # noqa: BLE001 - any bad line: look at them one by one
            heads = None
        if heads is None or len(heads) != count or 0 in lengths:
            self._by_line(bytes(view[start:end]), lengths, offset, line)
            return count
        scan = self.scan
        first = len(scan.ids)
        if scan.header is None and not first and heads and heads[0].type == "session":
            scan.header = loads(bytes(view[start:start + lengths[0]]))
            heads = heads[1:]
            del starts[0], lengths[0]
        shift = offset - start
        types = list(map(_TYPE, heads))
        scan.types.extend(types)
        scan.ids.extend(map(_ID, heads))
        scan.parent_ids.extend(map(_PARENT, heads))
        roles = [h.message.role if h.message is not None else None for h in heads]
        if not all(r is None or r.__class__ is str for r in roles):
            roles = [_text_or(r, None) for r in roles]
        scan.roles.extend(roles)
        scan.offsets.extend([s + shift for s in starts] if shift else starts)
        scan.lengths.extend(lengths)
        for n, kind in enumerate(types):
            if kind.__class__ is not str or kind in _EAGER:
                at = starts[n]
                scan.parsed[first + n] = loads(bytes(view[at:at + lengths[n]]))
                if kind.__class__ is not str:
                    scan.types[first + n] = ODD_TYPE
        return count

    def _by_line(self, data: bytes, lengths: list[int], offset: int, line: int) -> None:
        start = 0
        for n, length in enumerate(lengths):
            raw = data[start:start + length]
            here = start
            start += length + 1
            if raw.strip():
                self._slow(raw, offset + here, line + n + 1)

    def _slow(self, raw: bytes, offset: int, line: int) -> None:
        scan = self.scan
        try:
            record = loads(raw)
        except ValueError as exc:
            self._skip(raw, offset, line, f"not valid JSON ({exc})")
            return
        if record.__class__ is not dict:
            self._skip(raw, offset, line, "not a JSON object")
            return
        if scan.header is None and not scan.ids and record.get("type") == "session":
            scan.header = record
            return
        message = record.get("message")
        scan.parsed[len(scan.ids)] = record
        scan.types.append(_text_or(record.get("type"), ODD_TYPE))
        scan.ids.append(record.get("id"))
        scan.parent_ids.append(record.get("parentId"))
        scan.roles.append(_text_or(message.get("role"), None) if message.__class__ is dict else None)
        scan.offsets.append(offset)
        scan.lengths.append(len(raw))

    def _skip(self, raw: bytes, offset: int, line: int, why: str) -> None:
        scan = self.scan
        prefix = _PREFIX.match(raw)
        if prefix is not None:
            entry_id = prefix.group(1).decode("utf-8", "replace")
            parent = prefix.group(2)
            scan.broken[entry_id] = parent.decode("utf-8", "replace") if parent is not None else None
        scan.diagnostics.append(Diagnostic(
            "malformed_line", f"line {line} skipped: {why}; it stays in the file", line=line, offset=offset))


_NOT_FILES = {stat.S_IFDIR: "a directory", stat.S_IFIFO: "a named pipe (FIFO)", stat.S_IFCHR: "a character device",
              stat.S_IFBLK: "a block device", stat.S_IFSOCK: "a socket"}


def not_a_file(path: Path | str) -> str | None:
    """What ``path`` is when it exists but is no regular file (``"a named pipe (FIFO)"``, ``"a directory"``,
    ...; symlinks followed), else None. Opening a pipe for reading waits for a writer, a device may never
    end: a session is only ever read from a regular file."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    return _NOT_FILES.get(stat.S_IFMT(mode))


def refuse_special(path: Path | str) -> None:
    """Raise :class:`SessionError` (one line, the way out) if ``path`` exists and is no regular file."""
    kind = not_a_file(path)
    if kind is not None:
        raise SessionError(f"{path} is {kind}, not a session file: pi reads sessions only from regular files "
                           "(a pipe or a device could block or never end); give the path of a .jsonl session file")


def scan_session_file(path: Path, *, use_index: bool = False) -> Scan:
    """Scan a session file without changing it. A missing file scans as empty.

    With ``use_index``, a big file's derived index (:mod:`pi_core.session.scan_index`) stands in for
    the part of the file it matches, and only what follows is scanned; the index is written or renewed
    when that pays. The result is the same either way. A path that is no regular file (a pipe, a device,
    a directory) raises :class:`SessionError`."""
    refuse_special(path)
    try:
        handle = open(path, "rb")
    except FileNotFoundError:
        return Scan(path)
    from . import scan_index

    if use_index:
        st = os.fstat(handle.fileno())
        indexed = scan_index.load(path, st.st_size, scan_index.file_identity(st))
    else:
        indexed = None
    scan, start, lines = indexed if indexed is not None else (Scan(path), 0, 0)
    scanner = _Scanner(scan)
    gc_was_enabled = gc.isenabled()
    gc.disable()  # the scan makes many small objects that can never form cycles
    try:
        with handle:
            handle.seek(start)
            offset, line = _read_blocks(handle, scanner, start, lines)
    finally:
        if gc_was_enabled:
            gc.enable()
    scan.tail_offset = offset
    scan.size = offset + len(scan.tail)
    _classify_tail(scan, line + 1)
    if use_index and offset - start >= max(1 << 20, offset // 10):
        scan_index.save(scan, line)
    return scan


def _read_blocks(handle: Any, scanner: _Scanner, base: int = 0, line: int = 0) -> tuple[int, int]:
    """Read the file into one reused buffer, a block at a time, and scan its whole lines; the part of a
    line that runs past a block moves to the buffer's start (a longer line than the buffer grows it).
    Reading starts at file offset ``base`` (line ``line``), where the handle stands. Returns the offset
    of what follows the last newline (kept as ``scan.tail``) and the lines read."""
    buf = bytearray(_BLOCK)
    view = memoryview(buf)
    filled = 0  # bytes held in buf; base is the file offset of buf[0], line the lines scanned
    first = base == 0
    try:
        while True:
            if filled == len(buf):  # one line longer than the buffer
                view.release()
                buf.extend(bytes(len(buf)))
                view = memoryview(buf)
            count = handle.readinto(view[filled:])
            if not count:
                break
            filled += count
            if first:
                if filled < len(_BOM) and _BOM.startswith(bytes(view[:filled])):
                    continue  # not enough yet to tell
                first = False
                if buf.startswith(_BOM):  # some editors add one; JSON.parse would refuse the header
                    view[:filled - len(_BOM)] = view[len(_BOM):filled]
                    filled -= len(_BOM)
                    base = len(_BOM)
            cut = buf.rfind(b"\n", 0, filled) + 1
            if not cut:
                continue  # a line longer than what is held; read on
            line += scanner.block(buf, view, 0, cut, base, line)
            rest = filled - cut
            if rest:
                view[:rest] = view[cut:filled]
            base += cut
            filled = rest
        scanner.scan.tail = bytes(view[:filled])
    finally:
        view.release()
    return base, line


def _classify_tail(scan: Scan, line: int) -> None:
    tail = scan.tail
    if not tail:
        return
    if not tail.strip():
        scan.tail_parsed = True  # whitespace only: harmless, just needs its newline
        return
    try:
        record = loads(tail)
    except ValueError:
        record = None
    if record.__class__ is dict:
        scanner = _Scanner(scan)
        before = len(scan.diagnostics)
        scanner._slow(tail, scan.tail_offset, line)
        del scan.diagnostics[before:]
        scan.tail_parsed = True
        scan.diagnostics.append(Diagnostic(
            "missing_newline", f"line {line} had no final newline", line=line, offset=scan.tail_offset))
        return
    scan.diagnostics.append(Diagnostic(
        "torn_tail",
        f"line {line} is incomplete ({len(tail)} bytes, probably a write cut short by a crash) "
        "and was ignored", line=line, offset=scan.tail_offset))


# ---------------------------------------------------------------------------------------------
# reading entries back


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


class FileReader:
    """Reads lines of one session file by offset, through a descriptor kept open for the purpose."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = os.open(path, os.O_RDONLY)
        self._finalizer = weakref.finalize(self, _close, self._fd)
        self.checkpoints: list[tuple[int, int]] = []
        """``(offset, crc)``: the CRC-32 of the file's first ``offset`` bytes, as checked when it was
        opened (reused by whoever checks a prefix of it again: :class:`pi_core.ai.turn_store.PrefixCrc`)."""

    @classmethod
    def for_scan(cls, path: Path, scan: Scan) -> FileReader:
        """A reader of ``path``, with the CRC checkpoints of ``scan``'s index check when it is the very
        file that was checked."""
        reader = cls(path)
        if scan.verified is not None:
            identity, checkpoints = scan.verified
            st = os.fstat(reader._fd)
            if (st.st_dev, st.st_ino) == identity:
                reader.checkpoints = checkpoints
        return reader

    def fileno(self) -> int:
        return self._fd

    def read(self, offset: int, length: int) -> bytes:
        if hasattr(os, "pread"):
            return os.pread(self._fd, length, offset)
        os.lseek(self._fd, offset, os.SEEK_SET)  # pragma: no cover - Windows
        return os.read(self._fd, length)

    def close(self) -> None:
        self._finalizer()


_SPAN = 4 << 20  # bytes read at once for neighbouring lines


def no_line_where(lengths: array, marks: list[Any]) -> None:
    """Set ``lengths[n]`` to 0 (no line to read) wherever ``marks[n]`` is not ``None``."""
    if marks.count(None) != len(marks):
        for n, mark in enumerate(marks):
            if mark is not None:
                lengths[n] = 0


class RecordStore:
    """The records of a session after its header, in file order: dicts made on first access.

    Records appended in this process, and those parsed during the scan, are dicts from the start;
    the others are read from the file when first asked for and kept from then on. :meth:`peek`
    reads one without keeping it.
    """

    __slots__ = ("_dicts", "_offsets", "_lengths", "_ids", "_reader")

    def __init__(self) -> None:
        self._dicts: list[Raw | None] = []
        self._offsets = array("q")
        self._lengths = array("q")
        self._ids: list[Any] = []
        self._reader: FileReader | None = None

    @classmethod
    def of_dicts(cls, records: list[Raw]) -> RecordStore:
        store = cls()
        store._dicts = list(records)
        count = len(records)
        store._offsets = array("q", bytes(8 * count))
        store._lengths = array("q", bytes(8 * count))
        store._ids = [r.get("id") for r in records]
        return store

    @classmethod
    def of_scan(cls, scan: Scan, reader: FileReader) -> RecordStore:
        store = cls()
        dicts: list[Raw | None] = [None] * len(scan)
        for at, record in scan.parsed.items():
            dicts[at] = record
        store._dicts = dicts
        store._offsets, store._lengths = scan.offsets, scan.lengths
        store._ids = scan.ids
        store._reader = reader
        return store

    def __len__(self) -> int:
        return len(self._dicts)

    def __getitem__(self, at: int) -> Raw:
        record = self._dicts[at]
        if record is None:
            record = self._dicts[at] = self._load(at)
        return record

    def __iter__(self) -> Iterator[Raw]:
        for at in range(len(self._dicts)):
            yield self[at]

    def peek(self, at: int) -> Raw:
        """Record ``at`` without keeping it (for one pass over many records)."""
        record = self._dicts[at]
        return record if record is not None else self._load(at)

    def is_loaded(self, at: int) -> bool:
        return self._dicts[at] is not None

    def raw(self, records: list[int]) -> list[tuple[Any, bytes | None]]:
        """``(id, line)`` of each of ``records``: the line's bytes as in the file, or ``None`` for a
        record that is held as a dict (appended here, parsed during the scan, or read already).
        Neighbouring lines are read in one go; nothing is parsed or kept."""
        whole = self._raw_lines(records)
        if whole is not None:
            return whole
        reader, dicts, offsets, lengths, ids = self._reader, self._dicts, self._offsets, self._lengths, self._ids
        out: list[tuple[Any, bytes | None]] = []
        i, count = 0, len(records)
        while i < count:
            at = records[i]
            if reader is None or dicts[at] is not None or not lengths[at]:
                out.append((ids[at], None))
                i += 1
                continue
            start = offsets[at]
            j, end = i + 1, start + lengths[at]
            while (j < count and dicts[records[j]] is None and lengths[records[j]]
                   and 0 <= offsets[records[j]] - end < 4096 and end - start < _SPAN):
                end = offsets[records[j]] + lengths[records[j]]
                j += 1
            data = reader.read(start, end - start)
            for k in range(i, j):
                r = records[k]
                lo = offsets[r] - start
                out.append((ids[r], data[lo:lo + lengths[r]]))
            i = j
        return out

    def _block(self, records: list[int]) -> tuple[bytes, int] | None:
        """The lines from the first of ``records`` to the last, read in one go, and the first's record,
        when the records are in file order and those lines are all lines of records, not much longer
        than the records' own (a window of a long conversation); ``None`` otherwise. A record held as a
        dict is read too: it is still its line (see :meth:`spans`)."""
        if self._reader is None or len(records) < 2 or not all(map(operator.lt, records, records[1:])):
            return None
        lo, hi = records[0], records[-1] + 1
        lengths = self._lengths[lo:hi]
        size = self._offsets[hi - 1] + lengths[-1] - self._offsets[lo]
        # lines are apart by one newline at least: by exactly one each when they add up to the size
        if 0 in lengths or size != sum(lengths) + hi - lo - 1 \
                or (hi - lo != len(records) and size > 2 * sum(map(self._lengths.__getitem__, records)) + _SPAN):
            return None
        data = self._reader.read(self._offsets[lo], size)
        return (data, lo) if len(data) == size else None

    def _raw_lines(self, records: list[int]) -> list[tuple[Any, bytes | None]] | None:
        """:meth:`raw` for records none of which is held as a dict, read as one block (see
        :meth:`_block`) and split at C speed; ``None`` when they cannot be."""
        if list(map(self._dicts.__getitem__, records)).count(None) != len(records):
            return None
        block = self._block(records)
        if block is None:
            return None
        data, lo = block
        lines = data.split(b"\n")
        if len(lines) != records[-1] + 1 - lo:
            return None
        picked = lines if len(lines) == len(records) else [lines[r - lo] for r in records]
        return list(zip(map(self._ids.__getitem__, records), picked))

    def line_block(self, records: list[int]) -> tuple[bytes, int, Sequence[int], list[Any]] | None:
        """The lines of ``records`` as one block of bytes, ``(data, lines, at, ids)``: ``lines`` lines
        of the file as they are (newline-separated) from the first of them to the last, the line in it
        of each record and its id; ``None`` when they cannot be read as one block (see :meth:`_block`)."""
        block = self._block(records)
        if block is None:
            return None
        data, lo = block
        count = records[-1] + 1 - lo
        if count == len(records):  # all of them: a window of a conversation without other entries
            return data, count, range(count), self._ids[lo:lo + count]
        return data, count, [r - lo for r in records], list(map(self._ids.__getitem__, records))

    def spans(self, records: list[int]) -> list[tuple[FileReader, int, int] | None]:
        """``(reader, offset, length)`` of each of ``records`` in the file it was read from; ``None`` for
        a record that is not a line of that file (appended in memory, or no file at all). A record
        read already is still its line: records are never changed in memory."""
        reader, offsets, lengths = self._reader, self._offsets, self._lengths
        if reader is None:
            return [None] * len(records)
        return [(reader, offsets[at], lengths[at]) if lengths[at] else None for at in records]

    def span_columns(self, records: list[int]) -> tuple[FileReader, array, array] | None:
        """:meth:`spans` as columns: the reader, the offsets and the lengths (0: not a line of the file),
        made at C speed (a resumed session may send 100,000 messages)."""
        if self._reader is None:
            return None
        return (self._reader, array("q", map(self._offsets.__getitem__, records)),
                array("q", map(self._lengths.__getitem__, records)))

    def line_columns(self, records: list[int]) -> tuple[FileReader, array, array] | None:
        """:meth:`span_columns` of the records :meth:`raw` gives lines for: length 0 for a record held as
        a dict (:meth:`raw` gives no line for it), as for one that is not a line of the file."""
        columns = self.span_columns(records)
        if columns is not None:
            no_line_where(columns[2], list(map(self._dicts.__getitem__, records)))
        return columns

    def line(self, at: int) -> int | None:
        """The 1-based line of record ``at`` in the file (None for one appended in memory); counted
        on demand, for messages about it."""
        if self._reader is None or not self._lengths[at]:
            return None
        return line_at(self._reader.path, self._offsets[at])

    def append(self, record: Raw, offset: int = 0, length: int = 0) -> int:
        self._dicts.append(record)
        self._offsets.append(offset)
        self._lengths.append(length)
        self._ids.append(record.get("id"))
        return len(self._dicts) - 1

    def _load(self, at: int) -> Raw:
        reader = self._reader
        if reader is None:  # pragma: no cover - every record without a reader is a dict
            raise SessionError(f"record {at} is not loaded")
        data = reader.read(self._offsets[at], self._lengths[at])
        try:
            record = loads(data)
        except ValueError:
            record = None
        if record.__class__ is not dict or record.get("id") != self._ids[at]:
            raise SessionError(
                f"{reader.path} changed on disk since it was opened (line {self.line(at)} no longer "
                "holds the entry read there); reopen the session")
        return record

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()


__all__ = ["Diagnostic", "FileReader", "RecordStore", "Scan", "no_line_where", "scan_session_file"]
