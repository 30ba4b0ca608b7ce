"""Errors raised by the session store. All derive from :class:`SessionError`."""

from __future__ import annotations

from pathlib import Path


class SessionError(Exception):
    """Something about a session file or a session operation is wrong."""


class InvalidSessionError(SessionError):
    """The file is not a pi session (no valid header), so it is left untouched."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path} is not a valid pi session file: {reason} "
                         f"(nothing was changed; `pi session check {path}` shows what is wrong)")
        self.path = path


class SessionLockedError(SessionError):
    """Another process (or another manager in this one) has the session open for writing."""

    def __init__(self, path: Path, holder_pid: int | None) -> None:
        holder = f"another pi (process {holder_pid})" if holder_pid else "another pi"
        super().__init__(
            f"session {path} is in use by {holder}; continue it in a copy with `pi --fork {path}`, "
            "or wait until the other pi exits (programs: SessionManager.open(path, read_only=True))"
        )
        self.path = path
        self.holder_pid = holder_pid


class SessionReadOnlyError(SessionError):
    """An append was attempted on a session opened read-only."""

    def __init__(self, path: Path | None) -> None:
        super().__init__(f"session {path} is open read-only; nothing can be appended to it")
        self.path = path


class EntryNotFoundError(SessionError, LookupError):
    """No entry with that id in this session."""

    def __init__(self, entry_id: object, detail: str = "not found") -> None:
        super().__init__(f"entry {entry_id} {detail}")
        self.entry_id = entry_id


class SessionConflictError(SessionError):
    """The file changed under us in a way appends cannot follow: it was truncated, removed, or replaced by
    something that does not start with what we wrote (``how``); or, while appending, another program
    appended just then (``changed``: taken in and retried by the manager)."""

    def __init__(self, path: Path, expected: int, actual: int, how: str = "changed") -> None:
        if how == "changed":
            text = (f"session {path} was changed by another program (size {actual} bytes, expected "
                    f"{expected}); reopen it to see the new entries before appending")
        else:
            now = "it is gone" if actual < 0 else f"it now has {actual} bytes, pi had written {expected}"
            way_out = "" if actual < 0 else (f"; continue from what it holds with `pi --session {path}`, "
                                             f"or in a copy with `pi --fork {path}`")
            text = (f"session {path} was {how} by another program while pi had it open ({now}); pi stopped "
                    f"writing to it rather than write after something it never saw{way_out}")
        super().__init__(text)
        self.path = path
        self.how = how


__all__ = [
    "EntryNotFoundError",
    "InvalidSessionError",
    "SessionConflictError",
    "SessionError",
    "SessionLockedError",
    "SessionReadOnlyError",
]
