"""Scripted model responses for tests, demos and plugin authors — no network, no API key.

```python
faux = FauxProvider()
faux.enqueue("Hello!")                                            # a text turn
faux.enqueue([faux_thinking("Plan..."), faux_tool_call("read", {"path": "a.py"})])
faux.enqueue(faux_error("503: overloaded", status=503))           # a failing turn
msg = await complete(faux.model, Context(messages=[UserMessage(content="hi")]))
```

A turn is a string (text), a content block, a list of blocks, a :class:`FauxTurn`, an
``AssistantMessage``, or a callable ``(context, options) -> turn`` (sync or async) that decides when the
request arrives. Text, thinking and tool-call JSON are streamed in small random pieces (3–5 "tokens" of
4 characters), so consumers see realistic event sequences; ``delta_delay`` paces them, which makes abort
testable. When the queue is empty, ``responder`` (if given) answers, else the turn fails with
``No more faux responses queued``. Every request is recorded in ``requests``.

A :class:`FauxProvider` has a ``register_providers(register)`` method, so an SDK host or a test can pass it
as a plugin (the plugin host adapts such provider objects; the model layer itself never imports the plugin
framework); it also registers its API process-wide on creation, so ``stream(faux.model, ...)`` works without
any registry.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
import math
import random
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Union

from .errors import ProviderError
from .event_stream import StreamWriter
from .options import StreamOptions
from .registry import ApiProvider, ModelRegistry, ProviderConfig, register_api_provider
from .types import (
    AssistantMessage,
    Context,
    Model,
    ModelCost,
    TextContent,
    ThinkingContent,
    ToolCall,
    UserMessage,
)

_instances = itertools.count(1)
Block = Union[TextContent, ThinkingContent, ToolCall]


@dataclass
class FauxTurn:
    """One scripted reply: blocks streamed in order, then the stop reason (default: ``toolUse`` when
    there are tool calls, else ``stop``) or, with ``error``, a failure after the blocks."""

    blocks: list[Block] = field(default_factory=list)
    stop_reason: str | None = None
    error: str | None = None
    status: int | None = None
    delay: float = 0.0
    """Seconds before the first event."""
    delta_delay: float | None = None
    """Seconds between deltas (default: the provider's)."""
    usage: dict[str, int] | None = None
    """Token counts to report instead of the chars/4 estimate (``input``, ``output``, ``cache_read``...)."""


FauxScript = Union[str, Block, list, FauxTurn, AssistantMessage, Callable[..., Any]]


def faux_text(text: str) -> TextContent:
    return TextContent(text=text)


def faux_thinking(thinking: str, signature: str | None = None, redacted: bool | None = None) -> ThinkingContent:
    return ThinkingContent(thinking=thinking, thinking_signature=signature, redacted=redacted)


def faux_tool_call(name: str, arguments: dict[str, Any] | None = None, id: str | None = None) -> ToolCall:
    """A tool call block; without ``id`` one is generated when the turn is streamed."""
    return ToolCall(id=id or "", name=name, arguments=arguments or {})


def faux_turn(*blocks: Block | str, stop_reason: str | None = None, delay: float = 0.0,
              delta_delay: float | None = None, usage: dict[str, int] | None = None) -> FauxTurn:
    return FauxTurn([faux_text(b) if isinstance(b, str) else b for b in blocks], stop_reason=stop_reason,
                    delay=delay, delta_delay=delta_delay, usage=usage)


def faux_error(message: str, *, status: int | None = None, after: Iterable[Block | str] = (),
               delay: float = 0.0) -> FauxTurn:
    """A turn that fails with ``message`` (after streaming the ``after`` blocks, if any)."""
    blocks = [faux_text(b) if isinstance(b, str) else b for b in after]
    return FauxTurn(blocks, error=message, status=status, delay=delay)


def _to_turn(script: Any) -> FauxTurn:
    if isinstance(script, FauxTurn):
        return script
    if isinstance(script, str):
        return FauxTurn([faux_text(script)])
    if isinstance(script, (TextContent, ThinkingContent, ToolCall)):
        return FauxTurn([script])
    if isinstance(script, AssistantMessage):
        stop = script.stop_reason if script.stop_reason not in ("pending", "error", "aborted") else None
        error = script.error_message if script.stop_reason in ("error", "aborted") else None
        return FauxTurn(list(script.content), stop_reason=stop, error=error)
    if isinstance(script, (list, tuple)):
        return FauxTurn([faux_text(b) if isinstance(b, str) else b for b in script])
    raise TypeError(f"not a faux turn: {script!r}")


@dataclass
class FauxRequest:
    """What one request to a faux model carried."""

    model: Model
    context: Context
    options: StreamOptions


def context_chars(context: Context) -> int:
    """Characters of a request, for the chars/4 token estimate."""
    total = len(context.system_prompt or "")
    for message in context.messages:
        content = getattr(message, "content", "")
        if isinstance(content, str):
            total += len(content)
            continue
        for block in content:
            total += len(getattr(block, "text", "") or getattr(block, "thinking", "") or "")
            if isinstance(block, ToolCall):
                total += len(block.name) + len(json.dumps(block.arguments))
    for tool in context.tools or []:
        total += len(tool.name) + len(tool.description) + len(json.dumps(tool.parameters))
    return total


class FauxProvider:
    """A scripted provider; see the module docstring."""

    def __init__(self, provider: str = "faux-script", model_id: str = "faux-1", *,
                 models: list[Model] | None = None, api: str | None = None, seed: int | None = None,
                 delta_delay: float = 0.0, responder: Callable[..., Any] | None = None,
                 context_window: int = 128_000, max_tokens: int = 16_384, reasoning: bool = True,
                 replaces: bool | None = None) -> None:
        self.api = api or f"faux:{next(_instances)}"
        #: Take over an existing provider of the same name when registered as a plugin (default: only
        #: the built-in ``faux``, which a scripted provider of that name is obviously meant to replace).
        self.replaces = provider == "faux" and api != "faux" if replaces is None else replaces
        self.provider = provider
        self.models = [m.model_copy(update={"api": self.api, "provider": provider}) for m in models] if models else [
            Model(id=model_id, name=f"Faux {model_id}", api=self.api, provider=provider, reasoning=reasoning,
                  input=["text", "image"], cost=ModelCost(), context_window=context_window, max_tokens=max_tokens)]
        self.delta_delay = delta_delay
        self.responder = responder
        self.requests: list[FauxRequest] = []
        self._queue: deque[Any] = deque()
        self._rng = random.Random(seed)
        self._ids = itertools.count(1)
        register_api_provider(self.api_provider)

    # -- scripting --------------------------------------------------------------------------
    @property
    def model(self) -> Model:
        return self.models[0]

    def get_model(self, model_id: str | None = None) -> Model | None:
        return self.models[0] if model_id is None else next((m for m in self.models if m.id == model_id), None)

    def enqueue(self, *turns: FauxScript) -> FauxProvider:
        """Append scripted turns (answered one per request, in order)."""
        self._queue.extend(turns)
        return self

    def set_responses(self, turns: Iterable[FauxScript]) -> None:
        """Replace the queue."""
        self._queue = deque(turns)

    @property
    def pending(self) -> int:
        return len(self._queue)

    # -- registration -----------------------------------------------------------------------
    @property
    def api_provider(self) -> ApiProvider:
        return ApiProvider(api=self.api, stream=self._stream)

    @property
    def provider_config(self) -> ProviderConfig:
        return ProviderConfig(name=self.provider, api=self.api, models=list(self.models), requires_api_key=False)

    def register_providers(self, register: Callable[..., None]) -> None:
        register(self.api_provider)
        if self.replaces:
            register(self.provider_config, replaces=self.provider)
        else:
            register(self.provider_config)

    def registry(self, **kwargs: Any) -> ModelRegistry:
        """A registry holding just this provider (``load_files=False`` unless given)."""
        kwargs.setdefault("load_files", False)
        return ModelRegistry([self.api_provider], [self.provider_config], **kwargs)

    # -- streaming ----------------------------------------------------------------------------
    async def _next_turn(self, context: Context, options: StreamOptions) -> FauxTurn:
        if self._queue:
            script = self._queue.popleft()
        elif self.responder is not None:
            script = self.responder
        else:
            raise ProviderError("No more faux responses queued")
        if callable(script) and not isinstance(script, (FauxTurn, AssistantMessage)):
            script = script(context, options)
            if inspect.isawaitable(script):
                script = await script
        return _to_turn(script)

    def _pieces(self, text: str) -> list[str]:
        pieces, i = [], 0
        while i < len(text):
            size = self._rng.randint(3, 5) * 4
            pieces.append(text[i:i + size])
            i += size
        return pieces

    async def _pace(self, writer: StreamWriter, delay: float) -> None:
        await writer.drain()
        await asyncio.sleep(delay)

    async def _stream(self, model: Model, context: Context, options: StreamOptions, writer: StreamWriter) -> None:
        self.requests.append(FauxRequest(model, context, options))
        turn = await self._next_turn(context, options)
        if turn.delay:
            await asyncio.sleep(turn.delay)
        delay = self.delta_delay if turn.delta_delay is None else turn.delta_delay
        writer.start()
        self._usage(writer, context, [], turn)
        for block in turn.blocks:
            await self._stream_block(writer, block, delay)
        self._usage(writer, context, turn.blocks, turn)
        if turn.error is not None:
            raise ProviderError(turn.error, status=turn.status)
        writer.finish(turn.stop_reason)

    async def _stream_block(self, writer: StreamWriter, block: Block, delay: float) -> None:
        if isinstance(block, ToolCall):
            call_id = block.id or f"faux_call_{next(self._ids)}"
            index = writer.toolcall_start(call_id, block.name, thought_signature=block.thought_signature)
            for piece in self._pieces(json.dumps(block.arguments)):
                await self._pace(writer, delay)
                writer.toolcall_delta(index, piece)
            writer.toolcall_end(index, arguments=dict(block.arguments))
            return
        thinking = isinstance(block, ThinkingContent)
        text = block.thinking if thinking else block.text
        if thinking:
            index = writer.thinking_start(signature=block.thinking_signature, redacted=block.redacted)
        else:
            index = writer.text_start(signature=block.text_signature)
        for piece in self._pieces(text):
            await self._pace(writer, delay)
            (writer.thinking_delta if thinking else writer.text_delta)(index, piece)
        (writer.thinking_end if thinking else writer.text_end)(index)

    def _usage(self, writer: StreamWriter, context: Context, blocks: list[Block], turn: FauxTurn) -> None:
        if turn.usage is not None:
            writer.set_usage(**turn.usage)
            return
        out = sum(len(getattr(b, "text", "") or getattr(b, "thinking", "") or "") +
                  (len(json.dumps(b.arguments)) + len(b.name) if isinstance(b, ToolCall) else 0) for b in blocks)
        writer.set_usage(input=math.ceil(context_chars(context) / 4), output=math.ceil(out / 4))


def last_user_text(context: Context) -> str:
    """Text of the last user message of a context ("" when there is none)."""
    for message in reversed(context.messages):
        if isinstance(message, UserMessage):
            if isinstance(message.content, str):
                return message.content
            return "".join(b.text for b in message.content if isinstance(b, TextContent))
    return ""


__all__ = [
    "FauxProvider",
    "FauxRequest",
    "FauxTurn",
    "context_chars",
    "faux_error",
    "faux_text",
    "faux_thinking",
    "faux_tool_call",
    "faux_turn",
    "last_user_text",
]
