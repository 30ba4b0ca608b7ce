"""A compact index of the entry tree, so walking a path never touches the entries themselves.

Each indexed entry has a position (its order in the file); per position the index keeps the id, the
parent's position, a one-byte kind code and the number of its record in the :class:`RecordStore`. A
path is then a walk over an integer array, and the projection of a long path reads entries only where
something is unusual (edits, summaries, compactions): plain messages are handed on as positions and
read when somebody reads them — an entry of a file just opened is not even parsed until then.
"""

from __future__ import annotations

from array import array
from itertools import repeat
from operator import itemgetter
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from .messages import KNOWN_ROLES
from .scan import RecordStore, Scan

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
CUSTOM = 14  # plugin state (a ``custom`` entry): contributes nothing, found quickly by its kind
TOOL_RESULT = 15  # a toolResult message taken as is
PLAIN_MESSAGES = (MESSAGE, ASSISTANT, SYSTEM, USER, TOOL_RESULT)
#: The role of a plain message, by kind (``None``: bashExecution or custom, see the entry).
PLAIN_ROLES = {ASSISTANT: "assistant", SYSTEM: "system", USER: "user", TOOL_RESULT: "toolResult"}

_BY_TYPE = {"custom_message": CUSTOM_MESSAGE, "branch_summary": BRANCH_SUMMARY,
            "compaction": COMPACTION, "context_edit": CONTEXT_EDIT, "model_change": MODEL_CHANGE,
            "thinking_level_change": THINKING_CHANGE, "label": LABEL, "session_info": SESSION_INFO, "custom": CUSTOM}
_BY_ROLE = {"assistant": ASSISTANT, "system": SYSTEM, "user": USER, "toolResult": TOOL_RESULT}
_LIST_CONTENT_ROLES = frozenset({"user", "assistant", "toolResult"})
_ROLE_CODE = {role: _BY_ROLE.get(role, MESSAGE) for role in KNOWN_ROLES}
#: The kind code by (type, role) of what the scan records: the role only counts for messages.
_PAIR_CODE: dict[tuple[Any, Any], int] = {
    **{(kind, role): code for kind, code in _BY_TYPE.items() for role in (None, *KNOWN_ROLES)},
    **{("message", role): code for role, code in _ROLE_CODE.items()},
    ("message", None): OTHER,
}


def kind_of(entry: Raw) -> tuple[int, Raw | None]:
    """The kind code of ``entry`` and, for plain messages, the message itself."""
    kind = entry.get("type")
    if kind != "message":
        return (_BY_TYPE.get(kind, OTHER) if kind.__class__ is str else OTHER), None
    message = entry.get("message")
    if message.__class__ is not dict:
        return OTHER, None
    role = message.get("role")
    if role.__class__ is not str or role not in KNOWN_ROLES:
        return OTHER, None
    if message.get("content") is None:
        return ODD_MESSAGE, None
    return _BY_ROLE.get(role, MESSAGE), message


class _Entries:
    """``tree.entries[at]``: the entry at a position, read from the record store on first access."""

    __slots__ = ("_records", "_where")

    def __init__(self, records: RecordStore, where: array) -> None:
        self._records, self._where = records, where

    def __len__(self) -> int:
        return len(self._where)

    def __getitem__(self, at: int) -> Raw:
        return self._records[self._where[at]]

    def __iter__(self) -> Iterator[Raw]:
        records, where = self._records, self._where
        return (records[w] for w in where)

    def peek(self, at: int) -> Raw:
        return self._records.peek(self._where[at])


