"""Listing sessions quickly: header and last-entry metadata without parsing whole files.

pi (and pi_core) write every record as compact JSON with ``type`` first, so a record boundary is a
newline followed by ``{"type":"<kind>"``. That makes the listing fields exact byte searches over a
memory-mapped file: the message count is a count of ``\\n{"type":"message",``; the newest user or
assistant message is found by scanning back from the end; the name is the last ``session_info`` line.
Only the header, that message, the first user message and the name line are parsed. A file whose
header is not in that compact form (written by some other tool) is read in full instead.
"""

from __future__ import annotations

import mmap
from collections import deque
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .ids import iso_to_ms
from .raw import raw_text
from .scan import not_a_file
from .jsonfmt import loads
from .store import read_session_file

_HEADER_SCAN = 1024 * 1024
_READ_WHOLE = 16 * 1024 * 1024  # smaller files are read at once; larger ones memory-mapped
_COMPACT_HEADER = b'{"type":"session",'
_MESSAGE_START = b'\n{"type":"message",'
_INFO_START = b'\n{"type":"session_info",'
_MESSAGE_PREFIX = rb'\n\{"type":"message","id":"[^"\n]*","parentId":(?:null|"[^"\n]*"),' \
                  rb'"timestamp":"[^"\n]*","message":\{"role":"'
_FIRST_USER = re.compile(_MESSAGE_PREFIX + rb'user"')
_ACTIVITY = re.compile(_MESSAGE_PREFIX + rb'(?:user|assistant)"')


@dataclass(frozen=True)
class SessionInfo:
    """One row of a session listing (pi's ``SessionInfo`` without the full-text field)."""

    path: Path
    id: str
    cwd: str
    name: str | None
    parent_session_path: str | None
    created: datetime
    modified: datetime
    """Time of the newest user or assistant message (else the header's time)."""
    message_count: int
    first_message: str
    """Text of the first user message, or ``"(no messages)"``."""


def _line_at(buf: Any, start: int) -> bytes:
    end = buf.find(b"\n", start)
    return bytes(buf[start:end if end >= 0 else len(buf)])


def _parse(line: bytes) -> dict[str, Any] | None:
    try:
        value = loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def read_header(path: Path) -> dict[str, Any] | None:
    """The session header of ``path`` (first parsable record, within 1 MiB), or None if it has none
    (or is no regular file: a pipe named ``*.jsonl`` would block the read)."""
    if not_a_file(path) is not None:
        return None
    try:
        with open(path, "rb") as handle:
            return _header_of(handle)
    except OSError:
        return None


def _header_of(handle: Any) -> dict[str, Any] | None:
    head = handle.read(4096)
    while b"\n" not in head and len(head) < _HEADER_SCAN:  # a long first line: read on
        more = handle.read(65536)
        if not more:
            break
        head += more
    for line in _lines_within(head, handle):
        if not line.strip():
            continue
        record = _parse(line)
        if record is None:
            continue
        if record.get("type") == "session" and isinstance(record.get("id"), str):
            return record
        return None
    return None


def _lines_within(head: bytes, handle: Any) -> Any:
    """Lines of the first 1 MiB, read only as far as needed (blank or broken lines come first rarely)."""
    while True:
        cut = head.find(b"\n")
        if cut < 0:
            yield head[:_HEADER_SCAN]
            return
        yield head[:cut]
        head = head[cut + 1:]
        if b"\n" not in head:
            head += handle.read(_HEADER_SCAN)


def _message_text(message: dict[str, Any]) -> str:
    return raw_text(message.get("content"), " ")


def _activity_ms(record: dict[str, Any]) -> int | None:
    message = record.get("message")
    if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
        return None
    stamp = message.get("timestamp")
    if isinstance(stamp, (int, float)) and not isinstance(stamp, bool) and abs(stamp) < 1e15:  # finite, a date
        return int(stamp)
    return iso_to_ms(record.get("timestamp"))


def _last_activity(buf: Any) -> int | None:
    size = len(buf)
    window = 16 * 1024
    while True:
        start = max(0, size - window)
        last = next(iter(deque(_ACTIVITY.finditer(buf, start), maxlen=1)), None)
        if last is not None:  # nearly always the last message of the file; else search further back
            for match in reversed(list(_ACTIVITY.finditer(buf, start, last.end()))):
                record = _parse(_line_at(buf, match.start() + 1))
                stamp = _activity_ms(record) if record else None
                if stamp is not None:
                    return stamp
        if start == 0:
            return None
        window *= 8


def _first_user_text(buf: Any) -> str:
    for match in _FIRST_USER.finditer(buf):
        record = _parse(_line_at(buf, match.start() + 1))
        message = record.get("message") if record else None
        if isinstance(message, dict):
            text = _message_text(message)
            if text:
                return text
    return ""


