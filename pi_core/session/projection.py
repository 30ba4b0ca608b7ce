"""From the entry tree to what the model sees (pi's ``buildSessionProjection``).

1. The path: from the leaf up the ``parentId`` links to a root, reversed.
2. Settings from the whole path: the last ``thinking_level_change`` gives the thinking level (default
   ``off``); the last ``model_change`` or assistant message gives the model.
3. The compaction window: if the path holds a compaction, the latest one comes first, then the entries
   before it from its ``firstKeptEntryId`` on (minus system messages, which its snapshot supersedes),
   then everything after it. Without ``firstKeptEntryId`` on the path nothing before it is kept.
4. Context edits inside the window: the last edit per target wins; ``replacement: null`` removes the
   target's contribution, otherwise only its content is replaced.
5. Each entry's contribution: a message entry its message; ``custom_message`` a ``custom`` message;
   ``branch_summary`` a ``branchSummary`` message (when the summary is not empty); the leading
   compaction its system snapshot (if any) and a ``compactionSummary``. Everything else contributes
   nothing — including entry types and message roles this version does not know (pi passes unknown
   roles on to its ``convertToLlm``, which drops them: the model input is the same).

All of this runs over the raw dicts; typed messages are made only when asked for.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from operator import attrgetter, itemgetter
from typing import Any, overload

from pi_core.ai.message_list import DeferredMessage, MessageList
from pi_core.ai.types import Message, PiModel

from .ids import iso_to_ms
from .index import (
    ASSISTANT,
    COMPACTION,
    CONTEXT_EDIT,
    MODEL_CHANGE,
    ODD_MESSAGE,
    CUSTOM,
    OTHER,
    PLAIN_MESSAGES,
    PLAIN_ROLES,
    SYSTEM,
    THINKING_CHANGE,
    TreeIndex,
)
from .messages import KNOWN_ROLES, agent_message, convert_to_llm
from .scan import no_line_where

Raw = dict[str, Any]
_EDITABLE_ROLES = frozenset({"user", "assistant", "toolResult", "custom"})
_BLOCK_ROLES = frozenset({"assistant", "toolResult"})
_LIST_CONTENT_ROLES = frozenset({"user", "assistant", "toolResult"})
_MISSING: Any = object()
_SILENT = (OTHER, CUSTOM, CONTEXT_EDIT, MODEL_CHANGE, THINKING_CHANGE)


class ModelRef(PiModel):
    """The model a session was last using: ``{"provider": ..., "modelId": ...}``."""

    provider: Any = None
    model_id: Any = None


class LazyMessages(Sequence[Any]):
    """The context's messages as pydantic models, each validated the first time it is read."""

    def __init__(self, raw: Sequence[Raw]) -> None:
        self._raw = raw
        self._made: list[Any] = [None] * len(raw)
        self.on_invalid: Any = None
        """Called with (index, error) when a stored message does not validate."""

    def __len__(self) -> int:
        return len(self._raw)

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        made = self._made[index]
        if made is None:
            raw = self._raw[index]
            try:
                made = agent_message(raw)
            except (ValueError, TypeError) as exc:  # pydantic's ValidationError is a ValueError
                # Lenient, as pi (which never validates): the message is left out of what the model
                # sees, reported, and kept in the file as it is.
                made = invalid_message(raw)
                if self.on_invalid is not None:
                    self.on_invalid(index, exc)
            self._made[index] = made
        return made

    def __iter__(self) -> Iterator[Any]:
        for i in range(len(self._raw)):
            yield self[i]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    def __repr__(self) -> str:
        return f"LazyMessages({len(self)} messages)"


class RawMessages(Sequence[Raw]):
    """The context's messages as pi's JSON dicts. A plain message is held as its entry's position and
    read from the store when first asked for (an entry of a file just opened is parsed only then)."""

    __slots__ = ("_items", "_tree")

    def __init__(self, items: list[Any], tree: TreeIndex) -> None:
        self._items, self._tree = items, tree

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: int) -> Raw: ...
    @overload
    def __getitem__(self, index: slice) -> list[Raw]: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        item = self._items[index]
        return self._tree.message(item) if item.__class__ is int else item

    def __iter__(self) -> Iterator[Raw]:
        message = self._tree.message
        for item in self._items:
            yield message(item) if item.__class__ is int else item

    @property
    def tree(self) -> TreeIndex:
        return self._tree

    def items(self) -> list[Any]:
        """The messages as held: an entry position (an int) for a stored message, else its dict."""
        return self._items

    def position(self, index: int) -> int | None:
        """The entry position message ``index`` is read from, if it is a stored message as is."""
        item = self._items[index]
        return item if item.__class__ is int else None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and len(self) == len(other) and list(self) == list(other)

    def __repr__(self) -> str:
        return f"RawMessages({len(self)} messages)"