class _Positions:
    """``id -> position`` of a tree read from the session index, made when first needed.

    Building the map of a long session costs about as much as the rest of reopening it, and a run that
    only continues the session (``pi -c``, ``--session FILE -p``) asks for little: the leaf (the last
    entry), entries it appended (at the end), and whether a new id is taken. Those are answered from the
    ids list (a membership test scans it at C speed, a few times at most); anything else builds the map.
    Positions set before the map exists are those of ids about to be appended, which the map takes from
    the list."""

    __slots__ = ("_ids", "_map", "_scans")
    _TAIL = 64
    SCANS = 4
    """Membership tests answered by scanning the list; the next one builds the map (a scan of 100,000
    ids costs about a tenth of building it)."""

    def __init__(self, ids: list[Any]) -> None:
        self._ids = ids
        self._map: dict[Any, int] | None = None
        self._scans = 0

    def _built(self) -> dict[Any, int]:
        """The map (built now if it was not)."""
        if self._map is None:
            self._map = dict(zip(self._ids, range(len(self._ids))))
        return self._map

    def _near_end(self, entry_id: Any) -> int | None:
        ids = self._ids
        for at in range(len(ids) - 1, max(len(ids) - self._TAIL, 0) - 1, -1):
            if ids[at] == entry_id:
                return at  # the last occurrence: the one the map keeps
        return None

    def get(self, entry_id: Any, default: Any = None) -> Any:
        if self._map is None:
            at = self._near_end(entry_id)
            if at is not None:
                return at
        return self._built().get(entry_id, default)

    def __getitem__(self, entry_id: Any) -> int:
        at = self.get(entry_id)
        if at is None:
            raise KeyError(entry_id)
        return at  # type: ignore[no-any-return]

    def __contains__(self, entry_id: object) -> bool:
        if self._map is None:
            if self._near_end(entry_id) is not None:
                return True
            if self._scans < self.SCANS:
                self._scans += 1
                return entry_id in self._ids
        return entry_id in self._built()

    def __setitem__(self, entry_id: Any, at: int) -> None:
        if self._map is not None:
            self._map[entry_id] = at

    def __len__(self) -> int:
        return len(self._built())

    def values(self) -> Any:
        return self._built().values()

    def built(self) -> bool:
        return self._map is not None


