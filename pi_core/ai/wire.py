"""A request's conversation converted turn by turn, kept encoded, and reused by the next request.

On a long session almost all of a request is what the previous request sent. :class:`TurnCache`
converts a conversation one turn at a time (a turn starts at an assistant message; nothing before it
depends on what follows) and keeps each turn as the JSON text it encodes to; the next request on the
same conversation takes the turns whose messages are the very same items as they were (see
:meth:`pi_core.ai.MessageList.items`) and converts only the rest. The result, :class:`EncodedMessages`,
stays encoded on its way into the request body (:func:`encode_body`): a turn is converted and
serialized once per session, not once per request.

``EncodedMessages`` behaves as a list of dicts to anyone who looks (it decodes itself on first access,
and from then on the body is encoded from what was decoded, changes included), so hooks and tests see
the payload they always saw.
"""

from __future__ import annotations

import bisect
import functools
import operator
import os
import uuid
from array import array
from itertools import accumulate
from collections.abc import Callable, Iterable, Iterator, MutableSequence, Sequence
from typing import Any, overload

from .message_list import (MessageList, message_items, message_line_block, message_lines, message_span_columns,
                           message_views)

#: ``convert_turn(views, offset) -> (items, consumed)``: the wire items of one turn's messages (views
#: or models, invalid ones left out); ``offset`` is the sum of ``consumed`` over the turns before it
#: (for protocols that number messages across the conversation).
TurnConverter = Callable[[list[Any], int], tuple[list[dict[str, Any]], int]]

#: ``raw_turn(messages, offset) -> (items, consumed) | None``: the same from the raw views of the turn's
#: messages (:mod:`pi_core.ai.raw_views`), or ``None`` to have it converted from views instead. Its items
#: may hold :class:`msgspec.Raw` values (they are encoded, never handed out).
RawTurnConverter = Callable[[list[Any], int], "tuple[list[Any], int] | None"]


def remakeable(factory: Callable[..., Any], *args: Any) -> Any:
    """``factory(*args)`` (a raw converter, say), which pickles as that call: a helper process that is
    handed it (:mod:`pi_core.ai.turn_helper`) makes its own. ``factory`` must be a module's function
    and ``args`` picklable (a ``functools.partial`` of a module's function for a callback, not a lambda)."""
    made = factory(*args)
    if made is not None:
        made.__remake__ = (factory, args)
    return made


#: Objects a conversion may leave for the collector before they are frozen out of its way.
_FREEZE_AFTER = 20_000
#: How many messages are read (and their views held) at once while converting.
_WINDOW = 2048
_decode: Any = None


def _json_items(part: bytes) -> list[Any]:
    global _decode
    if _decode is None:
        import msgspec

        _decode = msgspec.json.Decoder().decode
    return _decode(b"[" + part + b"]") if part else []


def _encode_items(items: list[Any]) -> bytes:
    """The items as JSON, without the brackets of the array (``b""`` for none). A copy: a view of the
    encoded array would keep msgspec's output buffer, which measured 60 MB more on 50,000 turns."""
    return _encode_array(items)[1:-1] if items else b""


def _encode_array(items: list[Any]) -> bytes:
    """The items as a JSON array (a helper's turns: the brackets are cut where they are read)."""
    global _encode_json
    if _encode_json is None:
        from .http import encode_json

        _encode_json = encode_json
    return _encode_json(items)


_encode_json: Any = None