class _Reporter:
    """Where a stored message that does not validate is reported (shared by a context's messages)."""

    __slots__ = ("lazy",)

    def __init__(self, lazy: LazyMessages) -> None:
        self.lazy = lazy

    def __call__(self, index: int, exc: Exception) -> None:
        if self.lazy.on_invalid is not None:
            self.lazy.on_invalid(index, exc)


class StoredMessage(DeferredMessage):
    """A plain message of the session file, typed when first read (:class:`~pi_core.ai.MessageList`).

    Request building reads it as a view decoded straight from its line (:mod:`pi_core.ai.views`),
    which neither types it nor keeps the entry; a line that does not decode as a view is typed."""

    __slots__ = ("role", "_tree", "_at", "_index", "_report", "_made")

    def __init__(self, role: Any, tree: TreeIndex, at: int, index: int, report: _Reporter) -> None:
        self.role, self._tree, self._at, self._index, self._report = role, tree, at, index, report
        self._made: Any = None

    def typed(self) -> Any:
        made = self._made
        if made is None:
            raw = self._tree.message(self._at)
            try:
                made = agent_message(raw)
            except (ValueError, TypeError) as exc:  # as LazyMessages: left out, reported, kept on disk
                made = invalid_message(raw)
                self._report(self._index, exc)
            self._made = made
        return made

    def view(self) -> Any:
        return StoredMessage.views_of([self])[0]

    @classmethod
    def views_of(cls, items: list[Any]) -> list[Any]:
        from pi_core.ai.views import VIEW_ROLES, entry_message_view, message_view

        out: list[Any] = [None] * len(items)
        unread: list[int] = []
        for n, item in enumerate(items):
            if item._made is not None:
                out[n] = None if getattr(item._made, "invalid", False) else item._made
            else:
                unread.append(n)
        if not unread:
            return out
        tree = items[unread[0]]._tree
        lines = tree.message_lines([items[n]._at for n in unread]) if all(
            items[n]._tree is tree for n in unread) else [items[n]._tree.message_lines([items[n]._at])[0]
                                                          for n in unread]
        for n, (entry_id, line) in zip(unread, lines):
            item = items[n]
            view = None
            if item.role in VIEW_ROLES:
                if line is None:
                    view = message_view(item._tree.message(item._at))
                else:
                    got_id, view = entry_message_view(line)
                    if got_id != entry_id:
                        view = None  # not the line it was: typing it says what is wrong
            if view is None:
                made = item.typed()
                view = None if getattr(made, "invalid", False) else made
            out[n] = view
        return out

    @classmethod
    def lines_of(cls, items: list[Any]) -> list[Any]:
        out: list[Any] = [None] * len(items)
        made = list(map(_MADE, items))
        unread = range(len(items)) if made.count(None) == len(items) else [n for n, m in enumerate(made) if m is None]
        tree = _one_tree(items if len(unread) == len(items) else [items[n] for n in unread])
        if tree is None and len(unread) > 1:  # messages of several sessions: one at a time
            for n in unread:
                out[n] = cls.lines_of([items[n]])[0]
        elif tree is not None:
            pairs = tree.message_lines([items[n]._at for n in unread])
            if len(unread) == len(items) and list(map(_LINE, pairs)).count(None) == 0:
                return pairs  # every one read from its line (a window of a long conversation)
            for n, pair in zip(unread, pairs):
                out[n] = pair if pair[1] is not None else None
        return out

    @classmethod
    def line_block_of(cls, items: list[Any]) -> Any:
        tree = _one_tree(items)
        if tree is None or list(map(_MADE, items)).count(None) != len(items):
            return None
        from pi_core.ai.message_list import LineBlock

        block = tree.message_line_block(list(map(_AT, items)))
        return None if block is None else LineBlock(*block)

    @classmethod
    def spans_of(cls, items: list[Any]) -> list[Any]:
        tree = _one_tree(items)
        if tree is None:
            return [item._tree.message_spans([item._at])[0] for item in items]
        return tree.message_spans(list(map(_AT, items)))

    @classmethod
    def span_columns(cls, items: list[Any]) -> Any:
        tree = _one_tree(items)
        if tree is None:
            return super().span_columns(items)
        return tree.message_span_columns(list(map(_AT, items)))

    @classmethod
    def line_columns_of(cls, items: list[Any]) -> Any:
        tree = _one_tree(items)
        if tree is None:
            return None
        columns = tree.message_line_columns(list(map(_AT, items)))
        if columns is not None:  # a typed message may have changed since it was read
            no_line_where(columns[2], list(map(_MADE, items)))
        return columns

    def __repr__(self) -> str:
        return f"StoredMessage({self.role!r}, position {self._at}, {'typed' if self._made is not None else 'not read'})"


