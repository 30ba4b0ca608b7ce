"""Shared helpers for the model-layer tests: running coroutines with a timeout and checking the event
protocol's invariants on every stream a test consumes."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

from pi_core.ai import AssistantMessage, EventStream, Model, ToolCall, calculate_cost

TIMEOUT = 10.0


def run(coro: Coroutine[Any, Any, Any], timeout: float = TIMEOUT) -> Any:
    """Run ``coro`` in a fresh event loop, failing instead of hanging."""

    async def guarded() -> Any:
        return await asyncio.wait_for(coro, timeout)

    return asyncio.run(guarded())


class ProtocolChecker:
    """Feeds on events as they arrive and asserts pi's stream invariants (providers.md §2.2)."""

    def __init__(self) -> None:
        self.events: list[Any] = []
        self.open: dict[int, str] = {}
        self.closed: set[int] = set()
        self.started = False
        self.terminal: Any = None
        self.seen_indices: list[int] = []

    def feed(self, event: Any) -> None:
        assert self.terminal is None, f"event {event.type} after the terminal event"
        self.events.append(event)
        kind = event.type
        if kind == "start":
            assert not self.started, "two start events"
            self.started = True
            return
        if kind in ("done", "error"):
            self.terminal = event
            return
        assert self.started, f"{kind} before start"
        index = event.content_index
        family, _, phase = kind.partition("_")
        if phase == "start":
            assert index not in self.open and index not in self.closed, f"block {index} started twice"
            assert index == len(self.seen_indices), "blocks must be appended in order"
            self.seen_indices.append(index)
            self.open[index] = family
            block = event.partial.content[index]
            assert block.type == {"text": "text", "thinking": "thinking", "toolcall": "toolCall"}[family]
        else:
            assert self.open.get(index) == family, f"{kind} for block {index} that is not an open {family}"
            if family == "toolcall":
                assert isinstance(event.partial.content[index].arguments, dict)
            if phase == "end":
                del self.open[index]
                self.closed.add(index)
                block = event.partial.content[index]
                if family == "text":
                    assert event.content == block.text
                elif family == "thinking":
                    assert event.content == block.thinking
                else:
                    assert isinstance(event.tool_call, ToolCall) and event.tool_call is block

    def finish(self, model: Model | None = None) -> AssistantMessage:
        assert self.terminal is not None, "the stream ended without a terminal event"
        message = self.terminal.message
        if self.terminal.type == "done":
            assert self.terminal.reason in ("stop", "length", "toolUse")
            assert not self.open, f"blocks left open at done: {self.open}"
            assert message.error_message is None
        else:
            assert self.terminal.reason in ("error", "aborted")
            assert message.error_message
        assert message.stop_reason == self.terminal.reason
        usage = message.usage
        assert usage.total_tokens == usage.input + usage.output + usage.cache_read + usage.cache_write
        if model is not None:
            expected = usage.model_copy(deep=True)
            calculate_cost(model, expected)
            assert usage.cost.total == expected.cost.total
        for block in message.content:
            assert not (block.model_extra or {}), f"scratch fields leaked into {block}"
        return message


async def consume(stream: EventStream, model: Model | None = None) -> tuple[AssistantMessage, list[Any]]:
    """Iterate a stream with the protocol checker; returns the final message and the events."""
    checker = ProtocolChecker()
    async for event in stream:
        checker.feed(event)
    message = checker.finish(model)
    assert await stream.result() is message
    return message, checker.events


def types_of(events: list[Any]) -> list[str]:
    return [e.type for e in events]


def comparable(message: AssistantMessage) -> dict[str, Any]:
    """A message's JSON without the parts that differ run to run (timestamp)."""
    data = message.to_json()
    data.pop("timestamp", None)
    return data


class ChunkedTransport:
    """An in-memory HTTP client whose next response body arrives exactly as the chunks given to
    :meth:`reply` (sockets may merge reads; this does not), so chunk boundaries can be chosen."""

    def __init__(self, headers: dict[str, str] | None = None) -> None:
        import httpx

        self.chunks: list[bytes] = []
        self.headers = headers or {"content-type": "text/event-stream"}
        self.client = httpx.AsyncClient(transport=httpx.MockTransport(self._handle))

    def _handle(self, request: Any) -> Any:
        import httpx

        chunks = list(self.chunks)

        async def body():
            for chunk in chunks:
                yield chunk

        return httpx.Response(200, headers=self.headers, content=body())

    async def stream(self, model: Model, context: Any, chunks: list[bytes], registry: Any,
                     **options: Any) -> tuple[AssistantMessage, list[Any]]:
        from pi_core.ai import stream

        self.chunks = chunks
        return await consume(stream(model, context, registry=registry, client=self.client, api_key="k", **options))


async def stream_chunks(model: Model, context: Any, chunks: list[bytes], registry: Any,
                        **options: Any) -> tuple[AssistantMessage, list[Any]]:
    transport = ChunkedTransport()
    async with transport.client:
        return await transport.stream(model, context, chunks, registry, **options)


async def every_split(model: Model, context: Any, data: bytes, registry: Any, **options: Any) -> int:
    """Assert the result is identical whatever byte position the body is split at; returns positions tried."""
    transport = ChunkedTransport()
    async with transport.client:
        baseline, base_events = await transport.stream(model, context, [data], registry, **options)
        want = comparable(baseline)
        want_events = [e.to_json() for e in base_events if e.type not in ("done", "error")]
        for position in range(1, len(data)):
            message, events = await transport.stream(model, context, [data[:position], data[position:]], registry,
                                                     **options)
            assert comparable(message) == want, f"split at byte {position} changed the result"
            assert [e.to_json() for e in events if e.type not in ("done", "error")] == want_events, position
    return len(data) - 1


class EventRecorder:
    """A request observer that wants the parsed stream events and keeps them (with one, a provider hands it
    every event as a dict: its general path)."""

    def __init__(self) -> None:
        self.events: list[Any] = []

    async def headers(self, headers: dict[str, str]) -> dict[str, str]:
        return headers

    async def response(self, status: int, headers: dict[str, str]) -> None:
        pass

    async def stream_event(self, data: Any) -> None:
        self.events.append(data)
