"""The event stream container and the writer that provider implementations build a message with.

:class:`EventStream` is what :func:`pi_core.ai.stream` returns: an async iterator of events plus
``await result()`` for the final message. Provider work runs in a background task that owns the HTTP
response; events go through a deque with a high-water mark, so a slow consumer pauses the producer
instead of buffering the whole answer.

:class:`StreamWriter` is handed to an API implementation (a wire protocol). It owns the assistant message
and turns calls like ``text_delta(i, "x")`` into the mutation plus the event. It keeps pi's invariants:
blocks are only appended, each block goes start → deltas → end, exactly one terminal event, tool-call
arguments always a dict, scratch state never leaks into the message.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable, Coroutine
from typing import Any

from .cost import calculate_cost
from .events import (
    AssistantMessageEvent,
    DoneEvent,
    ErrorEvent,
    StartEvent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from .partial_json import parse_streaming_arguments, parse_tool_arguments
from .types import AssistantMessage, Model, TextContent, ThinkingContent, ToolCall, Usage

ABORTED_MESSAGE = "Request was aborted"
TURN_S = 0.005
"""How often a producer reading data that has already arrived lets the event loop run other work."""
_SUCCESS = ("stop", "length", "toolUse")
#: Re-parse streaming tool arguments after every fragment while the buffer is small; beyond that only
#: when it has grown by half, so a huge argument (a file being written) stays linear, not quadratic.
_EAGER_PARSE_CHARS = 8192


class EventStream:
    """Async iterator of :class:`~pi_core.ai.events.AssistantMessageEvent` ending in one terminal event.

    Iterate it once (``async for event in stream``); ``await stream.result()`` returns the final
    assistant message (never raises for provider failures). ``aclose()`` stops the producer; the stream
    then ends as ``aborted``. A consumer that may stop iterating early should use ``async with`` (or call
    ``aclose()``), so the request does not stay open.
    """

    def __init__(self, high_water: int = 4096) -> None:
        self._queue: deque[AssistantMessageEvent] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._space: asyncio.Future[None] | None = None
        self._high = high_water
        self._turn = 0.0
        self._done = False
        self._final: AssistantMessage | None = None
        self._final_event: AssistantMessageEvent | None = None
        self._result: asyncio.Future[AssistantMessage] | None = None
        self._starter: Callable[[], Coroutine[Any, Any, None]] | None = None
        self._task: asyncio.Task[None] | None = None
        self._on_orphan: Callable[[], None] | None = None
        self._on_terminal: Callable[[AssistantMessageEvent], None] | None = None

    # -- producer side -----------------------------------------------------------------------
    def push(self, event: AssistantMessageEvent) -> None:
        """Deliver an event; ignored once a terminal event went through."""
        if self._done:
            return
        self._queue.append(event)
        if event.terminal:
            self._done = True
            self._final = event.partial
            self._final_event = event
            if self._on_terminal is not None:
                self._on_terminal(event)
            if self._result is not None and not self._result.done():
                self._result.set_result(event.partial)
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    async def drain(self) -> None:
        """Wait while the consumer is far behind (called by producers between network reads). Otherwise give
        the event loop a turn every :data:`TURN_S`: reading data that has already arrived never suspends, and a
        fast stream would keep the keyboard and the screen waiting."""
        if len(self._queue) < self._high or self._done:
            now = time.monotonic()
            if now - self._turn >= TURN_S:
                await asyncio.sleep(0)
                self._turn = time.monotonic()
            return
        self._space = asyncio.get_running_loop().create_future()
        await self._space

    def on_terminal(self, callback: Callable[[AssistantMessageEvent], None]) -> None:
        """Have ``callback`` see the terminal event as it is pushed, before any consumer does (it may
        change the final message). One callback; a second replaces the first."""
        self._on_terminal = callback

    @property
    def done(self) -> bool:
        """Whether the terminal event has been pushed."""
        return self._done

    @property
    def final_event(self) -> AssistantMessageEvent | None:
        """The terminal event once pushed (``DoneEvent`` or ``ErrorEvent``)."""
        return self._final_event

    # -- task management ---------------------------------------------------------------------
    def _bind(self, starter: Callable[[], Coroutine[Any, Any, None]], on_orphan: Callable[[], None]) -> None:
        self._starter = starter
        self._on_orphan = on_orphan
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return  # started on first iteration
        self._ensure_started()

    def _ensure_started(self) -> None:
        if self._starter is None or self._task is not None:
            return
        self._task = asyncio.get_running_loop().create_task(self._starter())
        self._task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[None]) -> None:
        if not self._done and self._on_orphan is not None:
            self._on_orphan()  # cancelled before it ran, or died outside its own handlers

    @property
    def task(self) -> asyncio.Task[None] | None:
        return self._task

    def cancel(self) -> None:
        """Stop the producer (thread-safe from the event loop's thread)."""
        if self._task is not None and not self._task.done():
            self._task.cancel()

    async def aclose(self) -> None:
        """Stop the producer and wait until the stream has ended."""
        self.cancel()
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)

    async def __aenter__(self) -> EventStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        """Leaving ``async with stream(...) as s:`` early stops the request (nothing keeps running)."""
        if not self._done:
            await self.aclose()

    # -- consumer side -----------------------------------------------------------------------
    def __aiter__(self) -> EventStream:
        return self

    async def __anext__(self) -> AssistantMessageEvent:
        queue = self._queue
        while not queue:
            if self._done:
                raise StopAsyncIteration
            self._ensure_started()
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter
        event = queue.popleft()
        space = self._space
        if space is not None and len(queue) <= self._high // 2:
            self._space = None
            if not space.done():
                space.set_result(None)
        return event

    async def result(self) -> AssistantMessage:
        """The final assistant message (drains nothing; iteration and ``result()`` can be mixed)."""
        if self._final is not None:
            return self._final
        self._ensure_started()
        if self._result is None:
            self._result = asyncio.get_running_loop().create_future()
        space = self._space
        if space is not None and not space.done():
            self._high = 1 << 62  # nobody is iterating: stop pausing the producer
            self._space = None
            space.set_result(None)
        else:
            self._high = 1 << 62
        return await self._result