_AT = attrgetter("_at")
_MADE = attrgetter("_made")
_TREE = attrgetter("_tree")
_LINE = itemgetter(1)


def _one_tree(items: list[StoredMessage]) -> TreeIndex | None:
    """The tree all of ``items`` belong to (``None`` if none or several)."""
    trees = set(map(_TREE, items))
    return trees.pop() if len(trees) == 1 else None


def invalid_message(raw: Any) -> Any:
    """What stands for a stored message that does not validate: an unknown message, never sent."""
    from .messages import UnknownMessage

    role = raw.get("role") if isinstance(raw, dict) else None
    return UnknownMessage.model_construct(role=f"invalid:{role}", invalid=True)


class SessionContext:
    """What a resumed session sends to the model, and the settings it resumes with.

    ``messages`` are :data:`~pi_core.session.messages.AgentMessage` models, made lazily (the first
    access of each one validates it); ``raw_messages`` are the same messages as pi's JSON dicts,
    shared with the store — treat them as read-only. ``source_ids[i]`` is the id of the entry that
    contributed message ``i`` (the target for :meth:`SessionManager.append_context_edit`).
    """

    def __init__(self, raw_messages: Sequence[Raw], source_ids: list[str | None], thinking_level: str,
                 model: ModelRef | None) -> None:
        self.raw_messages = raw_messages
        self.source_ids = source_ids
        self.thinking_level = thinking_level
        self.model = model
        self.messages = LazyMessages(raw_messages)

    def copy(self) -> SessionContext:
        """A new context of the same messages (shared: they are read-only) with nothing typed yet."""
        model = self.model.model_copy() if self.model is not None else None
        return SessionContext(self.raw_messages, list(self.source_ids), self.thinking_level, model)

    def message_list(self, role: str | None = None) -> MessageList:
        """``messages`` as a :class:`~pi_core.ai.MessageList`: stored plain messages stay unread until
        somebody reads them (request building reads them as views, without typing); the others (summaries,
        custom and edited messages) are typed now. The same context gives new items on every call.
        ``role``: only the messages of that role (told from the file's index and the dicts, so nothing
        else is made or typed)."""
        raw, lazy = self.raw_messages, self.messages
        if not isinstance(raw, RawMessages):
            return MessageList([m for m in lazy if role is None or getattr(m, "role", None) == role])
        tree, report, kinds, roles = raw.tree, _Reporter(lazy), raw.tree.kinds, PLAIN_ROLES
        items: list[Any] = []
        append = items.append
        for n, at in enumerate(raw.items()):
            if at.__class__ is int:
                # bashExecution and custom messages (kind MESSAGE) are typed now: they are converted anyway
                plain = roles.get(kinds[at])
                if role is not None and (plain or tree.message(at).get("role")) != role:
                    continue
                append(StoredMessage(plain, tree, at, n, report) if plain is not None else lazy[n])
            elif role is None or at.get("role") == role:
                append(lazy[n])
        return MessageList(items)

    def to_llm(self) -> list[Message]:
        """The messages converted to model input (:func:`~pi_core.session.messages.convert_to_llm`)."""
        return convert_to_llm(self.messages)

    def __repr__(self) -> str:
        return (f"SessionContext({len(self.raw_messages)} messages, "
                f"thinking_level={self.thinking_level!r}, model={self.model!r})")


