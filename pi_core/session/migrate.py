"""Bringing version 1 and 2 session files to version 3, by pi's rules.

* v1 → v2: entries had no ids. Each non-header record, in file order, gets a new 8-hex ``id`` and the
  previous record's id as ``parentId`` (the first gets ``null``). A compaction's ``firstKeptEntryIndex``
  (an index into the file's records, the header being record 0) becomes ``firstKeptEntryId``; if it
  points at the header or past the end the id is left out. The header's ``version`` becomes 2.
* v2 → v3: message role ``hookMessage`` is renamed ``custom``. The header's ``version`` becomes 3.

Migrations change the dicts in place; the caller rewrites the file once.
"""

from __future__ import annotations

from typing import Any

from .entries import CURRENT_SESSION_VERSION
from .ids import new_entry_id


def file_version(header: dict[str, Any]) -> float:
    """The header's version compared as pi compares it (``version ?? 1`` against numbers, so ``"3"``
    counts as 3 and a value that is no number at all as none: such a file is left alone)."""
    version = header.get("version")
    if version is None:
        return 1
    if isinstance(version, bool):
        return int(version)
    if isinstance(version, (int, float)):
        return version
    if isinstance(version, str):
        try:
            return float(version.strip() or 0)
        except ValueError:
            return float("nan")
    return float("nan")


def _v1_to_v2(header: dict[str, Any], entries: list[dict[str, Any]]) -> None:
    # One pass in file order, as pi: a compaction can only name records that already have an id.
    header["version"] = 2
    records = [header, *entries]
    taken: set[str] = set()
    previous: str | None = None
    for entry in entries:
        if entry.get("type") == "session":
            entry["version"] = 2
            continue
        entry["id"] = previous_id = new_entry_id(taken)
        taken.add(previous_id)
        entry["parentId"] = previous
        previous = previous_id
        if entry.get("type") == "compaction":
            _convert_kept_index(entry, records)


def _convert_kept_index(entry: dict[str, Any], records: list[dict[str, Any]]) -> None:
    index = entry.get("firstKeptEntryIndex")
    if not isinstance(index, (int, float)) or isinstance(index, bool):
        return
    del entry["firstKeptEntryIndex"]
    if isinstance(index, int) and 0 <= index < len(records):
        target = records[index]
        if target.get("type") != "session" and "id" in target:
            entry["firstKeptEntryId"] = target["id"]


def _v2_to_v3(header: dict[str, Any], entries: list[dict[str, Any]]) -> None:
    header["version"] = 3
    for entry in entries:
        if entry.get("type") == "session":
            entry["version"] = 3
            continue
        message = entry.get("message") if entry.get("type") == "message" else None
        if isinstance(message, dict) and message.get("role") == "hookMessage":
            message["role"] = "custom"


def needs_migration(header: dict[str, Any]) -> bool:
    return file_version(header) < CURRENT_SESSION_VERSION


def migrate(header: dict[str, Any], entries: list[dict[str, Any]]) -> bool:
    """Migrate ``header`` and ``entries`` (file order, header excluded) in place; True if changed.

    Unlike pi, entries that already have ids keep them: a header that lost its ``version`` over a
    tree of entries is a version 3 file, and giving it new ids would flatten its branches.
    """
    version = file_version(header)
    if not version < CURRENT_SESSION_VERSION:
        return False
    if version < 2 and not any(isinstance(e.get("id"), str) for e in entries if e.get("type") != "session"):
        _v1_to_v2(header, entries)
    _v2_to_v3(header, entries)
    return True


__all__ = ["file_version", "migrate"]
