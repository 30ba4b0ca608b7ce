"""Views of stored messages decoded for converting a whole turn at once, tool call arguments kept as JSON.

The first request on a long session converts every stored message. The usual way (views of
:mod:`pi_core.ai.views` through :func:`~pi_core.ai.transform_messages` and a provider's converter) builds
several objects per message; a provider may instead convert the common turns straight from the raw views
here, in one pass of its own, and hand :class:`~pi_core.ai.wire.TurnCache` that ``raw_turn`` converter
beside its usual one. The cache asks it first for every turn whose messages are all lines of the session
file, and converts the turn the usual way whenever it declines (returns ``None``): an image, an id its
protocol renames, whatever it does not handle.

A raw view is the view with a tool call's ``arguments`` kept as the bytes of its JSON
(:class:`msgspec.Raw`, see :func:`raw_json_text`): a request carries them as JSON text anyway. Like a view
it has ``role`` (messages) and ``type`` (blocks) as class attributes.
:func:`decode_lines` accepts exactly the lines whose messages decode as views (the structs are made from
the views' own fields), so a message the usual way would leave out never reaches a raw converter. A line
holding an unpaired surrogate (an escape JSON allows and UTF-8 cannot hold) does not decode here either;
the usual way removes it.
"""

from __future__ import annotations

import operator
import os
import types
import typing
from collections.abc import Callable
from itertools import accumulate
from typing import Any

import msgspec

from . import views
from .message_list import LineBlock

Raw = msgspec.Raw

#: The fields kept as JSON text.
_RAW_FIELDS: dict[type, set[str]] = {views.ToolCallView: {"arguments"}}
_TWINS: dict[type, type] = {}


def _swap(annotation: Any) -> Any:
    """``annotation`` with every view class replaced by its raw twin."""
    if isinstance(annotation, type):
        return _TWINS.get(annotation, annotation)
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        return typing.Union[tuple(_swap(a) for a in args)]
    if origin is list:
        return list[_swap(args[0])]  # type: ignore[misc]
    return annotation


def _twin(view: type) -> type:
    raw = _RAW_FIELDS.get(view, set())
    fields: list[Any] = []
    for f in msgspec.structs.fields(view):
        if f.name in raw:
            default = f.default if f.default_factory is msgspec.NODEFAULT else f.default_factory()
            fields.append((f.name, Raw) if default is msgspec.NODEFAULT
                          else (f.name, Raw, Raw(msgspec.json.encode(default))))
        elif f.default is not msgspec.NODEFAULT:
            fields.append((f.name, _swap(f.type), f.default))
        elif f.default_factory is not msgspec.NODEFAULT:
            fields.append((f.name, _swap(f.type), msgspec.field(default_factory=f.default_factory)))
        else:
            fields.append((f.name, _swap(f.type)))
    config = view.__struct_config__
    name = "Raw" + view.__name__.removesuffix("MessageView").removesuffix("View")
    # gc=False: a raw view holds strings, numbers and other raw views, never a cycle
    twin = msgspec.defstruct(name, fields, tag_field=config.tag_field, tag=config.tag, rename="camel",
                             module=__name__, gc=False)
    for name in ("role", "type"):  # told apart like the views (and the models) where that is enough
        if hasattr(view, name):
            setattr(twin, name, getattr(view, name))
    _TWINS[view] = twin
    return twin


RawText = _twin(views.TextView)
RawThinking = _twin(views.ThinkingView)
RawImage = _twin(views.ImageView)
RawToolCall = _twin(views.ToolCallView)
RawUser = _twin(views.UserMessageView)
RawAssistant = _twin(views.AssistantMessageView)
RawToolResult = _twin(views.ToolResultMessageView)


class _Entry(msgspec.Struct, gc=False):
    id: Any
    message: typing.Union[RawUser, RawAssistant, RawToolResult]  # type: ignore[valid-type]


class _Line(msgspec.Struct, gc=False):
    """Any line of a block (:func:`decode_block`): the entries of other kinds among the messages' have none."""

    id: Any
    message: typing.Optional[typing.Union[RawUser, RawAssistant, RawToolResult]] = None  # type: ignore[valid-type]


_decode_entry = msgspec.json.Decoder(_Entry).decode
_decode_block = msgspec.json.Decoder(_Line).decode_lines
_DECLINED = (msgspec.ValidationError, msgspec.DecodeError)
_ID = operator.attrgetter("id")
_MESSAGE = operator.attrgetter("message")


