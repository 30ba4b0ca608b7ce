"""A derived index of a scanned session file, so reopening a long session skips most of the scan.

Scanning is linear in the file (about a third of a second for 127 MB here), and pi's users keep
sessions of hundreds of megabytes. After a big file is scanned, what the scan found for its complete
lines — the columns of :class:`~pi_core.session.scan.Scan`, without any entry's contents — is saved in
``<agent dir>/cache/session-index/``, one file per session path. The next open checks that the file
still starts with exactly the bytes the index describes (its size and a CRC-32 of them: a file edited,
migrated, repaired or replaced anywhere in that part no longer matches), takes the columns from the
index and scans only what was appended since, by this program or by another (pi itself takes no lock).

The index is a cache: it is rebuilt when it does not match, never trusted without the check, and any
problem reading or writing it only means a full scan. Records the scan parses at once (the header,
labels, session names, odd lines) are not stored: they are read again from the file, whose bytes the
check has just confirmed.
"""

from __future__ import annotations

import hashlib
import os
import stat
import threading
from pathlib import Path
from typing import Any

from .file_crc import prefix_crc
from .scan import Diagnostic, Scan

FORMAT = 3
MIN_SIZE = 4 << 20
"""Files smaller than this scan fast enough; they get no index."""
_KEEP = 100
"""Index files kept; the oldest go first."""


def index_dir() -> Path:
    from ..paths import agent_dir

    return agent_dir() / "cache" / "session-index"


def _index_file(path: Path) -> Path:
    key = hashlib.sha1(os.fsencode(os.path.abspath(path))).hexdigest()[:32]
    return index_dir() / f"{key}.idx"


def load(path: Path, size: int, identity: tuple[int, ...] | None = None) -> tuple[Scan, int, int] | None:
    """The scan of ``path``'s indexed part, if an index matches the file as it is now: ``(scan,
    offset, lines)`` with the byte offset and line count where scanning must go on; ``None`` when
    there is no index or it does not match. ``identity`` (:func:`file_identity` of the open file) lets
    a check started early (:func:`check_early`) stand in for the CRC if the file has not changed since."""
    if size < MIN_SIZE:
        return None
    early = _take_early(path)
    try:
        if early is not None and identity is not None and early.identity == identity:
            saved, crc, verified = early.saved, early.crc, early.verified
        else:
            saved = _read_index(path, size)
            if saved is None:
                return None
            verified = []
            crc = prefix_crc(path, saved["offset"], verified)
        if crc != saved["crc"]:
            return None
        scan = _restore(path, saved)
        scan.verified = tuple(verified)
        return scan, saved["offset"], saved["lines"]
    except Exception:  # noqa: BLE001 - a damaged index is only a cache miss
        return None


def _read_index(path: Path, size: int) -> dict[str, Any] | None:
    try:
        blob = _index_file(path).read_bytes()
    except OSError:
        return None
    import msgspec

    saved = msgspec.msgpack.decode(blob)
    if not isinstance(saved, dict) or saved.get("format") != FORMAT or not 0 < saved["offset"] <= size:
        return None
    return saved


def file_identity(st: os.stat_result) -> tuple[int, ...]:
    """What tells a file changed: any write moves its modification or change time, a replacement its inode."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class _EarlyCheck:
    """The index check of one file, run on a thread while the program starts."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.identity: tuple[int, ...] | None = None
        self.saved: dict[str, Any] = {}
        self.crc: int | None = None
        self.verified: list[Any] = []
        self.thread = threading.Thread(target=self._run, name="pi-index-check", daemon=True)

    def _run(self) -> None:
        try:
            before = os.stat(self.path)
            if not stat.S_ISREG(before.st_mode) or before.st_size < MIN_SIZE:
                return
            saved = _read_index(Path(self.path), before.st_size)
            if saved is None:
                return
            # one thread: this one already runs beside start-up, which needs the other core
            crc = prefix_crc(self.path, saved["offset"], self.verified, threads=1)
            # Only a result for bytes that did not change while they were summed stands for the file.
            if file_identity(os.stat(self.path)) == file_identity(before):
                self.saved, self.crc, self.identity = saved, crc, file_identity(before)
        except Exception:  # noqa: BLE001 - the open checks again itself
            self.identity = None


_early: dict[str, _EarlyCheck] = {}


def check_early(path: str | os.PathLike[str]) -> None:
    """Start checking ``path``'s index on a thread of its own, for an open of it that follows.

    Reading and summing the indexed bytes (tens of milliseconds for a long session) releases the GIL, so
    it runs beside start-up's imports on another core. The open takes the result only if the file's
    :func:`file_identity` is still the one the check saw on both sides of its sum; otherwise it checks
    again. A path that is no long session file costs a ``stat``."""
    key = os.path.abspath(path)
    if key not in _early:
        _early[key] = check = _EarlyCheck(key)
        check.thread.start()


def _take_early(path: Path) -> _EarlyCheck | None:
    check = _early.pop(os.path.abspath(path), None)
    if check is None:
        return None
    check.thread.join()
    return check if check.identity is not None else None


