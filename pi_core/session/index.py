"""A compact index of the entry tree, so walking a path never touches the entries themselves.

Each indexed entry has a position (its order in the file); per position the index keeps the id, the
parent's position, a one-byte kind code and, for a message entry that contributes its message as is,
that message. A path is then a walk over an integer array, and the projection of a long path reads
the entries' dicts only where something is unusual (edits, summaries, compactions) — which matters
because touching 10,000 scattered dicts costs more than everything else put together.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator
from typing import Any

from .messages import KNOWN_ROLES

Raw = dict[str, Any]

OTHER = 0  # contributes nothing and sets nothing (custom state, usage, unknown types and roles)
MESSAGE = 1  # a toolResult/bashExecution/custom message taken as is
ASSISTANT = 2  # an assistant message taken as is (also names the model)
SYSTEM = 3  # a system message taken as is (dropped from a compaction's kept range)
USER = 4  # a user message taken as is
ODD_MESSAGE = 5  # a message entry that needs a closer look (content missing)
CUSTOM_MESSAGE = 6
BRANCH_SUMMARY = 7
COMPACTION = 8
CONTEXT_EDIT = 9
MODEL_CHANGE = 10
THINKING_CHANGE = 11
LABEL = 12
SESSION_INFO = 13
PLAIN_MESSAGES = (MESSAGE, ASSISTANT, SYSTEM, USER)

_BY_TYPE = {"custom_message": CUSTOM_MESSAGE, "branch_summary": BRANCH_SUMMARY,
            "compaction": COMPACTION, "context_edit": CONTEXT_EDIT, "model_change": MODEL_CHANGE,
            "thinking_level_change": THINKING_CHANGE, "label": LABEL, "session_info": SESSION_INFO}
_BY_ROLE = {"assistant": ASSISTANT, "system": SYSTEM, "user": USER}


def kind_of(entry: Raw) -> tuple[int, Raw | None]:
    """The kind code of ``entry`` and, for plain messages, the message itself."""
    kind = entry.get("type")
    if kind != "message":
        return _BY_TYPE.get(kind, OTHER), None  # type: ignore[arg-type]
    message = entry.get("message")
    if message.__class__ is not dict:
        return OTHER, None
    role = message.get("role")
    if role not in KNOWN_ROLES:
        return OTHER, None
    if message.get("content") is None:
        return ODD_MESSAGE, None
    return _BY_ROLE.get(role, MESSAGE), message


class TreeIndex:
    """Indexed entries in file order. Ids are unique in the index: a later entry with the same id
    replaces the earlier one for lookups (as pi's ``Map.set`` does), and parents are looked up by id."""

    def __init__(self) -> None:
        self.entries: list[Raw] = []
        self.ids: list[str] = []
        self.parents = array("q")
        self.kinds = bytearray()
        self.messages: list[Raw | None] = []
        self.position: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self.position

    def load(self, entries: Iterable[Raw]) -> None:
        """Index ``entries`` (file order; records without a string id, and stray headers, are not
        tree entries); parents are resolved once all are known."""
        parent_ids: list[Any] = []
        for entry in entries:
            if entry.get("id").__class__ is not str or entry.get("type") == "session":
                continue
            self._append(entry)
            parent_ids.append(entry.get("parentId"))
        position = self.position
        self.parents = array("q", (position.get(p, -1) if p.__class__ is str else -1
                                   for p in parent_ids))

    def _append(self, entry: Raw) -> int:
        kind, message = kind_of(entry)
        at = len(self.entries)
        self.entries.append(entry)
        self.ids.append(entry["id"])
        self.kinds.append(kind)
        self.messages.append(message)
        self.position[entry["id"]] = at
        return at

    def add(self, entry: Raw) -> int:
        """Index one new entry (its parent must already be indexed, or be null)."""
        parent = entry.get("parentId")
        at = self._append(entry)
        self.parents.append(self.position.get(parent, -1) if parent.__class__ is str else -1)
        return at

    def get(self, entry_id: Any) -> Raw | None:
        at = self.position.get(entry_id)
        return self.entries[at] if at is not None else None

    def unique(self) -> Iterator[Raw]:
        """Each id's current entry, in the order ids first appeared."""
        entries = self.entries
        return (entries[at] for at in self.position.values())

    def positions_of(self, kind: int) -> Iterator[int]:
        """Positions whose kind is ``kind``, in file order (a C-speed scan of the kind codes)."""
        kinds = self.kinds
        at = kinds.find(kind)
        while at >= 0:
            yield at
            at = kinds.find(kind, at + 1)

    def path(self, at: int | None) -> list[int]:
        """Positions from the root to ``at``; stops at a missing parent or where the links loop."""
        out: list[int] = []
        if at is None:
            return out
        parents, append, limit = self.parents, out.append, len(self.entries)
        while at >= 0:
            append(at)
            at = parents[at]
            if len(out) > limit:
                out = _before_repeat(out)
                break
        out.reverse()
        return out


def _before_repeat(walk: list[int]) -> list[int]:
    seen: set[int] = set()
    out = []
    for at in walk:
        if at in seen:
            break
        seen.add(at)
        out.append(at)
    return out


__all__ = ["TreeIndex", "kind_of"]