def decode_lines(lines: list[Any]) -> list[Any]:
    """The raw view of the message of each ``(entry id, line)`` pair (see
    :meth:`pi_core.ai.MessageList.lines`), ``None`` where the pair is missing, the line is not the entry
    of that id or does not decode as a user, assistant or tool result view (an unpaired surrogate does not)."""
    out: list[Any] = [None] * len(lines)
    start = 0
    while start < len(lines):
        try:
            stop = lines.index(None, start)
        except ValueError:
            stop = len(lines)
        if stop > start:
            out[start:stop] = _decode_run(lines[start:stop])
        start = stop + 1
    return out


def decode_block(block: Any) -> list[Any] | None:
    """The raw views of the messages of a :class:`~pi_core.ai.LineBlock`, all in one go at C speed, with
    no copy of its bytes; ``None`` unless every line of it decodes and each message is the entry of its
    id with a message that decodes as a view (then read them one by one: :func:`decode_lines`)."""
    try:
        decoded = _decode_block(block.data)
    except _DECLINED:
        return None
    if len(decoded) != block.lines:
        return None
    picked = decoded if len(block.at) == block.lines else list(map(decoded.__getitem__, block.at))
    if list(map(_ID, picked)) != block.ids:
        return None
    messages = list(map(_MESSAGE, picked))
    return None if messages.count(None) else messages


def _decode_run(pairs: list[Any]) -> list[Any]:
    """All of them in one go, at C speed, when they are all good (the usual case); else one by one."""
    ids, texts = zip(*pairs)
    views = decode_block(LineBlock(b"\n".join(texts), len(texts), range(len(texts)), list(ids)))
    return views if views is not None else [_decode_line(pair) for pair in pairs]


def _decode_line(pair: Any) -> Any:
    try:
        entry = _decode_entry(pair[1])
    except _DECLINED:
        return None
    return entry.message if entry.id == pair[0] else None


class LineViews:
    """The raw views of a session file's lines by where they are, decoded a block at a time before they
    are asked for (see :func:`pi_core.ai.turn_helper.read_ahead`)."""

    def __init__(self, fd: int, watch: bytes = b"") -> None:
        """``watch``: the start of a line to look out for (a newline and the line's first bytes)."""
        self.fd, self.watch = fd, watch
        self.by_offset: dict[int, tuple[int, Any]] = {}
        """``offset -> (length, raw view or None)`` of every line decoded."""
        self.found: int | None = None
        """Where the last line decoded that starts with ``watch`` starts, if any."""

    def decode_before(self, end: int, size: int) -> int:
        """Decode the whole lines of the ``size`` bytes before ``end`` (a line's start, or the file's
        end); where the first of them starts (0 at the file's start)."""
        start = max(0, end - size)
        data = os.pread(self.fd, end - start, start)
        if start:
            cut = data.find(b"\n")
            if cut < 0:  # a line longer than the block: decoded when asked for
                return start
            data, start = data[cut + 1:], start + cut + 1
        self._decode(data, start)
        return start

    def _decode(self, data: bytes, start: int) -> None:
        if data.endswith(b"\n"):
            data = data[:-1]  # the file's last newline
        at = data.rfind(self.watch) if self.watch else -1
        if at >= 0 and (self.found is None or start + at + 1 > self.found):
            self.found = start + at + 1
        lines = data.split(b"\n")
        lengths = list(map(len, lines))
        offsets = accumulate((n + 1 for n in lengths[:-1]), initial=start)
        self.by_offset.update(zip(offsets, zip(lengths, _views_of(lines, data))))

    def _take(self, offset: int, length: int) -> Any:
        """The view of the line at ``offset`` (let go of: each is read once), ``_MISSING`` when it has not
        been decoded or is not of that length."""
        if not length:
            return None
        got = self.by_offset.pop(offset, None)
        return got[1] if got is not None and got[0] == length else _MISSING

    def reader(self, begin: int, offsets: Any, lengths: Any) -> Callable[[Any, int, int], list[Any]]:
        """``read(_, lo, hi)``: the raw views of messages ``lo:hi`` (numbered from ``begin``, at
        ``offsets`` with ``lengths``: 0 for one that is not a line), ``None`` where there is none. Each
        message is read once."""
        def read(_: Any, lo: int, hi: int) -> list[Any]:
            first, stop = lo - begin, min(hi - begin, len(offsets))  # those after ``stop`` have no line
            out = [self._take(offsets[n], lengths[n]) for n in range(first, stop)]
            if out.count(_MISSING):  # not decoded yet (or not the line it was): the lines from the first on
                at = first + out.index(_MISSING)
                last = max(n for n in range(at, stop) if lengths[n])
                size = offsets[last] + lengths[last] - offsets[at]
                if size > 0:  # along a path the lines only move forward in the file
                    self._decode(os.pread(self.fd, size, offsets[at]), offsets[at])
                    out = [self._take(offsets[first + n], lengths[first + n]) if view is _MISSING else view
                           for n, view in enumerate(out)]
            return [None if view is _MISSING else view for view in out] + [None] * (hi - lo - len(out))

        return read