class EncodedMessages(MutableSequence[Any]):
    """The message array of a request: ``head`` items (dicts), the encoded turns, ``tail`` items (the
    last turn's dicts, which a provider may still change: a cache marker on the last message)."""

    __slots__ = ("head", "_parts", "_count", "tail", "_list")

    def __init__(self, head: list[dict[str, Any]], parts: list[bytes], count: int, tail: list[dict[str, Any]]) -> None:
        self.head, self._parts, self._count, self.tail = head, parts, count, tail
        self._list: list[Any] | None = None

    def materialize(self) -> list[Any]:
        """The items as a plain list of dicts (decoded once; the body is then encoded from it)."""
        if self._list is None:
            decoded: list[Any] = list(self.head)
            for part in self._parts:
                decoded += _json_items(part)
            decoded += self.tail
            self._list = decoded
        return self._list

    def chunks(self) -> Iterator[bytes]:
        """The array's JSON text in pieces (encoded turns as kept, the rest encoded now)."""
        if self._list is not None:
            yield b"[" + _encode_items(self._list) + b"]"
            return
        yield b"["
        first = True
        for piece in (_encode_items(self.head), *self._parts, _encode_items(self.tail)):
            if piece:
                if not first:
                    yield b","
                yield piece
                first = False
        yield b"]"

    def last(self) -> dict[str, Any] | None:
        """The last item, to change in place (decodes the last turn if the tail is empty)."""
        if self._list is not None:
            return self._list[-1] if self._list else None
        if not self.tail and self._parts:
            part = self._parts.pop()
            self.tail = _json_items(part)
            self._count -= len(self.tail)
        if self.tail:
            return self.tail[-1]
        return self.head[-1] if self.head else None

    def __len__(self) -> int:
        if self._list is not None:
            return len(self._list)
        return len(self.head) + self._count + len(self.tail)

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...
    def __getitem__(self, index: int | slice) -> Any:
        return self.materialize()[index]

    def __setitem__(self, index: Any, value: Any) -> None:
        self.materialize()[index] = value

    def __delitem__(self, index: int | slice) -> None:
        del self.materialize()[index]

    def insert(self, index: int, value: Any) -> None:
        self.materialize().insert(index, value)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.materialize())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, EncodedMessages):
            other = other.materialize()
        return self.materialize() == other

    __hash__ = None  # type: ignore[assignment]

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        import copy

        return copy.deepcopy(self.materialize(), memo)

    def __repr__(self) -> str:
        return f"EncodedMessages({len(self)} items)"


class _Turns:
    """One conversation's converted turns: where each starts, its offset, its encoded items."""

    __slots__ = ("items", "starts", "offsets", "parts", "counts")

    def __init__(self) -> None:
        self.items: list[Any] = []
        self.starts: list[int] = []
        self.offsets: list[int] = []
        self.parts: list[bytes] = []
        self.counts: list[int] = []


