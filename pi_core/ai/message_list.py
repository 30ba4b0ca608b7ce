"""A transcript whose messages are typed when they are read.

A session opened from a file hands its messages on as :class:`DeferredMessage` items (a position in
the file and a role); :class:`MessageList` holds them beside ordinary models and validates each one the
first time somebody reads it, so a long session costs nothing for the messages nobody looks at. Request
building reads them without typing at all (:meth:`MessageList.views`, the read-only views of
:mod:`pi_core.ai.views`), and a provider can tell an unchanged message from the last request by its
item (:meth:`MessageList.items`), which stays the same object for as long as the transcript holds it.

To everybody else a ``MessageList`` is a list of models: indexing, iterating, slicing (a plain list),
``append``/``insert``/``pop``/``del``, ``len``, ``in`` and ``==``; ``copy.deepcopy`` gives a plain list of
copies (what plugin hooks receive).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator, MutableSequence, Sequence
from typing import Any, NamedTuple, overload


class DeferredMessage:
    """A message whose role is known but whose content has not been read or typed yet.

    Subclasses (the session store's) implement :meth:`typed` and may implement :meth:`view` and, to
    read many at once, :meth:`views_of`.
    """

    __slots__ = ()
    role: Any

    def typed(self) -> Any:
        """The message as its model (validated on first call, the same object afterwards)."""
        raise NotImplementedError

    def view(self) -> Any:
        """A read-only view for request building (:mod:`pi_core.ai.views`) or the model itself;
        ``None`` when the message contributes nothing (it does not validate)."""
        return self.typed()

    @classmethod
    def views_of(cls, items: list[Any]) -> list[Any]:
        """:meth:`view` of each of ``items`` (all of this class), possibly reading them in one go."""
        return [item.view() for item in items]

    @classmethod
    def lines_of(cls, items: list[Any]) -> list[Any]:
        """The stored line of each of ``items`` (all of this class): ``(entry id, line bytes)`` when the
        message is the ``message`` of the entry of that id on that line and nothing has changed it since
        (it has not been typed), else ``None`` (read it as a view; see :mod:`pi_core.ai.raw_views`)."""
        return [None] * len(items)

    @classmethod
    def line_block_of(cls, items: list[Any]) -> LineBlock | None:
        """The stored lines of ``items`` (all of this class) read as one block of bytes, when they are
        lines of one file not far apart, in order, none typed (as :meth:`lines_of` has them); ``None``
        otherwise (read them with :meth:`lines_of`)."""
        return None

    @classmethod
    def spans_of(cls, items: list[Any]) -> list[Any]:
        """Where each of ``items`` (all of this class) is stored: ``(source, offset, length)`` when the
        message is read from exactly those bytes of ``source`` (an object with ``path`` and
        ``read(offset, length)``: the same bytes always make the same message), else ``None``."""
        return [None] * len(items)

    @classmethod
    def span_columns(cls, items: list[Any]) -> Any:
        """:meth:`spans_of` as columns, for many messages at once: ``(source, offsets, lengths)`` (two
        ``array("q")``; length 0 where a message is not stored in ``source``), or ``None`` when none
        is stored."""
        return _columns(cls.spans_of(items))

    @classmethod
    def line_columns_of(cls, items: list[Any]) -> Any:
        """Where the lines :meth:`lines_of` gives are, without reading them: :meth:`span_columns` with
        length 0 for each message it gives no line for; ``None`` when that cannot be told (then read
        them with :meth:`lines_of`)."""
        return None


class LineBlock(NamedTuple):
    """Stored lines read as one block of bytes (see :meth:`DeferredMessage.line_block_of`)."""

    data: bytes
    """``lines`` lines of a file as they are, newline-separated; lines of other entries may be among them."""
    lines: int
    at: Sequence[int]
    """The line of each message in ``data`` (0 is the first)."""
    ids: list[Any]
    """The id of the entry each message is the ``message`` of."""


def _columns(spans: list[Any]) -> Any:
    from array import array

    source = next((span[0] for span in spans if span is not None), None)
    if source is None:
        return None
    spans = [span if span is not None and span[0] is source else (source, 0, 0) for span in spans]
    return source, array("q", [span[1] for span in spans]), array("q", [span[2] for span in spans])


def _typed(item: Any) -> Any:
    return item.typed() if isinstance(item, DeferredMessage) else item


class MessageList(MutableSequence[Any]):
    """A list of messages, some of which may be :class:`DeferredMessage` items typed on first read."""

    __slots__ = ("_items", "_roles")

    def __init__(self, items: Iterable[Any] = (), roles: frozenset[str] | None = None) -> None:
        """``roles``: when given, reading (iterating, slicing, copying) leaves out a message whose model
        turns out to have another role — a stored message that does not validate reads as an
        ``invalid:...`` one, which a model's input must not hold."""
        self._items: list[Any] = items.items() if isinstance(items, MessageList) else list(items)
        self._roles = roles

    # -- what makes it lazy ------------------------------------------------------------------

    def items(self) -> list[Any]:
        """The items as held: models and not yet typed :class:`DeferredMessage` items (a copy of the
        list; each item has a ``role``)."""
        return list(self._items)

    def views(self, start: int = 0, stop: int | None = None) -> list[Any]:
        """Messages ``start:stop`` for request building: models as they are, deferred ones as views
        (or models); ``None`` for one that contributes nothing."""
        items = self._items[start:stop]
        return self._read_deferred(items, "views_of", list(items))

    def lines(self, start: int = 0, stop: int | None = None) -> list[Any]:
        """The stored lines of messages ``start:stop`` (see :meth:`DeferredMessage.lines_of`); ``None`` for
        models and for deferred messages not read from a line."""
        items = self._items[start:stop]
        return self._read_deferred(items, "lines_of", [None] * len(items))

    @staticmethod
    def _read_deferred(items: list[Any], read: str, out: list[Any]) -> list[Any]:
        """``out`` with the deferred ones among ``items`` replaced by what their class's ``read`` gives
        for them (one call per class)."""
        kinds = set(map(type, items))
        if len(kinds) == 1 and issubclass(kind := kinds.pop(), DeferredMessage):  # all of one class: one call
            return getattr(kind, read)(items)
        batches: dict[type, list[int]] = {}
        for n, item in enumerate(items):
            if isinstance(item, DeferredMessage):
                batches.setdefault(type(item), []).append(n)
        for kind, where in batches.items():
            for n, value in zip(where, getattr(kind, read)([items[n] for n in where])):
                out[n] = value
        return out

    def line_block(self, start: int = 0, stop: int | None = None) -> LineBlock | None:
        """The stored lines of messages ``start:stop`` as one block (see
        :meth:`DeferredMessage.line_block_of`); ``None`` unless they are deferred messages of one class."""
        items = self._items[start:stop]
        kinds = set(map(type, items))
        if len(kinds) == 1 and issubclass(kind := kinds.pop(), DeferredMessage):
            return kind.line_block_of(items)
        return None

    def line_columns(self, start: int = 0, stop: int | None = None) -> Any:
        """Where the stored lines of messages ``start:stop`` are (see
        :meth:`DeferredMessage.line_columns_of`; length 0 for the models among them); ``None`` unless the
        deferred ones are of one class."""
        from array import array

        items = self._items[start:stop]
        kinds = set(map(type, items))
        deferred = [kind for kind in kinds if issubclass(kind, DeferredMessage)]
        if len(deferred) != 1:
            return None
        kind = deferred[0]
        if len(kinds) == 1:
            return kind.line_columns_of(items)
        where = [n for n, item in enumerate(items) if type(item) is kind]
        columns = kind.line_columns_of([items[n] for n in where])
        if columns is None:
            return None
        offsets, lengths = array("q", bytes(8 * len(items))), array("q", bytes(8 * len(items)))
        for n, offset, length in zip(where, columns[1], columns[2]):
            offsets[n], lengths[n] = offset, length
        return columns[0], offsets, lengths

    def spans(self) -> list[Any]:
        """Where each item is stored (see :meth:`DeferredMessage.spans_of`); ``None`` for models."""
        items = self._items
        kinds = set(map(type, items))
        out: list[Any] = [None] * len(items)
        for kind in kinds:
            if issubclass(kind, DeferredMessage):
                where = [n for n, item in enumerate(items) if type(item) is kind]
                for n, span in zip(where, kind.spans_of([items[n] for n in where])):
                    out[n] = span
        return out

    def span_columns(self) -> Any:
        """:meth:`spans` as columns (see :meth:`DeferredMessage.span_columns`)."""
        items = self._items
        end = len(items)
        while end and not isinstance(items[end - 1], DeferredMessage):  # the messages of this run, if any
            end -= 1
        kinds = set(map(type, items[:end]))
        if len(kinds) == 1 and issubclass(kind := next(iter(kinds)), DeferredMessage):  # a resumed session
            columns = kind.span_columns(items[:end] if end < len(items) else items)
            if columns is not None and end < len(items):  # no stored line for the new ones
                columns[1].extend([0] * (len(items) - end))
                columns[2].extend([0] * (len(items) - end))
            return columns
        return _columns(self.spans())

    def without_role(self, role: str) -> MessageList:
        """A new list without the messages of ``role`` (read from the items: nothing is typed)."""
        return MessageList([item for item in self._items if getattr(item, "role", None) != role], self._roles)

    # -- the list protocol -----------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return self._kept(_typed(item) for item in self._items[index])
        return _typed(self._items[index])

    def _kept(self, messages: Iterable[Any]) -> list[Any]:
        roles = self._roles
        if roles is None:
            return list(messages)
        return [m for m in messages if getattr(m, "role", None) in roles]

    def __setitem__(self, index: Any, value: Any) -> None:
        if isinstance(index, slice):
            self._items[index] = value.items() if isinstance(value, MessageList) else list(value)
        else:
            self._items[index] = value

    def __delitem__(self, index: int | slice) -> None:
        del self._items[index]

    def insert(self, index: int, value: Any) -> None:
        self._items.insert(index, value)

    def append(self, value: Any) -> None:
        self._items.append(value)

    def extend(self, values: Iterable[Any]) -> None:
        self._items.extend(values.items() if isinstance(values, MessageList) else values)

    def clear(self) -> None:
        self._items.clear()

    def __iter__(self) -> Iterator[Any]:
        roles = self._roles
        for item in self._items:
            message = _typed(item)
            if roles is None or getattr(message, "role", None) in roles:
                yield message

    def __contains__(self, value: object) -> bool:
        if any(item is value for item in self._items):
            return True
        return any(m == value for m in self)

    def index(self, value: Any, start: int = 0, stop: int | None = None) -> int:
        items = self._items[start:stop]
        for n, item in enumerate(items):
            if item is value:
                return start + n
        for n, item in enumerate(items):
            if _typed(item) == value:
                return start + n
        raise ValueError(f"{value!r} is not in the list")

    def copy(self) -> MessageList:
        return MessageList(self._items, self._roles)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return [copy.deepcopy(message, memo) for message in self]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, MessageList) and other._items == self._items:
            return True
        if not isinstance(other, (list, tuple, MessageList)):
            return NotImplemented
        return len(self) == len(other) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        deferred = sum(isinstance(item, DeferredMessage) for item in self._items)
        return f"MessageList({len(self)} messages, {deferred} not read)"


