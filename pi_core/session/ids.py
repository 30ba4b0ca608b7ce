"""Identifiers and timestamps in the forms pi writes them.

Session ids are UUIDv7 (time-ordered, as pi since 0.67), entry ids are 8 lowercase hex digits unique
within their file, entry timestamps are ISO-8601 UTC with milliseconds (``2026-12-02T14:29:33.188Z``) and
message timestamps are epoch milliseconds.
"""

from __future__ import annotations

import os
import re
import time
import uuid
from collections.abc import Container
from datetime import datetime, timedelta, timezone

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MS = timedelta(milliseconds=1)
_SESSION_ID = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")


def uuid7() -> str:
    """A random UUID version 7 whose first 48 bits are the current Unix time in milliseconds."""
    ms = time.time_ns() // 1_000_000
    rand = int.from_bytes(os.urandom(10), "big")
    value = (ms & 0xFFFF_FFFF_FFFF) << 80
    value |= 0x7 << 76 | (rand >> 62 & 0xFFF) << 64  # version, 12 random bits
    value |= 0b10 << 62 | rand & 0x3FFF_FFFF_FFFF_FFFF  # variant, 62 random bits
    return str(uuid.UUID(int=value))


def check_session_id(session_id: str) -> str:
    """Return ``session_id`` if pi would accept it as a caller-chosen id, else raise ``ValueError``."""
    if not _SESSION_ID.match(session_id):
        raise ValueError(
            f"invalid session id {session_id!r}: use letters, digits, '.', '_' and '-', "
            "starting and ending with a letter or digit"
        )
    return session_id


def new_entry_id(taken: Container[str]) -> str:
    """8 random lowercase hex digits not in ``taken`` (a full UUID in the unlikely case of 100 clashes)."""
    for _ in range(100):
        candidate = os.urandom(4).hex()
        if candidate not in taken:
            return candidate
    return str(uuid.uuid4())


def iso_now() -> str:
    """The current UTC time as JavaScript's ``Date.toISOString()`` prints it."""
    return iso_from_ms(time.time_ns() // 1_000_000)


def iso_from_ms(ms: int) -> str:
    global _last_second
    second, milli = divmod(ms, 1000)
    cached = _last_second
    if cached[0] != second:  # formatting the date part is the slow bit; it changes once a second
        cached = _last_second = (second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second)))
    return f"{cached[1]}.{milli:03d}Z"


_last_second: tuple[int, str] = (-1, "")


def iso_to_ms(value: object) -> int | None:
    """Epoch milliseconds of an ISO timestamp, ``None`` where JavaScript's ``Date.parse`` gives NaN."""
    if not isinstance(value, str):
        return None
    try:
        stamp = datetime.fromisoformat(value)
    except ValueError:
        return None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=timezone.utc)
    return (stamp - _EPOCH) // _MS


def file_timestamp(iso: str) -> str:
    """The timestamp part of a session file name: ``:`` and ``.`` replaced by ``-``."""
    return iso.replace(":", "-").replace(".", "-")


__all__ = [
    "check_session_id",
    "file_timestamp",
    "iso_from_ms",
    "iso_now",
    "iso_to_ms",
    "new_entry_id",
    "uuid7",
]