class TurnCache:
    """The turns of the last request of a few conversations (one per key: a model and its dialect).

    The first request of a process on a conversation read from a big session file also takes the turns
    a previous process stored for it (:mod:`pi_core.ai.turn_store`) and stores what it converts."""

    def __init__(self, size: int = 4, store: Any = "default") -> None:
        """``store``: a :class:`~pi_core.ai.turn_store.TurnStore`, ``None`` for none, or ``"default"``
        (``<agent dir>/cache/wire``, resolved when first needed)."""
        self.size = size
        self._by_key: dict[str, _Turns] = {}
        self._store = store

    def clear(self) -> None:
        self._by_key.clear()

    def convert(self, key: str, messages: Sequence[Any], convert_turn: TurnConverter,
                head: list[dict[str, Any]] | None = None,
                raw_turn: RawTurnConverter | None = None, independent: bool = False) -> EncodedMessages:
        """``head`` followed by the wire items of ``messages`` (the conversation, without system
        messages), converted turn by turn; turns of the last request under ``key`` whose messages are
        the same items are reused as they were encoded. ``raw_turn`` (optional) is asked first for a
        turn whose messages are all stored lines, except the last turn (whose items the caller gets).
        ``independent``: both converters ignore the offset and consume nothing, so the first conversion
        of a long conversation may hand its later turns to a forked helper
        (:mod:`pi_core.ai.turn_helper`)."""
        import gc

        enabled = gc.isenabled()
        gc.disable()  # converting makes many small objects, and frees them before it is done
        try:
            return self._convert(key, messages, convert_turn, head, raw_turn, independent)
        finally:
            if enabled:
                if gc.get_count()[0] > _FREEZE_AFTER:
                    # what a long conversion keeps (its turns) lives as long as the cache: the next
                    # collection would scan it all only to find it alive (10-15 ms after a first request
                    # on 100,000 messages), so it goes where start-up's objects are (pi_core.startup)
                    gc.freeze()
                gc.enable()

    def _convert(self, key: str, messages: Sequence[Any], convert_turn: TurnConverter,
                 head: list[dict[str, Any]] | None, raw_turn: RawTurnConverter | None,
                 independent: bool) -> EncodedMessages:
        items = message_items(messages)
        old = self._by_key.pop(key, None)
        turns = _Turns()
        begin, offset = 0, 0
        if old is not None:
            same = _common_prefix(old.items, items)
            # Turn k is the same if the next one starts (with the same assistant message) inside ``same``.
            keep = bisect.bisect_left(old.starts, same) - 1
            if keep > 0:
                begin, offset = old.starts[keep], old.offsets[keep]
                turns.starts, turns.offsets = old.starts[:keep], old.offsets[:keep]
                turns.parts, turns.counts = old.parts[:keep], old.counts[:keep]
        disk = None
        if old is None and isinstance(messages, MessageList):  # read from a session: maybe stored before
            disk = _Disk.open(self._turn_store(), key, items, convert_turn, raw_turn)
        stored: dict[int, Any] = {}
        if disk is not None:
            starts = _turn_starts(items, 0)
            begin, offset, stored = disk.reuse(starts, turns)
            starts = starts[bisect.bisect_left(starts, begin):]  # what _turn_starts(items, begin) gives
        else:
            starts = _turn_starts(items, begin)
        turns.items = items
        tail: list[dict[str, Any]] = []
        windows = list(_windows(starts, len(items)))
        helper = None
        if old is None and independent and raw_turn is not None and not stored:
            from .turn_helper import Helper

            helper = Helper.start(messages, starts, windows, raw_turn, _raw_views, _encode_array)
        elif old is None:
            from .turn_helper import let_go

            let_go()  # a helper reading ahead for a conversion that needs none
        try:
            for lo, hi in windows:
                if helper is not None and lo >= helper.begin:
                    stored.update(helper.results())
                    helper = None
                offset, tail = _convert_window(messages, lo, hi, starts, len(items), stored, offset, turns, convert_turn,
                                               raw_turn, tail)
        finally:
            if helper is not None:
                helper.abandon()
        if disk is not None:
            from .turn_store import in_background

            in_background(disk.save, turns, lock=disk.file, keep=(disk.source.fileno(),))
        self._by_key[key] = turns
        while len(self._by_key) > self.size:
            del self._by_key[next(iter(self._by_key))]
        parts = [p for p in turns.parts if p]
        return EncodedMessages(list(head or []), parts, sum(turns.counts), tail)

    def _turn_store(self) -> Any:
        if self._store != "default":
            return self._store
        from ..paths import agent_dir  # asked each time: the agent dir is the environment's
        from .turn_store import TurnStore

        return TurnStore(agent_dir() / "cache" / "wire")


def _convert_window(messages: Sequence[Any], lo: int, hi: int, starts: list[int], total: int, stored: dict[int, Any],
                    offset: int, turns: _Turns, convert_turn: TurnConverter, raw_turn: RawTurnConverter | None,
                    tail: list[dict[str, Any]]) -> tuple[int, list[dict[str, Any]]]:
    """Add the turns of ``messages[lo:hi]`` to ``turns`` (stored ones as they are, the others
    converted); the offset after them, and the last turn's items when it is among them."""
    views: list[Any] = []  # read for the turns that are converted, up to the next stored one
    first = lo
    bounds = starts[bisect.bisect_left(starts, lo):bisect.bisect_left(starts, hi)] + [hi]
    raws: list[Any] | None = None  # read when the window has a turn to convert
    for n, (start, end) in enumerate(zip(bounds, bounds[1:])):
        found = stored.get(start)
        if found is not None and found[3] == offset:  # stored after one that was not, or the helper's
            turns.starts.append(start)
            turns.offsets.append(offset)
            offset += found[2]
            turns.parts.append(found[0])
            turns.counts.append(found[1])
            continue
        done = None
        if raw_turn is not None and end < total:
            if raws is None:
                raws = _raw_views(messages, lo, hi)
            turn = raws[start - lo:end - lo]
            done = None if None in turn else raw_turn(turn, offset)
        if done is not None:
            converted, consumed = done
        else:
            if end > first + len(views):
                stop = end if raw_turn is not None else next((b for b in bounds[n + 1:-1] if b in stored), hi)
                first, views = start, message_views(messages, start, stop)
            turn = [v for v in views[start - first:end - first] if v is not None]
            converted, consumed = convert_turn(turn, offset)
        turns.starts.append(start)
        turns.offsets.append(offset)
        offset += consumed
        if end == total:  # the last turn: never reused as it is, left open for the caller
            tail = converted
            turns.parts.append(b"")
            turns.counts.append(0)
        else:
            turns.parts.append(_encode_items(converted))
            turns.counts.append(len(converted))
    return offset, tail