def _last_name(buf: Any) -> str | None:
    if not _count(buf, _INFO_START):  # a forward count is much faster than a failing rfind
        return None
    at = buf.rfind(_INFO_START)
    record = _parse(_line_at(buf, at + 1)) or {}
    name = record.get("name")
    return name.strip() or None if isinstance(name, str) else None


def _count(buf: Any, needle: bytes) -> int:
    if isinstance(buf, bytes):
        return buf.count(needle)
    total, step, overlap = 0, 16 * 1024 * 1024, len(needle) - 1
    for start in range(0, len(buf), step):  # a memory map: count slice by slice
        total += buf[start:start + step + overlap].count(needle)
    return total


def _info_from_buffer(path: Path, buf: Any, header: dict[str, Any], mtime: float) -> SessionInfo:
    activity = _last_activity(buf)
    count = _count(buf, _MESSAGE_START)
    return _make_info(path, header, activity, count, _first_user_text(buf), _last_name(buf), mtime)


def _date(ms: int | None) -> datetime | None:
    """The time ``ms`` milliseconds after the epoch; None for none, 0, or one no date can hold."""
    if not ms:
        return None if ms is None else datetime.fromtimestamp(0, tz=timezone.utc)
    try:
        return datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
    except (OverflowError, ValueError, OSError):
        return None


def _make_info(path: Path, header: dict[str, Any], activity: int | None, count: int, first: str,
               name: str | None, mtime: float) -> SessionInfo:
    created_ms = iso_to_ms(header.get("timestamp"))
    created = _date(created_ms) or datetime.fromtimestamp(0, tz=timezone.utc)
    modified = (_date(activity) if activity else None) or _date(created_ms) or \
        datetime.fromtimestamp(mtime, tz=timezone.utc)
    cwd = header.get("cwd")
    parent = header.get("parentSession")
    return SessionInfo(path=path, id=header["id"], cwd=cwd if isinstance(cwd, str) else "",
                       name=name, parent_session_path=parent if isinstance(parent, str) else None,
                       created=created, modified=modified, message_count=count,
                       first_message=first or "(no messages)")


def _info_by_parsing(path: Path, header: dict[str, Any], mtime: float) -> SessionInfo:
    records = read_session_file(path).records[1:]
    activity: int | None = None
    count, first, name = 0, "", None
    for record in records:
        if record.get("type") == "session_info":
            value = record.get("name")
            name = value.strip() or None if isinstance(value, str) else None
        if record.get("type") != "message":
            continue
        count += 1
        stamp = _activity_ms(record)
        if stamp is not None:
            activity = max(activity or 0, stamp)
        message = record.get("message")
        if not first and isinstance(message, dict) and message.get("role") == "user":
            first = _message_text(message)
    return _make_info(path, header, activity, count, first, name, mtime)


def session_info(path: Path) -> SessionInfo | None:
    """Listing metadata of one session file, or None if it is not a session."""
    if not_a_file(path) is not None:
        return None
    try:
        with open(path, "rb") as handle:
            header = _header_of(handle)
            if header is None:
                return None
            stat = os.fstat(handle.fileno())
            handle.seek(0)
            if not _is_compact(handle):
                return _info_by_parsing(path, header, stat.st_mtime)
            if stat.st_size <= _READ_WHOLE:
                return _info_from_buffer(path, handle.read(), header, stat.st_mtime)
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as buf:
                return _info_from_buffer(path, buf, header, stat.st_mtime)
    except (OSError, ValueError, OverflowError):  # unreadable, or a time no date can hold
        return None


def _is_compact(handle: Any) -> bool:
    start = handle.read(len(_COMPACT_HEADER))
    handle.seek(0)
    return start == _COMPACT_HEADER


def list_files(directory: Path) -> list[Path]:
    try:
        return [directory / name for name in os.listdir(directory) if name.endswith(".jsonl")]
    except OSError:
        return []


def list_infos(files: Iterable[Path], cwd: Path | None = None) -> list[SessionInfo]:
    """Infos of ``files`` that are sessions (and, with ``cwd``, were started there), newest first."""
    infos = [info for info in map(session_info, files) if info is not None]
    if cwd is not None:
        infos = [info for info in infos if _same_dir(info.cwd, cwd)]
    infos.sort(key=lambda info: info.modified, reverse=True)
    return infos


def _same_dir(recorded: str, cwd: Path) -> bool:
    return bool(recorded) and os.path.abspath(os.path.expanduser(recorded)) == str(cwd)


def most_recent(directory: Path, cwd: Path | None = None) -> Path | None:
    """The newest (by mtime) session file in ``directory`` whose header is valid (and matches ``cwd``)."""
    stamped = []
    for path in list_files(directory):
        try:
            stamped.append((path.stat().st_mtime, path))
        except OSError:
            continue
    for _, path in sorted(stamped, reverse=True):
        header = read_header(path)
        if header is not None and (cwd is None or _same_dir(str(header.get("cwd") or ""), cwd)):
            return path
    return None


__all__ = ["SessionInfo", "list_files", "list_infos", "most_recent", "read_header", "session_info"]
