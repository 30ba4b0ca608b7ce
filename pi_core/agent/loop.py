"""The agent loop: ask the model, run the tools it asks for, feed the results back, repeat.

One run (``run_agent_loop``) handles one prompt: the prompt messages, then turns — a model request
and the tool calls it makes — until the model stops asking for tools, then any follow-up messages.
Steering messages are delivered after the current turn's tool batch. The loop holds no state of its
own: everything it needs comes in :class:`LoopConfig`, everything it produces goes out through
``emit`` and into ``messages``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..ai.abort import AbortSignal
from ..ai.message_list import MessageList
from ..ai.types import AssistantMessage, Context, Message, Model, TextContent, ToolCall, ToolResultMessage
from ..events import (
    AfterToolCallEvent,
    AgentEndEvent,
    AgentStartEvent,
    BeforeToolCallEvent,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    TurnEndEvent,
    TurnStartEvent,
)
from .tools import Tool, ToolContext, ToolError, ToolResult
from .validation import ToolArgumentsError, validate_arguments

StreamFn = Callable[..., AsyncIterator[Any]]
Emit = Callable[[Any], Awaitable[None]]

TRUNCATED_CALL = ("The reply hit the output token limit before this tool call's arguments were complete, so "
                  "it was not run. Issue the call again, smaller if needed.")


@dataclass
class LoopConfig:
    """What one run needs. The callables are where the runtime plugs in hooks and the session."""

    model: Model
    stream: StreamFn
    system_prompt: str
    tools: list[Tool]
    convert_to_llm: Callable[[list[Any]], list[Message]] = list
    transform_context: Callable[[list[Any], AbortSignal], Awaitable[list[Any]]] | None = None
    transform_request: Callable[[Context], Awaitable[Context]] | None = None
    before_tool_call: Callable[[BeforeToolCallEvent], Awaitable[BeforeToolCallEvent]] | None = None
    after_tool_call: Callable[[AfterToolCallEvent], Awaitable[AfterToolCallEvent]] | None = None
    tool_context: Callable[[str, AbortSignal, Callable[[ToolResult], object]], ToolContext] | None = None
    get_steering: Callable[[], list[Message]] = list
    get_follow_up: Callable[[], list[Message]] = list
    stream_options: dict[str, Any] = field(default_factory=dict)
    declare_tools: Callable[[list[Any], list[Any]], list[Any]] | None = None
    """Before each request: ``(transcript, system messages about to be added)`` → the system messages to
    add instead, recording a change of the declared tools (pi's ``toolsAdded``/``toolsRemoved``)."""


async def run_agent_loop(prompts: list[Any], messages: list[Any], config: LoopConfig, emit: Emit,
                         signal: AbortSignal) -> list[Any]:
    """Run one prompt to the end. ``messages`` (the transcript) is extended in place; returns what this
    run added."""
    added: list[Any] = []

    async def push(message: Any) -> None:
        await emit(MessageStartEvent(message))
        end = MessageEndEvent(message)
        await emit(end)  # message_end handlers may replace the message
        messages.append(end.message)
        added.append(end.message)

    await emit(AgentStartEvent())
    turn = 0
    await emit(TurnStartEvent(turn_index=turn))
    for message in _with_tool_changes(prompts, messages, config):
        await push(message)
    pending = config.get_steering()
    while True:
        more_tools = True
        while more_tools or pending:
            if turn > 0:
                await emit(TurnStartEvent(turn_index=turn))
                pending = _with_tool_changes(pending, messages, config)
            for message in pending:
                await push(message)
            assistant = await stream_assistant(messages, config, emit, signal)
            messages.append(assistant)
            added.append(assistant)
            if assistant.stop_reason in ("error", "aborted"):
                await emit(TurnEndEvent(turn, assistant, [], outcome=assistant.stop_reason))
                await emit(AgentEndEvent(added))
                return added
            calls = assistant.tool_calls()
            batch = await run_tool_batch(assistant, calls, config, emit, signal) if calls else ToolBatch([], False)
            for result in batch.messages:
                messages.append(result)
                added.append(result)
            end = TurnEndEvent(turn, assistant, batch.messages)
            await emit(end)
            turn += 1
            if signal.aborted:
                await emit(AgentEndEvent(added))
                return added
            more_tools = bool(calls) and not batch.terminate
            pending = config.get_steering()
            if end.continue_ and not more_tools and not pending:
                more_tools = True  # a turn_end handler asked for one more request
        pending = config.get_follow_up()
        if not pending:
            break
    await emit(AgentEndEvent(added))
    return added


def _with_tool_changes(batch: list[Any], transcript: list[Any], config: LoopConfig) -> list[Any]:
    """``batch`` with a tool-set change recorded in (or after) its leading system messages, as pi does."""
    if config.declare_tools is None:
        return batch
    at = next((i for i, m in enumerate(batch) if getattr(m, "role", None) != "system"), len(batch))
    return [*config.declare_tools(transcript, batch[:at]), *batch[at:]]


# -------------------------------------------------------------------------------------------------
# one model request


async def build_context(messages: list[Any], config: LoopConfig, signal: AbortSignal) -> Context:
    """Projection → ``context`` hooks → system prompt and tools attached → ``context_with_system``."""
    if isinstance(messages, MessageList):
        conversation: Any = messages.without_role("system")  # nothing is typed for this
    else:
        conversation = [m for m in messages if getattr(m, "role", None) != "system"]
    if config.transform_context is not None:
        conversation = await config.transform_context(conversation, signal)
    converted = config.convert_to_llm(conversation)
    tools = [tool.declaration() for tool in config.tools]
    if isinstance(converted, MessageList):
        # Not validated: that would type every message, and build Context's validator for nothing (the
        # tools are declarations already).
        context = Context.model_construct(system_prompt=config.system_prompt, messages=converted, tools=tools)
    else:
        context = Context(system_prompt=config.system_prompt, messages=converted, tools=tools)
    if config.transform_request is not None:
        context = await config.transform_request(context)
    return context


async def stream_assistant(messages: list[Any], config: LoopConfig, emit: Emit,
                           signal: AbortSignal) -> AssistantMessage:
    started = time.monotonic()
    context = await build_context(messages, config, signal)
    partial: AssistantMessage | None = None
    final: AssistantMessage | None = None
    async for event in config.stream(config.model, context, signal=signal, **config.stream_options):
        kind = event.type
        if kind == "start":
            partial = event.partial
            # The partial is live and a provider may already be ahead of us; by the protocol no block
            # has started at `start`, so that is what message_start shows.
            await emit(MessageStartEvent(partial.model_copy(update={"content": []})))
        elif kind in ("done", "error"):
            final = event.message
        elif partial is not None:
            await emit(MessageUpdateEvent(partial, event))
    if final is None:  # a stream function that broke its contract: never lose the turn silently
        final = AssistantMessage(api=config.model.api, provider=config.model.provider, model=config.model.id,
                                 stop_reason="error", error_message="the model stream ended without a result")
    if final.duration_ms is None:
        final.duration_ms = int((time.monotonic() - started) * 1000)
    if partial is None:
        await emit(MessageStartEvent(final))
    end = MessageEndEvent(final)
    await emit(end)  # message_end handlers may replace the message
    return end.message  # type: ignore[return-value]


# -------------------------------------------------------------------------------------------------
# tool calls


@dataclass
class _Call:
    call: ToolCall
    tool: Tool | None = None
    arguments: dict[str, Any] = field(default_factory=dict)
    result: ToolResult | None = None
    started: float = field(default_factory=time.monotonic)
    duration_ms: int | None = None
    parent_id: str | None = None
    """The call that made this one through ``ToolContext.execute_tool`` (a nested call)."""


@dataclass
class ToolBatch:
    """The result messages of one batch, in the order the model issued the calls; ``terminate`` when every
    result asked to end the run (``ToolResult.terminate``, ``Block(terminate=True)``)."""

    messages: list[ToolResultMessage]
    terminate: bool


async def run_tool_batch(assistant: AssistantMessage, calls: list[ToolCall], config: LoopConfig, emit: Emit,
                         signal: AbortSignal) -> ToolBatch:
    """Prepare every call, run the prepared ones (concurrency-safe neighbours together), and return
    the results in the order the model issued the calls."""
    batch = [_Call(call) for call in calls]
    for item in batch:
        await emit(ToolExecutionStartEvent(item.call.id, item.call.name, item.call.arguments))
        await _prepare(item, config.tools, assistant, config, signal)
        if item.result is not None:
            await _finish(item, emit)
    for group in _groups([item for item in batch if item.result is None]):
        await asyncio.gather(*(_execute(item, config, emit, signal) for item in group))
    results = []
    for item in batch:
        message = _result_message(item)
        await emit(MessageStartEvent(message))
        end = MessageEndEvent(message)
        await emit(end)
        results.append(end.message)
    return ToolBatch(results, bool(batch) and all(item.result is not None and item.result.terminate for item in batch))


async def run_nested_call(call: ToolCall, tools: list[Tool], assistant: AssistantMessage | None, config: LoopConfig,
                          emit: Emit, signal: AbortSignal, parent_id: str,
                          on_update: Callable[[ToolResult], object] | None = None) -> tuple[ToolResult, int | None]:
    """Run one call a tool made while it ran, as the loop runs a model's call: looked up in ``tools``,
    validated, gated by ``before_tool_call``, patched by ``after_tool_call``; its events carry
    ``parent_id``. Never raises for a failing call: returns the (error) result and the duration."""
    item = _Call(call, parent_id=parent_id)
    await emit(ToolExecutionStartEvent(call.id, call.name, call.arguments, parent_tool_call_id=parent_id))
    await _prepare(item, tools, assistant, config, signal)
    if item.result is None:
        await _execute(item, config, emit, signal, on_update)
    else:
        await _finish(item, emit)
    assert item.result is not None
    return item.result, item.duration_ms


async def _prepare(item: _Call, tools: list[Tool], assistant: AssistantMessage | None, config: LoopConfig,
                   signal: AbortSignal) -> None:
    """Find, validate and gate one call; on any failure ``item.result`` holds the error to send back."""
    if assistant is not None and assistant.stop_reason == "length" and item.parent_id is None:
        item.result = ToolResult.text(TRUNCATED_CALL, details={}, is_error=True)
        return
    if signal.aborted:
        item.result = ToolResult.text("Operation aborted", details={}, is_error=True)
        return
    tool = next((t for t in tools if t.name == item.call.name), None)
    if tool is None:
        item.result = ToolResult.text(f"Tool {item.call.name} not found", details={}, is_error=True)
        return
    item.tool = tool
    try:
        raw = tool.prepare_arguments(item.call.arguments) if tool.prepare_arguments else item.call.arguments
        item.arguments = validate_arguments(tool.name, tool.parameters, raw)
    except ToolArgumentsError as exc:
        item.result = ToolResult.text(str(exc), details={}, is_error=True)
        return
    except Exception as exc:  # a broken prepare_arguments shim is the tool's bug, not a crash
        item.result = ToolResult.text(f"{type(exc).__name__}: {exc}", details={}, is_error=True)
        return
    if config.before_tool_call is not None:
        event = await config.before_tool_call(BeforeToolCallEvent(
            tool.name, item.call.id, item.arguments, tool=tool, assistant_message=assistant,
            parent_tool_call_id=item.parent_id))
        if event.blocked is not None:
            item.result = ToolResult.text(event.blocked.reason, details={}, is_error=True)
            item.result.terminate = event.blocked.terminate
            return
        item.arguments = event.arguments


def _groups(items: list[_Call]) -> list[list[_Call]]:
    """Consecutive concurrency-safe calls form one parallel group; any other call runs alone."""
    groups: list[list[_Call]] = []
    for item in items:
        if _parallel(item) and groups and all(_parallel(g) for g in groups[-1]):
            groups[-1].append(item)
        else:
            groups.append([item])
    return groups


def _parallel(item: _Call) -> bool:
    caps = item.tool.capabilities if item.tool is not None else None
    return caps is not None and caps.concurrency_safe and not caps.sequential


async def _execute(item: _Call, config: LoopConfig, emit: Emit, signal: AbortSignal,
                   also_update: Callable[[ToolResult], object] | None = None) -> None:
    assert item.tool is not None
    updates: asyncio.Queue[ToolResult | None] = asyncio.Queue()
    settled = False

    def on_update(partial: ToolResult) -> None:
        if not settled:  # updates after the call settled are dropped, as in pi
            updates.put_nowait(partial)
            if also_update is not None:
                also_update(partial)

    async def deliver() -> None:
        while (partial := await updates.get()) is not None:
            await emit(ToolExecutionUpdateEvent(item.call.id, item.call.name, item.call.arguments, partial,
                                                parent_tool_call_id=item.parent_id))

    ctx = (config.tool_context(item.call.id, signal, on_update) if config.tool_context
           else ToolContext(item.call.id, cwd=Path.cwd(), signal=signal, on_update=on_update))
    delivery = asyncio.create_task(deliver())
    item.started = time.monotonic()
    result = await _run_tool(item.tool, item.arguments, ctx, signal)
    settled = True
    updates.put_nowait(None)
    await delivery
    item.duration_ms = int((time.monotonic() - item.started) * 1000)
    if config.after_tool_call is not None:
        event = await config.after_tool_call(AfterToolCallEvent(
            item.tool.name, item.call.id, item.arguments, list(result.content), result.details, result.is_error,
            parent_tool_call_id=item.parent_id, terminate=result.terminate))
        result = ToolResult(event.content, event.details, event.is_error, result.structured_content,
                            terminate=event.terminate)
    item.result = result
    await _finish(item, emit)


ABORT_GRACE_SECONDS = 1.0
"""How long a tool may take to clean up (kill its processes) after an abort before it is cancelled."""


async def _run_tool(tool: Tool, arguments: dict[str, Any], ctx: ToolContext, signal: AbortSignal) -> ToolResult:
    """Run a tool; any exception becomes an error result; an abort cancels a tool that ignores it."""
    task = asyncio.ensure_future(tool.run(arguments, ctx))
    aborted = asyncio.ensure_future(signal.wait())
    try:
        await asyncio.wait({task, aborted}, return_when=asyncio.FIRST_COMPLETED)
        if not task.done():
            await asyncio.wait({task}, timeout=ABORT_GRACE_SECONDS)
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            return ToolResult.text("Operation aborted", details={}, is_error=True)
        return task.result()
    except ToolError as exc:
        return ToolResult.text(str(exc), details=exc.details if exc.details is not None else {}, is_error=True)
    except asyncio.CancelledError:
        task.cancel()
        raise
    except Exception as exc:
        return ToolResult.text(str(exc) or type(exc).__name__, details={}, is_error=True)
    finally:
        aborted.cancel()


async def _finish(item: _Call, emit: Emit) -> None:
    assert item.result is not None
    await emit(ToolExecutionEndEvent(item.call.id, item.call.name, item.result, item.result.is_error,
                                     item.duration_ms, parent_tool_call_id=item.parent_id))


def _result_message(item: _Call) -> ToolResultMessage:
    result = item.result or ToolResult([TextContent(text="Tool did not run")], {}, True)
    return ToolResultMessage(tool_call_id=item.call.id, tool_name=item.call.name, content=result.content,
                             details=result.details, is_error=result.is_error, duration_ms=item.duration_ms)


__all__ = ["LoopConfig", "StreamFn", "ToolBatch", "build_context", "run_agent_loop", "run_nested_call", "run_tool_batch",
           "stream_assistant"]