def _raw_views(messages: Sequence[Any], lo: int, hi: int) -> list[Any]:
    """The raw views of ``messages[lo:hi]`` (see :mod:`.raw_views`); ``None`` for those that have none."""
    from .raw_views import decode_block, decode_lines

    block = message_line_block(messages, lo, hi)
    views = None if block is None else decode_block(block)
    return views if views is not None else decode_lines(message_lines(messages, lo, hi))


class _Disk:
    """The stored turns of one conversation read from one session file (see :mod:`.turn_store`)."""

    def __init__(self, store: Any, file: Any, source: Any, items: list[Any], columns: Any) -> None:
        """``columns``: :func:`message_span_columns` of ``items``, or only of the first of them (their
        source); the rest is read when it is needed."""
        from .turn_store import PrefixCrc

        self.store, self.file, self.source = store, file, source
        self._items, self._columns = items, columns
        self.loaded = store.load(file)
        self.matched = 0
        self.last = -1
        self.prefix = PrefixCrc(source)

    @classmethod
    def open(cls, store: Any, key: str, items: list[Any], *converters: Any) -> _Disk | None:
        """``items``: the conversation's (:func:`message_items`); ``converters``: the functions converting
        turns (stored turns are kept per version of their code)."""
        if store is None or store.folder is None or os.name == "nt":  # no flock to write it with
            return None
        from .turn_store import MIN_SOURCE, code_version, source_size

        # where the messages are stored is where the first one is (see message_span_columns); the
        # columns of all of them are made when stored turns are compared or saved: with no stored turns,
        # after the request has gone
        columns = message_span_columns(MessageList(items[:1])) or message_span_columns(MessageList(items))
        if columns is None or source_size(columns[0]) < MIN_SOURCE:
            return None
        codes = [getattr(f, "__code__", None) for f in converters if f is not None]
        file = store.file_for(columns[0], key, "".join(code_version(c.co_filename if c else "") for c in codes))
        if file is None:
            return None
        from .turn_store import OwnReader

        try:
            source = OwnReader(columns[0])
        except (OSError, AttributeError, TypeError):
            return None
        return cls(store, file, source, items, columns)

    @functools.cached_property
    def pairs(self) -> array:
        """The ``(offset, length)`` of every message in the file, flat (length 0: not read from it)."""
        columns = self._columns
        if len(columns[1]) != len(self._items):  # the same source: the first message's
            columns = message_span_columns(MessageList(self._items))
        pairs = array("q", bytes(16 * len(self._items)))
        pairs[0::2], pairs[1::2] = columns[1:]
        return pairs

    @functools.cached_property
    def outside(self) -> list[int]:
        """The messages not read from the file."""
        lengths = self.pairs[1::2]
        return [n for n, length in enumerate(lengths) if not length] if 0 in lengths else []

    def _stored_messages(self, lo: int, hi: int) -> bool:
        outside = self.outside
        return not outside or bisect.bisect_left(outside, lo) == bisect.bisect_left(outside, hi)

    def reuse(self, starts: list[int], turns: _Turns) -> tuple[int, int, dict[int, Any]]:
        """Take the stored turns that still hold. The first ones go into ``turns`` (compared as whole
        columns); ``(begin, offset)`` is where converting goes on, and the dict gives the stored turns
        found after it, by where they start (after a turn holding a message not read from the file,
        which is never stored: a summary, a plugin's message, an edited one)."""
        loaded = self.loaded
        limit = min(len(loaded), len(starts) - 1)  # the last turn is never stored
        if limit <= 0:
            return (starts[0] if starts else 0), 0, {}
        if self.outside:  # the columns hold for the turns before the first one not stored
            limit = min(limit, bisect.bisect_right(starts, self.outside[0]) - 1)
        lengths = array("q", [hi - lo for lo, hi in zip(starts, starts[1:limit + 1])])
        if loaded.messages[:limit] != lengths:
            limit = next(t for t in range(limit) if loaded.messages[t] != lengths[t])
        ends = list(accumulate(loaded.messages[:limit]))  # messages before each turn's end
        count = ends[limit - 1] if limit else 0
        if loaded.spans[:2 * count] != self.pairs[2 * starts[0]:2 * (starts[0] + count)]:
            first = next(k for k in range(2 * count) if loaded.spans[k] != self.pairs[2 * starts[0] + k]) // 2
            limit = bisect.bisect_right(ends, first)
        while limit and self.prefix.advance(loaded.end[limit - 1]) != loaded.crc[limit - 1]:
            limit = self._crc_limit(limit)
        self.matched = limit
        self.last = limit - 1  # the last turn of the conversation taken from the store
        offsets = list(accumulate(loaded.consumed[:limit], initial=0))
        turns.starts, turns.offsets = starts[:limit], offsets[:limit]
        turns.parts, turns.counts = loaded.parts[:limit], list(loaded.count[:limit])
        return starts[limit], offsets[-1], self._later(starts, limit) if self.outside else {}

    def _later(self, starts: list[int], turn: int) -> dict[int, Any]:
        """Stored turns matched one by one from conversation turn ``turn`` on (see :meth:`reuse`)."""
        loaded, found = self.loaded, {}
        first_span = 2 * sum(loaded.messages[:self.matched])
        record = self.matched
        for t in range(turn, len(starts) - 1):
            if record >= len(loaded):
                break
            lo, hi = starts[t], starts[t + 1]
            if not self._stored_messages(lo, hi):
                continue
            size = 2 * (hi - lo)
            if loaded.messages[record] != hi - lo or loaded.spans[first_span:first_span + size] != self.pairs[2 * lo:2 * hi] \
                    or self.prefix.advance(loaded.end[record]) != loaded.crc[record]:
                break
            found[lo] = (loaded.parts[record], loaded.count[record], loaded.consumed[record], loaded.offset[record])
            first_span += size
            record += 1
            self.last = t
        self.matched = record
        return found

    def _crc_limit(self, limit: int) -> int:
        """How many of the first ``limit`` turns still match the file, checked turn by turn."""
        from .turn_store import PrefixCrc

        self.prefix = PrefixCrc(self.source)
        for t in range(limit):
            if self.prefix.advance(self.loaded.end[t]) != self.loaded.crc[t]:
                self.prefix = PrefixCrc(self.source)
                return t
        return limit  # pragma: no cover - the file changed back while it was read

    def save(self, turns: _Turns) -> None:
        """Store the turns converted after the last one taken from the store (those read from the file
        only), after the stored ones that matched."""
        try:
            self._save(turns)
        finally:
            self.source.close()

    def _save(self, turns: _Turns) -> None:
        from .turn_store import PrefixCrc

        matched, loaded = self.matched, self.loaded
        end = loaded.end[matched - 1] if matched else 0
        prefix = PrefixCrc(self.source)
        if matched and prefix.advance(end) != loaded.crc[matched - 1]:
            return
        starts, pairs = turns.starts, self.pairs
        chosen: Sequence[int] = range(self.last + 1, len(starts) - 1)  # the last turn is never stored
        if self.outside:
            chosen = [t for t in chosen if self._stored_messages(starts[t], starts[t + 1])]
        # along a path the lines only move forward in the file: a turn ends where its last line does
        forward = all(map(operator.lt, pairs[0::2], pairs[2::2]))
        if forward:
            lasts = [2 * starts[t + 1] - 2 for t in chosen]
            line_ends: Iterable[int] = map(operator.add, map(pairs.__getitem__, lasts),
                                           map(pairs.__getitem__, [k + 1 for k in lasts]))
        else:
            line_ends = (max(pairs[k] + pairs[k + 1] for k in range(2 * starts[t], 2 * starts[t + 1], 2))
                         for t in chosen)
        ends = list(accumulate(line_ends, max, initial=end))[1:]
        crcs = prefix.advance_all(ends)  # fewer when the file is shorter than a turn's end
        chosen = chosen[:len(crcs)]
        if not chosen:
            return
        out = loaded.head(matched)
        offsets = turns.offsets
        spans = array("q")
        for lo, hi in _runs([(starts[t], starts[t + 1]) for t in chosen]):
            spans += pairs[2 * lo:2 * hi]
        out.extend(ends[:len(crcs)], crcs, [turns.parts[t] for t in chosen], [turns.counts[t] for t in chosen],
                   [offsets[t + 1] - offsets[t] for t in chosen], [offsets[t] for t in chosen],
                   [starts[t + 1] - starts[t] for t in chosen], spans)
        self.store.save(self.file, out, matched, loaded)