_MISSING = object()


def _views_of(lines: list[bytes], data: bytes | None = None) -> list[Any]:
    """The raw view of each line's message (``None`` for an entry of another kind or a line that does not
    decode), in one go when they all decode, else by halves. ``data``: the lines joined, if at hand."""
    if not lines:
        return []
    try:
        decoded = _decode_block(b"\n".join(lines) if data is None else data)
    except _DECLINED:
        decoded = None
    if decoded is not None and len(decoded) == len(lines):
        return list(map(_MESSAGE, decoded))
    if len(lines) == 1:
        return [None]
    half = len(lines) // 2
    return _views_of(lines[:half]) + _views_of(lines[half:])


class _Float(Exception):
    pass


def _no_float(text: str) -> Any:
    raise _Float


_exact = msgspec.json.Decoder(float_hook=_no_float).decode
_encode = msgspec.json.Encoder().encode


def raw_json_text(raw: Any) -> str | None:
    """``JSON.stringify`` of the raw JSON object (what :func:`pi_core.ai.js_json` gives for it as a
    dict); ``None`` when it is not an object (which its view would not accept)."""
    try:
        value = _exact(raw)
    except _Float:  # the text of a float is where the two may write a number differently
        from .errors import js_json

        value = msgspec.json.decode(raw)
        return js_json(value) if type(value) is dict else None
    return _encode(value).decode() if type(value) is dict else None


class DeclineTurn(Exception):
    """Raised by a raw converter's callback (see :func:`raw_handoff`): convert this turn the usual way."""


_DROPPED = ("error", "aborted")


def raw_handoff(turn: list[Any], assistant: Callable[[Any], tuple[Any, list[Any]]], user: Callable[[Any], Any],
                result: Callable[[Any], Any], missing: Callable[[Any], Any]) -> list[tuple[bool, Any]] | None:
    """A turn's raw views walked under the rules of :func:`~pi_core.ai.transform_messages`, as
    ``(is_tool_result, item)`` pairs in order; ``None`` when a callback raises :class:`DeclineTurn`.

    ``assistant(message) -> (item, calls)`` (its tool call blocks) is asked for every assistant message,
    a failed or aborted one included (whose ids it must rename alike), but only the others are kept; a
    call left without a result gets ``missing(call)`` before the next user or assistant message and at
    the end of the turn; ``user(message)`` and ``result(message)`` make the other items. An item may be
    ``None`` (nothing sent); its message still stands between the tool results before and after it."""
    out: list[tuple[bool, Any]] = []
    pending: list[Any] = []  # the calls of the last assistant message
    answered: set[str] = set()
    try:
        for message in turn:
            kind = type(message)
            if kind is RawToolResult:
                out.append((True, result(message)))
                if pending:
                    answered.add(message.tool_call_id)
                continue
            if pending:
                out += [(True, missing(call)) for call in pending if call.id not in answered]
                pending, answered = [], set()
            if kind is RawAssistant:
                item, calls = assistant(message)
                if message.stop_reason in _DROPPED:
                    continue
                pending = calls
            else:
                item = user(message)
            out.append((False, item))
        out += [(True, missing(call)) for call in pending if call.id not in answered]
    except DeclineTurn:
        return None
    return out


def raw_object(raw: Any) -> dict[str, Any] | None:
    """The raw JSON object as its view holds it (a dict); ``None`` when it is not an object."""
    value = msgspec.json.decode(raw)
    return value if type(value) is dict else None


__all__ = ["RawAssistant", "RawImage", "RawText", "RawThinking", "RawToolCall", "RawToolResult", "RawUser",
           "DeclineTurn", "decode_block", "decode_lines", "raw_handoff", "raw_json_text", "raw_object"]
