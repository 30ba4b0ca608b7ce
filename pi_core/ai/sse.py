"""An incremental server-sent-events decoder (WHATWG rules) over an async byte stream.

Bytes are split into lines as they arrive (``\\n``, ``\\r\\n`` or ``\\r``, also when a ``\\r\\n`` pair is
split across reads or a multi-byte character straddles two chunks); nothing buffers the whole body.
``field: value`` lines build an event, ``:`` lines are comments, several ``data:`` lines join with
``\\n``, a blank line dispatches, and a trailing event without its blank line is flushed at EOF.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable
from typing import Any


class SSEEvent:
    """One dispatched event: ``event`` name (``"message"`` when absent), ``data``, ``id``, ``retry``."""

    __slots__ = ("event", "data", "id", "retry")

    def __init__(self, event: str = "message", data: str = "", id: str | None = None,
                 retry: int | None = None) -> None:
        self.event = event
        self.data = data
        self.id = id
        self.retry = retry

    def json(self) -> Any:
        """``data`` parsed as JSON."""
        from ..safejson import parse_json

        return parse_json(self.data)

    def __repr__(self) -> str:
        return f"SSEEvent(event={self.event!r}, data={self.data!r})"


class SSEDecoder:
    """Feed bytes with :meth:`feed`, get complete events back; :meth:`flush` at EOF."""

    __slots__ = ("_buf", "_event", "_data", "_id", "_retry")

    def __init__(self) -> None:
        self._buf = b""
        self._event = ""
        self._data: list[str] = []
        self._id: str | None = None
        self._retry: int | None = None

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        buf = self._buf + chunk if self._buf else chunk
        if not (self._data or self._event):
            events = self._plain_events(buf)
            if events is not None:
                return events
        lines = buf.splitlines(keepends=True)
        if not lines:
            return []
        last = lines[-1]
        # An unterminated line, or one ending in a "\r" that may be the first half of "\r\n", waits.
        if last[-1:] == b"\n":
            self._buf = b""
        else:
            self._buf = lines.pop()
        events: list[SSEEvent] = []
        for raw in lines:
            event = self._line(raw)
            if event is not None:
                events.append(event)
        return events

    def _plain_events(self, buf: bytes) -> list[SSEEvent] | None:
        """The common shapes, one ``data: ...`` line per event (OpenAI) or an ``event: ...`` line and one
        ``data: ...`` line per event (Anthropic), with ``\n`` endings, decoded without going line by line (a
        stream of many small deltas spends much of its time here); ``None`` when the complete events in
        ``buf`` have any other shape, which the line rules then handle."""
        end = buf.rfind(b"\n\n")
        if end < 0 or b"\r" in buf:
            return None
        block = buf[:end]
        if block.startswith(b"data: "):
            count = block.count(b"\n\ndata: ") + 1
            if block.count(b"\n") != 2 * (count - 1):
                return None  # another field, a comment or a second data line somewhere
            events = [SSEEvent("message", part[6:], self._id, self._retry)
                      for part in block.decode("utf-8", "replace").split("\n\n")]
        elif block.startswith(b"event: "):
            events = []
            for part in block.decode("utf-8", "replace").split("\n\n"):
                head, found, data = part.partition("\ndata: ")
                if not found or "\n" in data or "\n" in head or not head.startswith("event: "):
                    return None  # another field, a comment, a second data line, an event without data
                events.append(SSEEvent(head[7:] or "message", data, self._id, self._retry))
        else:
            return None
        self._buf = buf[end + 2:]
        return events

    def flush(self) -> list[SSEEvent]:
        """Dispatch what is left at end of stream (a final event without its blank line)."""
        events: list[SSEEvent] = []
        if self._buf:
            raw, self._buf = self._buf, b""
            event = self._line(raw)
            if event is not None:
                events.append(event)
        if self._data or self._event:
            event = self._dispatch()
            if event is not None:
                events.append(event)
        return events

    def _line(self, raw: bytes) -> SSEEvent | None:
        line = raw.rstrip(b"\r\n").decode("utf-8", "replace")
        if not line:
            return self._dispatch()
        if line[0] == ":":
            return None
        name, sep, value = line.partition(":")
        if sep and value[:1] == " ":
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._id = value
        elif name == "retry" and value.isdigit():
            self._retry = int(value)
        return None

    def _dispatch(self) -> SSEEvent | None:
        data, name = self._data, self._event
        self._data, self._event = [], ""
        if not data:
            return None  # per spec an event without data is not dispatched
        return SSEEvent(name or "message", "\n".join(data) if len(data) > 1 else data[0], self._id, self._retry)


async def iter_sse(chunks: AsyncIterable[bytes],
                   pause: Callable[[], Awaitable[None]] | None = None) -> AsyncIterator[SSEEvent]:
    """Events from an async iterator of byte chunks (e.g. ``response.aiter_bytes()``).

    ``pause`` is awaited before each read (a stream writer's ``drain``), so a slow consumer slows the
    reading instead of growing a queue.
    """
    async for batch in iter_sse_batches(chunks, pause):
        for event in batch:
            yield event


async def iter_sse_batches(chunks: AsyncIterable[bytes],
                           pause: Callable[[], Awaitable[None]] | None = None) -> AsyncIterator[list[SSEEvent]]:
    """:func:`iter_sse`, a list at a time: the events each read completed (never an empty list). A stream
    of many small deltas brings hundreds of events per read; taking them as a list saves resuming a
    generator for each one."""
    decoder = SSEDecoder()
    async for chunk in chunks:
        events = decoder.feed(chunk)
        if events:
            yield events
        if pause is not None:
            await pause()
    events = decoder.flush()
    if events:
        yield events


__all__ = ["SSEDecoder", "SSEEvent", "iter_sse", "iter_sse_batches"]
