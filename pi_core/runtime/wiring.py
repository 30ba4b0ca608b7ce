"""Plugging the hooks into the loop: the ``LoopConfig`` callables an ``AgentSession`` hands the agent.

Each request: the conversation goes through ``context`` handlers (on a copy), the system prompt and
tool declarations are attached, the whole request goes through ``context_with_system`` handlers, and
the provider payload through ``before_provider_request``. Tool calls go through ``before_tool_call``
and ``after_tool_call``. Hooks without handlers cost nothing: no copies are made for them.
"""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from ..ai.abort import AbortSignal
from ..ai.event_stream import EventStream
from ..ai.types import Context, Model, ToolDeclaration
from ..events import (
    AfterToolCallEvent,
    BeforeToolCallEvent,
    ContextEvent,
    ContextWithSystemEvent,
    ProviderHeadersEvent,
    ProviderRequestEvent,
    ProviderResponseEvent,
    ProviderStreamEvent,
)

if TYPE_CHECKING:
    from ..extensions.context import ExtensionContext
    from ..extensions.manager import PluginHost


_UNREAD: Any = object()


class _CopyOnRead:
    """``messages`` of a hook event as a deep copy made the first time a handler reads them.

    Handlers get a copy so that what they change never reaches the session's history; a handler that
    only looks at the tools or the system prompt (codemode rewrites tool descriptions before every
    request) must not pay for copying the whole conversation — on a long session that copy was most of
    a request's cost — nor hand the provider new message objects, which would defeat its reuse of the
    turns it converted for the previous request."""

    _source: Any
    _copy: Any

    @classmethod
    def of(cls, source: Any, **fields: Any) -> Any:
        event = cls(messages=_UNREAD, **fields)
        event._source = source
        return event

    @property  # type: ignore[misc]
    def messages(self) -> Any:
        if self._copy is _UNREAD:
            self._copy = copy.deepcopy(self._source)
        return self._copy

    @messages.setter
    def messages(self, value: Any) -> None:
        self._copy = value


class _LazyContextEvent(_CopyOnRead, ContextEvent):
    pass


class _LazyContextWithSystemEvent(_CopyOnRead, ContextWithSystemEvent):
    pass


def _untouched(event: Any) -> bool:
    return isinstance(event, _CopyOnRead) and event._copy is _UNREAD


class HookWiring:
    def __init__(self, host: PluginHost, ctx: ExtensionContext, model: Callable[[], Model | None]) -> None:
        self.host, self.ctx, self._model = host, ctx, model

    async def transform_context(self, messages: list[Any], signal: AbortSignal) -> list[Any]:
        if not self.host.dispatch.has("context"):
            return messages
        event = _LazyContextEvent.of(messages, model=self._model())
        event = await self.host.dispatch.call("context", event, self.ctx)
        if _untouched(event):
            return messages  # no handler looked at the messages: the conversation as it was
        return list(event.messages)

    async def transform_request(self, context: Context) -> Context:
        if not self.host.dispatch.has("context_with_system"):
            return context
        event = _LazyContextWithSystemEvent.of(context.messages, system_prompt=context.system_prompt or "",
                                               tools=copy.deepcopy(context.tools or []), model=self._model())
        event = await self.host.dispatch.call("context_with_system", event, self.ctx)
        if not _untouched(event):
            return Context(system_prompt=event.system_prompt, messages=event.messages, tools=event.tools)
        tools = event.tools
        if isinstance(event.system_prompt, str) and all(isinstance(t, ToolDeclaration) for t in tools or ()):
            # Nothing to validate: building Context's validator (every message type) is start-up for nothing.
            return Context.model_construct(system_prompt=event.system_prompt, messages=context.messages, tools=tools)
        out = Context(system_prompt=event.system_prompt, tools=tools)
        out.messages = context.messages  # assigned, not validated: validating would type every message
        return out

    async def on_payload(self, payload: dict[str, Any], model: Model | None = None) -> dict[str, Any]:
        if not self.host.dispatch.has("before_provider_request"):
            return payload
        # A copy: the provider may keep parts of the payload for the next request (its turn cache).
        event = await self.host.dispatch.call("before_provider_request",
                                              ProviderRequestEvent(copy.deepcopy(payload), model or self._model()),
                                              self.ctx)
        return event.payload

    # -- the provider's HTTP traffic (pi_core.ai.options.RequestObserver) -------------------------

    async def headers(self, headers: dict[str, str]) -> dict[str, str]:
        if not self.host.dispatch.has("before_provider_headers"):
            return headers
        event = await self.host.dispatch.call("before_provider_headers",
                                              ProviderHeadersEvent(dict(headers), self._model()), self.ctx)
        return event.headers  # type: ignore[return-value]  # None values: post_stream removes the header

    async def response(self, status: int, headers: dict[str, str]) -> None:
        if self.host.dispatch.has("after_provider_response"):
            await self.host.dispatch.call("after_provider_response",
                                          ProviderResponseEvent(status, headers, self._model()), self.ctx)

    def wants_stream_events(self) -> bool:
        return self.host.dispatch.has("provider_stream_event")

    async def stream_event(self, data: Any) -> None:
        if self.host.dispatch.has("provider_stream_event"):
            model = self._model()
            event = ProviderStreamEvent(model.provider if model else "", model.api if model else "",
                                        model.id if model else "", data)
            await self.host.dispatch.call("provider_stream_event", event, self.ctx)

    async def before_tool_call(self, event: BeforeToolCallEvent) -> BeforeToolCallEvent:
        return await self.host.dispatch.call("before_tool_call", event, self.ctx)

    async def after_tool_call(self, event: AfterToolCallEvent) -> AfterToolCallEvent:
        return await self.host.dispatch.call("after_tool_call", event, self.ctx)


def stamp_thinking_level(stream: Callable[..., AsyncIterator[Any]], level: Callable[[], str],
                         on_error: Callable[[Any], None] | None = None) -> Callable[..., AsyncIterator[Any]]:
    """pi records the requested thinking level on every assistant message; do it at the source.
    ``on_error`` sees each final ``error`` event (its ``retry_after_ms``) before the message is recorded."""

    def finish(event: Any) -> None:
        message = getattr(event, "message", None)
        if message is not None and message.thinking_level is None:
            message.thinking_level = level()
        if event.type == "error" and on_error is not None and message is not None:
            on_error(event)

    def stamped(model: Model, context: Context, **options: Any) -> AsyncIterator[Any]:
        events = stream(model, context, **options)
        if isinstance(events, EventStream):  # no layer between the deltas and the loop
            events.on_terminal(finish)
            return events
        return _finished_by(events, finish)

    return stamped


async def _finished_by(events: AsyncIterator[Any], finish: Callable[[Any], None]) -> AsyncIterator[Any]:
    async for event in events:
        kind = event.type
        if kind == "done" or kind == "error":  # the rest are deltas: nothing to do per delta
            finish(event)
        yield event


__all__ = ["HookWiring", "stamp_thinking_level"]