class TreeIndex:
    """Indexed entries in file order. Ids are unique in the index: a later entry with the same id
    replaces the earlier one for lookups (as pi's ``Map.set`` does), and parents are looked up by id.

    The entries live in a :class:`RecordStore` (all records after the header, in file order, made on
    demand); a position maps to its record number."""

    def __init__(self, records: RecordStore | None = None) -> None:
        self.records = records if records is not None else RecordStore()
        self.where = array("q")
        self.entries = _Entries(self.records, self.where)
        self.ids: list[str] = []
        self.parents = array("q")
        self.kinds = bytearray()
        self.position: dict[str, int] | _Positions = {}
        self._last_path: tuple[int, list[int]] | None = None

    def __len__(self) -> int:
        return len(self.ids)

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self.position

    def load(self, entries: Iterable[Raw]) -> None:
        """Index ``entries`` (file order; records without a string id, and stray headers, are not
        tree entries); parents are resolved once all are known."""
        records = self.records
        parent_ids: list[Any] = []
        for entry in entries:
            at = records.append(entry)
            if entry.get("id").__class__ is not str or entry.get("type") == "session":
                continue
            kind, _ = kind_of(entry)
            self._index(at, entry["id"], kind)
            parent_ids.append(entry.get("parentId"))
        self._resolve(parent_ids, {})

    def load_scan(self, scan: Scan) -> None:
        """Index the records of a scanned file (see :mod:`pi_core.session.scan`): no entry is read."""
        if scan.tree is not None and self._load_indexed(scan, *scan.tree):
            return
        types, ids, roles = scan.types, scan.ids, scan.roles
        # One dict lookup per record at C speed (zip's pair is reused while map looks it up); a pair
        # the table does not know is an unknown type or role: OTHER.
        codes: list[Any] = list(map(_PAIR_CODE.get, zip(types, roles)))
        at = -1
        try:
            while True:
                at = codes.index(None, at + 1)
                kind = types[at]
                codes[at] = _ROLE_CODE.get(roles[at], OTHER) if kind == "message" else _BY_TYPE.get(kind, OTHER)
        except ValueError:
            pass
        for at, record in scan.parsed.items():
            codes[at] = kind_of(record)[0]
        parent_ids = scan.parent_ids
        if set(map(type, ids)) <= {str} and "session" not in types:
            where: Any = range(len(ids))
            ids = list(ids)
        else:  # records without a string id and stray headers are not tree entries
            where = [at for at, (i, kind) in enumerate(zip(ids, types))
                     if i.__class__ is str and kind != "session"]
            ids = [ids[at] for at in where]
            codes = [codes[at] for at in where]
            parent_ids = [parent_ids[at] for at in where]
        self.where = array("q", where)
        self.entries = _Entries(self.records, self.where)
        self.ids = ids
        self.kinds = bytearray(codes)
        self.position = dict(zip(ids, range(len(ids))))
        self._resolve(parent_ids, scan.broken)

    def columns(self, scan: Scan) -> tuple[int, bytes, bytes, bytes, list[Any], bytes]:
        """What :meth:`_load_indexed` takes back for ``scan``, indexed by :meth:`load_scan`: the records
        indexed, ``where``, ``kinds``, ``parents``, the parent ids that named no entry, and the path to
        the last entry (where a reopened session's leaf usually is, or below it)."""
        parent_ids, where = scan.parent_ids, self.where
        missing = {parent_ids[where[at]] for at, parent in enumerate(self.parents)
                   if parent < 0 and parent_ids[where[at]].__class__ is str}
        path = array("q", self.path(len(self.ids) - 1) if self.ids else [])
        return len(scan), where.tobytes(), bytes(self.kinds), self.parents.tobytes(), sorted(missing), path.tobytes()

    def _load_indexed(self, scan: Scan, count: int, where: bytes, kinds: bytes, parents: bytes,
                      missing: list[Any], path: bytes) -> bool:
        """Index ``scan`` from the columns :meth:`columns` gave for its first ``count`` records, then
        the records after them. ``False`` (nothing changed) where that could differ from indexing the
        whole file at once: a later record reusing an id or naming a parent that was missing before,
        a broken line."""
        if scan.broken or len(scan) < count:
            return False
        at_of = array("q")
        at_of.frombytes(where)
        # records are indexed in file order: when every one of the first ``count`` is an entry (no
        # header or odd line among them), the ids are the scan's own, taken at C speed
        whole = len(at_of) == count and (not count or at_of[-1] == count - 1)
        ids = scan.ids[:count] if whole else [scan.ids[at] for at in at_of]
        position = _Positions(ids)
        if len(scan) - count > _Positions.SCANS:  # each later record's id is looked up: build the map now
            position._built()
        kinds_of, parent_of = bytearray(kinds), array("q")
        parent_of.frombytes(parents)
        later: list[int] = []
        for at in range(count, len(scan)):
            entry_id, kind = scan.ids[at], scan.types[at]
            if entry_id.__class__ is not str or kind == "session":
                continue
            if entry_id in position or entry_id in missing:
                return False
            record = scan.parsed.get(at)
            code = kind_of(record)[0] if record is not None else _PAIR_CODE.get((kind, scan.roles[at]))
            if code is None:
                code = _ROLE_CODE.get(scan.roles[at], OTHER) if kind == "message" else _BY_TYPE.get(kind, OTHER)
            position[entry_id] = len(ids)
            at_of.append(at)
            ids.append(entry_id)
            kinds_of.append(code)
            later.append(at)
        get = position.get
        parent_of.extend(get(p, -1) if p.__class__ is str else -1 for p in map(scan.parent_ids.__getitem__, later))
        self.where, self.entries = at_of, _Entries(self.records, at_of)
        self.ids, self.kinds, self.parents, self.position = ids, kinds_of, parent_of, position
        if path:  # parents never change once indexed: the path stands as the index found it
            positions = array("q")
            positions.frombytes(path)
            self._last_path = (positions[-1], positions.tolist())
        return True

    def _index(self, record: int, entry_id: str, kind: int) -> None:
        self.position[entry_id] = len(self.ids)
        self.where.append(record)
        self.ids.append(entry_id)
        self.kinds.append(kind)

    def _resolve(self, parent_ids: list[Any], broken: dict[str, Any]) -> None:
        position = self.position
        get = position.get
        if broken:
            parent_ids = [_past_broken(p, position, broken) if p.__class__ is str and p not in position else p
                          for p in parent_ids]
        try:
            self.parents.extend(map(get, parent_ids, repeat(-1)))
        except TypeError:  # an unhashable parentId somewhere
            self.parents.extend([get(p, -1) if p.__class__ is str else -1 for p in parent_ids])

    def add(self, entry: Raw) -> int:
        """Index one new entry (its parent must already be indexed, or be null)."""
        parent = entry.get("parentId")
        record = self.records.append(entry)
        kind, _ = kind_of(entry)
        self._index(record, entry["id"], kind)
        self.parents.append(self.position.get(parent, -1) if parent.__class__ is str else -1)
        return len(self.ids) - 1

    def get(self, entry_id: Any) -> Raw | None:
        at = self.position.get(entry_id)
        return self.entries[at] if at is not None else None

    def first_on_path(self, path: list[int], entry_id: Any, end: int) -> int | None:
        """The first ``n < end`` whose entry ``path[n]`` has the id ``entry_id`` (``None``: none has)."""
        position, ids = self.position, self.ids
        if isinstance(position, _Positions) and not position.built():
            if end <= 0:  # no map to build for this: the ids along the path, compared at C speed
                return None
            along = itemgetter(*path[:end])(ids) if end > 1 else (ids[path[0]],)
            try:
                return along.index(entry_id)  # type: ignore[no-any-return]
            except ValueError:
                return None
        at = position.get(entry_id)
        if at is None:
            return None
        if len(position) == len(ids):  # ids unique: find its position at C speed
            try:
                return path.index(at, 0, end)
            except ValueError:
                return None
        return next((n for n in range(end) if ids[path[n]] == entry_id), None)  # an id used twice

    def message(self, at: int) -> Raw:
        """The message of the plain message entry at ``at`` (without content, as pi: with empty one)."""
        message = self.entries[at]["message"]
        if message.get("content") is None:
            role = message.get("role")
            if role == "system":
                return {**message, "content": ""}
            if role in _LIST_CONTENT_ROLES:
                return {**message, "content": []}
        return message

    def line(self, at: int) -> int | None:
        return self.records.line(self.where[at])

    def message_lines(self, positions: list[int]) -> list[tuple[Any, bytes | None]]:
        """``(id, line bytes)`` of the entries at ``positions`` as in the file, ``None`` for those held
        as dicts (see :meth:`RecordStore.raw`)."""
        where = self.where
        return self.records.raw([where[at] for at in positions])

    def message_line_block(self, positions: list[int]) -> tuple[bytes, int, Sequence[int], list[Any]] | None:
        """:meth:`message_lines` as one block of bytes (see :meth:`RecordStore.line_block`)."""
        return self.records.line_block(list(map(self.where.__getitem__, positions)))

    def message_spans(self, positions: list[int]) -> list[Any]:
        """Where the entries at ``positions`` are in the file (see :meth:`RecordStore.spans`)."""
        where = self.where
        return self.records.spans([where[at] for at in positions])

    def message_span_columns(self, positions: list[int]) -> Any:
        """:meth:`message_spans` as columns (see :meth:`RecordStore.span_columns`)."""
        return self.records.span_columns(list(map(self.where.__getitem__, positions)))

    def message_line_columns(self, positions: list[int]) -> Any:
        """Where the lines :meth:`message_lines` gives are, as columns (see :meth:`RecordStore.line_columns`)."""
        return self.records.line_columns(list(map(self.where.__getitem__, positions)))

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
        """Positions from the root to ``at``; stops at a missing parent or where the links loop.

        A position's parent never changes once indexed, so the last path is kept: asking again (the
        projection, plugin state and the branch all ask at every turn) copies it, and the path of an
        entry below it (the next turn's leaf) walks only up to it."""
        if at is None:
            return []
        cached = self._last_path
        if cached is not None and cached[0] == at:
            return list(cached[1])
        out: list[int] = []
        parents, append, limit = self.parents, out.append, len(self.ids)
        stop = cached[0] if cached is not None else -2
        while at >= 0:
            if at == stop:
                assert cached is not None
                out.reverse()
                out = [*cached[1], *out]
                break
            append(at)
            at = parents[at]
            if len(out) > limit:
                out = _before_repeat(out)
                out.reverse()
                break
        else:
            out.reverse()
        if out:
            self._last_path = (out[-1], out)
        return list(out)


def _past_broken(parent: Any, position: dict[str, int], broken: dict[str, Any]) -> Any:
    """A parent id that names a broken (skipped) line is replaced by that line's own parent."""
    seen = 0
    while parent.__class__ is str and parent not in position and parent in broken and seen < 1000:
        parent = broken[parent]
        seen += 1
    return parent


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