def context_settings(tree: TreeIndex, path: list[int], path_kinds: bytes | None = None) -> tuple[str, ModelRef | None]:
    """The last thinking level change and the last model source on ``path`` (searched backwards).

    ``path_kinds`` (the kind code of each position of ``path``, see :func:`kinds_along`) lets the
    search run at C speed: on a long path whose thinking level was set once at its start, walking it
    back entry by entry was most of the projection."""
    kinds, entries = tree.kinds, tree.entries
    if path_kinds is None:
        path_kinds = kinds_along(tree, path)
    thinking: Any = _MISSING
    at = path_kinds.rfind(THINKING_CHANGE)
    if at >= 0:
        thinking = entries[path[at]].get("thinkingLevel")
    model: tuple[Any, Any] | None = None
    end = len(path_kinds)
    while end > 0:
        n = max(path_kinds.rfind(ASSISTANT, 0, end), path_kinds.rfind(ODD_MESSAGE, 0, end),
                path_kinds.rfind(MODEL_CHANGE, 0, end))
        if n < 0:
            break
        model = _model_source(entries[path[n]])
        if model is not None:
            break
        end = n
    ref = ModelRef(provider=model[0], model_id=model[1]) if model is not None else None
    return ("off" if thinking is _MISSING else thinking), ref


def kinds_along(tree: TreeIndex, path: list[int]) -> bytes:
    """The kind code of each position of ``path``, as bytes (built at C speed)."""
    if len(path) > 1:
        return bytes(itemgetter(*path)(tree.kinds))
    return bytes([tree.kinds[at] for at in path])


def _model_source(entry: Raw) -> tuple[Any, Any] | None:
    if entry.get("type") == "model_change":
        return entry.get("provider"), entry.get("modelId")
    message = entry.get("message")
    if message.__class__ is dict and message.get("role") == "assistant":
        return message.get("provider"), message.get("model")
    return None


def context_window(tree: TreeIndex, path: list[int], path_kinds: bytes | None = None) -> list[int]:
    """The compaction window of ``path`` (step 3 above), as positions."""
    kinds = tree.kinds
    if path_kinds is None:
        path_kinds = kinds_along(tree, path)
    last = path_kinds.rfind(COMPACTION)
    if last < 0:
        return path
    first_kept = tree.entries[path[last]].get("firstKeptEntryId")
    found = tree.first_on_path(path, first_kept, last) if first_kept.__class__ is str else None
    start = found if found is not None else last
    kept = [at for at in path[start:last] if kinds[at] != SYSTEM
            and not (kinds[at] == ODD_MESSAGE and _is_system_message(tree.entries[at]))]
    return [path[last], *kept, *path[last + 1:]]


def _is_system_message(entry: Raw) -> bool:
    message = entry.get("message")
    return (entry.get("type") == "message" and message.__class__ is dict
            and message.get("role") == "system")


def entry_messages(entry: Raw) -> list[Raw]:
    """The messages one entry contributes (step 5 above), before context edits."""
    kind = entry.get("type")
    if kind == "message":
        return _message_of(entry)
    if kind == "custom_message":
        return [_custom_message(entry)]
    if kind == "branch_summary":
        if not entry.get("summary"):
            return []
        return [_synthesized(entry, "branchSummary", ("summary", "fromId"))]
    if kind == "compaction":
        summary = _synthesized(entry, "compactionSummary", ("summary", "tokensBefore"))
        snapshot = entry.get("systemMessage")
        return [snapshot, summary] if snapshot.__class__ is dict else [summary]
    return []


def _synthesized(entry: Raw, role: str, keys: tuple[str, ...]) -> Raw:
    # Keys the entry lacks stay out, as JavaScript leaves out undefined.
    message: Raw = {"role": role}
    for key in keys:
        if key in entry:
            message[key] = entry[key]
    message["timestamp"] = iso_to_ms(entry.get("timestamp"))
    return message


def _message_of(entry: Raw) -> list[Raw]:
    message = entry.get("message")
    if message.__class__ is not dict:
        return []
    role = message.get("role")
    if role.__class__ is not str or role not in KNOWN_ROLES:
        return []  # pi passes these on and convertToLlm drops them; the model input is the same
    if message.get("content") is None:
        if role == "system":
            return [{**message, "content": ""}]
        if role in _LIST_CONTENT_ROLES:
            return [{**message, "content": []}]
    return [message]