def _runs(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``ranges`` (in order) with the ones that touch merged."""
    out: list[tuple[int, int]] = []
    for lo, hi in ranges:
        if out and out[-1][1] == lo:
            out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return out


def _common_prefix(old: list[Any], new: list[Any]) -> int:
    n = min(len(old), len(new))
    if all(map(operator.is_, old[:n], new[:n])):
        return n
    return next(i for i in range(n) if old[i] is not new[i])


def _turn_starts(items: list[Any], begin: int) -> list[int]:
    """Where the turns from ``begin`` on start: ``begin``, then before each assistant message."""
    if begin >= len(items):
        return []
    starts = [begin]
    for i in range(begin + 1, len(items)):
        if getattr(items[i], "role", None) == "assistant":
            starts.append(i)
    return starts


def _windows(starts: list[int], end: int) -> Iterable[tuple[int, int]]:
    """Ranges of whole turns of about ``_WINDOW`` messages."""
    if not starts:
        return
    lo = starts[0]
    for start in starts[1:]:
        if start - lo >= _WINDOW:
            yield lo, start
            lo = start
    yield lo, end


# -- the body ----------------------------------------------------------------------------------------
_MARK = "pi-encoded-" + uuid.uuid4().hex


def encode_body(payload: Any) -> bytes | list[bytes]:
    """The JSON body of ``payload``: ``bytes``, or the body in pieces when a top-level value is
    :class:`EncodedMessages` (its turns go out as they were encoded)."""
    from .http import encode_json

    if not isinstance(payload, dict):
        return encode_json(payload)
    found = next((k for k, v in payload.items() if isinstance(v, EncodedMessages)), None)
    if found is None:
        return encode_json(payload)
    encoded = payload[found]
    text = encode_json({**payload, found: _MARK})
    before, _, after = text.partition(b'"' + _MARK.encode() + b'"')
    return [before, *encoded.chunks(), after]


def body_bytes(payload: Any) -> bytes:
    """:func:`encode_body` joined (for a body that must be signed or hashed whole)."""
    body = encode_body(payload)
    return body if isinstance(body, bytes) else b"".join(body)


class BodyStream:
    """An async iterable over a body's pieces, joined into writes of about a megabyte (re-iterable, so
    a retried request can send it again)."""

    WRITE = 1 << 20

    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = pieces
        self.length = sum(map(len, pieces))

    async def __aiter__(self) -> Any:
        pending: list[bytes] = []
        size = 0
        for piece in self.pieces:
            if len(piece) >= self.WRITE and not pending:
                yield bytes(piece)  # a part may be a memoryview of the stored turns
                continue
            pending.append(piece)
            size += len(piece)
            if size >= self.WRITE:
                yield b"".join(pending)
                pending, size = [], 0
        if pending:
            yield b"".join(pending)


__all__ = ["BodyStream", "EncodedMessages", "RawTurnConverter", "TurnCache", "TurnConverter", "body_bytes",
           "encode_body", "remakeable"]