class _ToolArgs:
    __slots__ = ("buf", "next_parse")

    def __init__(self) -> None:
        self.buf = ""
        self.next_parse = 0


class StreamWriter:
    """Builds one assistant message and emits the matching events.

    API implementations receive one per request. Content indices returned by the ``*_start`` methods
    are positions in ``message.content``. Call :meth:`finish` once at the end; raise an exception (or
    call :meth:`fail`) for errors — :func:`pi_core.ai.stream` turns exceptions into the ``error`` event.
    """

    __slots__ = ("model", "message", "events", "_open", "_args", "started")

    def __init__(self, model: Model, events: EventStream | None = None) -> None:
        self.model = model
        self.message = AssistantMessage(api=model.api, provider=model.provider, model=model.id)
        self.events = events if events is not None else EventStream()
        self._open: dict[int, str] = {}
        self._args: dict[int, _ToolArgs] = {}
        self.started = False

    @property
    def finished(self) -> bool:
        return self.events.done

    @property
    def open_blocks(self) -> dict[int, str]:
        """Content index → block type of the blocks that have started but not ended."""
        return dict(self._open)

    async def drain(self) -> None:
        await self.events.drain()

    def start(self) -> None:
        """Emit ``start`` (once; the ``*_start`` methods call it if you did not)."""
        if not self.started:
            self.started = True
            self.events.push(StartEvent(self.message))

    # -- text ------------------------------------------------------------------------------
    def text_start(self, text: str = "", signature: str | None = None) -> int:
        self.start()
        index = len(self.message.content)
        self.message.content.append(TextContent(text=text, text_signature=signature))
        self._open[index] = "text"
        self.events.push(TextStartEvent(index, self.message))
        return index

    def text_delta(self, index: int, delta: str) -> None:
        d = self.message.content[index].__dict__
        text = d.pop("text")
        text += delta  # sole reference: CPython appends in place, so a long answer stays linear
        d["text"] = text
        self.events.push(TextDeltaEvent(index, delta, self.message))

    def text_end(self, index: int, text: str | None = None, signature: str | None = None) -> None:
        if self._open.pop(index, None) is None:
            return
        block = self.message.content[index]
        if text is not None:
            block.text = text
        if signature is not None:
            block.text_signature = signature
        self.events.push(TextEndEvent(index, block.text, self.message))

    # -- thinking --------------------------------------------------------------------------
    def thinking_start(self, thinking: str = "", signature: str | None = None,
                       redacted: bool | None = None) -> int:
        self.start()
        index = len(self.message.content)
        self.message.content.append(ThinkingContent(thinking=thinking, thinking_signature=signature,
                                                    redacted=redacted))
        self._open[index] = "thinking"
        self.events.push(ThinkingStartEvent(index, self.message))
        return index

    def thinking_delta(self, index: int, delta: str) -> None:
        d = self.message.content[index].__dict__
        text = d.pop("thinking")
        text += delta
        d["thinking"] = text
        self.events.push(ThinkingDeltaEvent(index, delta, self.message))

    def thinking_signature(self, index: int, signature: str, append: bool = True) -> None:
        """Set (or extend) a thinking block's signature; emits nothing, as pi."""
        block = self.message.content[index]
        block.thinking_signature = (block.thinking_signature or "") + signature if append else signature

    def thinking_end(self, index: int, thinking: str | None = None, signature: str | None = None) -> None:
        if self._open.pop(index, None) is None:
            return
        block = self.message.content[index]
        if thinking is not None:
            block.thinking = thinking
        if signature is not None:
            block.thinking_signature = signature
        self.events.push(ThinkingEndEvent(index, block.thinking, self.message))

    # -- tool calls ------------------------------------------------------------------------
    def toolcall_start(self, id: str, name: str, arguments: dict[str, Any] | None = None,
                       thought_signature: str | None = None) -> int:
        self.start()
        index = len(self.message.content)
        self.message.content.append(ToolCall(id=id, name=name, arguments=dict(arguments or {}),
                                             thought_signature=thought_signature))
        self._open[index] = "toolCall"
        self._args[index] = _ToolArgs()
        self.events.push(ToolCallStartEvent(index, self.message))
        return index

    def toolcall_delta(self, index: int, fragment: str) -> None:
        """Append a raw JSON fragment of the arguments; the partial call's arguments are re-parsed."""
        state = self._args.get(index)
        if state is None:
            return
        if fragment:
            buf = state.buf
            state.buf = ""
            buf += fragment
            state.buf = buf
            if len(buf) <= _EAGER_PARSE_CHARS or len(buf) >= state.next_parse:
                state.next_parse = len(buf) + len(buf) // 2
                self.message.content[index].__dict__["arguments"] = parse_streaming_arguments(buf)
        self.events.push(ToolCallDeltaEvent(index, fragment, self.message))

    def toolcall_arguments_text(self, index: int) -> str:
        """The raw argument JSON received so far for an open tool call."""
        state = self._args.get(index)
        return state.buf if state is not None else ""

    def toolcall_end(self, index: int, arguments_json: str | None = None,
                     arguments: dict[str, Any] | None = None) -> None:
        """Close a tool call. The final arguments come from ``arguments``, else ``arguments_json``, else
        the streamed fragments (a call with no fragments keeps what ``toolcall_start`` gave it)."""
        if self._open.pop(index, None) is None:
            return
        state = self._args.pop(index, None)
        call = self.message.content[index]
        if arguments is not None:
            call.arguments = arguments
        else:
            text = arguments_json if arguments_json is not None else (state.buf if state else "")
            if text:
                call.arguments = parse_tool_arguments(text)[0]
        self.events.push(ToolCallEndEvent(index, call, self.message))

    # -- usage and the end -----------------------------------------------------------------
    def set_usage(self, input: int = 0, output: int = 0, cache_read: int = 0, cache_write: int = 0,
                  reasoning: int | None = 0, total_tokens: int | None = None) -> Usage:
        """Replace the usage counts and recompute cost (pi does this on every usage update)."""
        usage = self.message.usage
        usage.input, usage.output = int(input), int(output)
        usage.cache_read, usage.cache_write = int(cache_read), int(cache_write)
        usage.reasoning = None if reasoning is None else int(reasoning)
        usage.total_tokens = int(total_tokens if total_tokens is not None
                                 else usage.input + usage.output + usage.cache_read + usage.cache_write)
        calculate_cost(self.model, usage)
        return usage

    def close_open_blocks(self) -> None:
        """End every open block (a successful stream never leaves one open)."""
        for index, kind in sorted(self._open.items()):
            if kind == "text":
                self.text_end(index)
            elif kind == "thinking":
                self.thinking_end(index)
            else:
                self.toolcall_end(index)

    def finish(self, stop_reason: str | None = None) -> AssistantMessage:
        """End successfully with ``stop_reason`` (default: the message's, upgraded to ``toolUse`` when
        tool calls exist). A reason outside stop/length/toolUse ends the stream as an error."""
        message = self.message
        reason = stop_reason or message.stop_reason
        if reason == "pending":
            reason = "toolUse" if message.tool_calls() else "stop"
        if reason not in _SUCCESS:
            self.fail(message.error_message or f"Provider stopped with: {reason}")
            return message
        self.start()
        self.close_open_blocks()
        message.stop_reason = reason  # type: ignore[assignment]
        self.events.push(DoneEvent(reason, message))
        return message

    def fail(self, error_message: str, *, aborted: bool = False, status: int | None = None,
             retry_after_ms: int | None = None) -> AssistantMessage:
        """End with an ``error`` (or ``aborted``) event; open blocks stay as they are, scratch is dropped."""
        message = self.message
        if self.events.done:
            return message
        for index in list(self._args):
            state = self._args.pop(index)
            if state.buf:
                message.content[index].arguments = parse_streaming_arguments(state.buf)
        self._open.clear()
        message.stop_reason = "aborted" if aborted else "error"
        message.error_message = error_message
        self.events.push(ErrorEvent(message.stop_reason, message, status=status, retry_after_ms=retry_after_ms))
        return message


__all__ = ["ABORTED_MESSAGE", "EventStream", "StreamWriter"]