def _custom_message(entry: Raw) -> Raw:
    content = entry.get("content")
    message: Raw = {"role": "custom", "customType": entry.get("customType"),
                    "content": content if content is not None else []}
    for key in ("display", "details"):
        if key in entry:
            message[key] = entry[key]
    message["timestamp"] = iso_to_ms(entry.get("timestamp"))
    return message


def apply_edit(messages: list[Raw], edit: Raw) -> list[Raw]:
    """``messages`` as changed by one ``context_edit`` entry (step 4 above)."""
    if "replacement" not in edit:
        return messages
    replacement = edit["replacement"]
    if replacement is None:
        return []
    if replacement.__class__ is not dict or "content" not in replacement:
        return messages
    content = replacement["content"]
    out = []
    for message in messages:
        role = message.get("role")
        if role.__class__ is str and role in _EDITABLE_ROLES:
            new = [{"type": "text", "text": content}] if (
                role in _BLOCK_ROLES and isinstance(content, str)) else content
            message = {**message, "content": new}
        out.append(message)
    return out


def project(tree: TreeIndex, path: list[int]) -> SessionContext:
    """The session context of the entries at ``path`` (steps 2-5 above)."""
    path_kinds = kinds_along(tree, path)
    thinking, model = context_settings(tree, path, path_kinds)
    window = context_window(tree, path, path_kinds)
    kinds, entries, ids = tree.kinds, tree.entries, tree.ids
    edits: dict[Any, Raw] = {}
    for at in window:
        if kinds[at] == CONTEXT_EDIT and entries[at].get("targetId").__class__ is str:
            edits[entries[at]["targetId"]] = entries[at]
    raw: list[Any] = []
    sources: list[str | None] = []
    add_message, add_source = raw.append, sources.append
    for n, at in enumerate(window):
        kind = kinds[at]
        if kind in PLAIN_MESSAGES and not (edits and ids[at] in edits):
            add_message(at)  # read when somebody reads it
            add_source(ids[at])
        elif kind in _SILENT or (kind == COMPACTION and n > 0):
            continue  # an older compaction inside the kept range says nothing
        else:
            contributed = entry_messages(entries[at])
            edit = edits.get(ids[at]) if edits else None
            if edit is not None:
                contributed = apply_edit(contributed, edit)
            raw.extend(contributed)
            sources.extend([ids[at]] * len(contributed))
    return SessionContext(RawMessages(raw, tree), sources, thinking, model)


def current_system_message(messages: Sequence[Raw]) -> Raw | None:
    """The system prompt and tools in force after ``messages`` (pi's ``getCurrentSystemMessage``).

    Texts of every system message are joined by blank lines, named sections are patched in order
    (``null`` removes one), tools are removed and added by name.
    """
    texts: list[str] = []
    sections: dict[str, Any] = {}
    tools: dict[Any, Any] = {}
    timestamp: Any = None
    for message in messages:
        if message.__class__ is not dict or message.get("role") != "system":
            continue
        if timestamp is None:
            timestamp = message.get("timestamp")
        text = _content_text(message.get("content"))
        if text:
            texts.append(text)
        _patch_sections(sections, message.get("sections"))
        _patch_tools(tools, message)
    if timestamp is None and not tools:
        return None
    out: Raw = {"role": "system", "content": "\n\n".join(texts)}
    if sections:
        out["sections"] = sections
    if tools:
        out["toolsAdded"] = list(tools.values())
    out["timestamp"] = timestamp if timestamp is not None else 0
    return out


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content
                         if b.__class__ is dict and b.get("type") == "text")
    return ""


def _patch_sections(sections: dict[str, Any], patch: Any) -> None:
    if patch.__class__ is not dict:
        return
    for name, value in patch.items():
        if value is None:
            sections.pop(name, None)
        else:
            sections[name] = value


def _patch_tools(tools: dict[Any, Any], message: Raw) -> None:
    for tool in message.get("toolsRemoved") or ():
        if tool.__class__ is dict:
            tools.pop(tool.get("name"), None)
    for tool in message.get("toolsAdded") or ():
        if tool.__class__ is dict:
            tools[tool.get("name")] = tool


__all__ = [
    "LazyMessages",
    "ModelRef",
    "RawMessages",
    "SessionContext",
    "StoredMessage",
    "apply_edit",
    "context_settings",
    "context_window",
    "current_system_message",
    "entry_messages",
    "kinds_along",
    "project",
]