def message_items(messages: Any) -> list[Any]:
    """The items of ``messages`` as held (see :meth:`MessageList.items`); a plain sequence as it is."""
    return messages.items() if isinstance(messages, MessageList) else list(messages)


def message_views(messages: Any, start: int = 0, stop: int | None = None) -> list[Any]:
    """``messages[start:stop]`` for request building (see :meth:`MessageList.views`)."""
    if isinstance(messages, MessageList):
        return messages.views(start, stop)
    return list(messages[start:stop])


def message_lines(messages: Any, start: int = 0, stop: int | None = None) -> list[Any]:
    """The stored lines of ``messages[start:stop]`` (see :meth:`MessageList.lines`); ``None`` for each
    message of a plain sequence."""
    if isinstance(messages, MessageList):
        return messages.lines(start, stop)
    return [None] * len(messages[start:stop])


def message_line_block(messages: Any, start: int = 0, stop: int | None = None) -> LineBlock | None:
    """The stored lines of ``messages[start:stop]`` as one block (see :meth:`MessageList.line_block`);
    ``None`` for a plain sequence."""
    return messages.line_block(start, stop) if isinstance(messages, MessageList) else None


def message_line_columns(messages: Any, start: int = 0, stop: int | None = None) -> Any:
    """Where the stored lines of ``messages[start:stop]`` are (see :meth:`MessageList.line_columns`);
    ``None`` for a plain sequence."""
    return messages.line_columns(start, stop) if isinstance(messages, MessageList) else None


def message_span_columns(messages: Any) -> Any:
    """Where ``messages`` are stored, as columns (see :meth:`MessageList.span_columns`); ``None`` for a
    plain sequence."""
    return messages.span_columns() if isinstance(messages, MessageList) else None


__all__ = ["DeferredMessage", "LineBlock", "MessageList", "message_items", "message_line_block",
           "message_line_columns", "message_lines", "message_span_columns", "message_views"]