def _restore(path: Path, saved: dict[str, Any]) -> Scan:
    from .jsonfmt import loads

    scan = Scan(path)
    vocab, roles = saved["types_vocab"], saved["roles_vocab"]
    scan.types = [vocab[code] for code in saved["types"]]
    scan.roles = [roles[code] for code in saved["roles"]]
    scan.ids = saved["ids"]
    scan.parent_ids = _parents_restored(scan.ids, saved["parents_unlike_previous"])
    scan.offsets.frombytes(saved["offsets"])
    scan.lengths.frombytes(saved["lengths"])
    if not len(scan.types) == len(scan.roles) == len(scan.ids) == len(scan.parent_ids) == len(scan.offsets):
        raise ValueError("index columns differ in length")
    with open(path, "rb") as handle:
        def line_at(offset: int, length: int) -> Any:
            handle.seek(offset)
            return loads(handle.read(length))

        if saved["header"] is not None:
            scan.header = line_at(*saved["header"])
        for at in saved["parsed"]:
            scan.parsed[at] = line_at(scan.offsets[at], scan.lengths[at])
    scan.broken = saved["broken"]
    scan.tree = tuple(saved["tree"])
    scan.diagnostics = [Diagnostic(kind, message, line=line, offset=offset)
                        for kind, message, line, offset in saved["diagnostics"]]
    return scan


def save(scan: Scan, lines: int) -> None:
    """Write the index of ``scan``'s complete lines (up to ``scan.tail_offset``). Best effort."""
    if scan.tail_offset < MIN_SIZE or scan.tail:  # a last line without its newline: after the repair
        return
    try:
        import msgspec

        crc = prefix_crc(scan.path, scan.tail_offset)
        header_span = _header_span(scan)
        if crc is None or (scan.header is not None and header_span is None):
            return
        types_vocab = sorted(set(scan.types))
        roles_vocab = sorted(set(scan.roles), key=lambda r: (r is not None, r or ""))
        if len(types_vocab) > 255 or len(roles_vocab) > 255:
            return
        type_code = {t: n for n, t in enumerate(types_vocab)}
        role_code = {r: n for n, r in enumerate(roles_vocab)}
        saved = {
            "format": FORMAT, "offset": scan.tail_offset, "crc": crc, "lines": lines,
            "header": list(header_span) if header_span is not None else None,
            "types_vocab": types_vocab, "types": bytes(map(type_code.__getitem__, scan.types)),
            "roles_vocab": roles_vocab, "roles": bytes(map(role_code.__getitem__, scan.roles)),
            "ids": scan.ids, "parents_unlike_previous": _parents_unlike_previous(scan.ids, scan.parent_ids),
            "offsets": scan.offsets.tobytes(), "lengths": scan.lengths.tobytes(),
            "parsed": sorted(scan.parsed), "broken": scan.broken,
            "diagnostics": [[d.kind, d.message, d.line, d.offset] for d in scan.diagnostics
                            if d.kind == "malformed_line"],
            "tree": _tree_columns(scan),
        }
        blob = msgspec.msgpack.encode(saved)
        target = _index_file(scan.path)
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        temporary.write_bytes(blob)
        os.replace(temporary, target)
        _prune(target.parent)
    except Exception:  # noqa: BLE001 - the index is a cache: a failure only costs the next open a scan
        return


def _parents_unlike_previous(ids: list[Any], parent_ids: list[Any]) -> list[list[Any]]:
    """``[record, parent id]`` of the records whose parent id is not the id of the record before them.
    Most entries follow the one before: the others are a few (branches, odd lines), and restoring from
    the ids spares decoding a second string per entry."""
    return [[at, parent] for at, parent in enumerate(parent_ids)
            if not (at and parent.__class__ is str and ids[at - 1].__class__ is str and parent == ids[at - 1])]


def _parents_restored(ids: list[Any], unlike: list[list[Any]]) -> list[Any]:
    parent_ids: list[Any] = [None]
    parent_ids += ids[:-1]
    for at, parent in unlike:
        parent_ids[at] = parent
    if len(ids) == 0:
        parent_ids.clear()
    return parent_ids


def _tree_columns(scan: Scan) -> list[Any]:
    from .index import TreeIndex

    tree = TreeIndex()
    tree.load_scan(scan)
    return list(tree.columns(scan))


def _header_span(scan: Scan) -> tuple[int, int] | None:
    """Offset and length of the header line: the first line with something on it (after a BOM), if
    it parses to the header the scan kept."""
    from .jsonfmt import loads
    from .scan import _BOM

    if scan.header is None:
        return None
    with open(scan.path, "rb") as handle:
        offset = len(_BOM) if handle.read(len(_BOM)) == _BOM else 0
        handle.seek(offset)
        for line in handle:
            if line.strip():
                body = line.rstrip(b"\n")
                try:
                    return (offset, len(body)) if loads(body) == scan.header else None
                except ValueError:
                    return None
            offset += len(line)
    return None


def _prune(folder: Path) -> None:
    files = list(folder.glob("*.idx"))
    if len(files) <= _KEEP:
        return
    files.sort(key=lambda f: f.stat().st_mtime)
    for old in files[:len(files) - _KEEP]:
        old.unlink(missing_ok=True)


__all__ = ["MIN_SIZE", "check_early", "file_identity", "index_dir", "load", "prefix_crc", "save"]
