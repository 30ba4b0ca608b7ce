"""Calls that tools make to other tools while they run (``ToolContext.execute_tool``).

The agent loop never sees them: the session runs each through the loop's tool pipeline against the
callable tools (validation, ``before_tool_call``/``after_tool_call``, ``tool_execution_*`` events
with ``parent_tool_call_id``) and keeps a bounded record of them, which becomes ``nested_calls`` on
the calling tool's result message, as pi 1.6 records ``nestedCalls``. Nothing here runs until a
tool calls ``execute_tool``.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..agent.loop import run_nested_call
from ..agent.tools import Tool, ToolCallOutcome, ToolResult, UpdateCallback
from ..ai.abort import AbortSignal
from ..ai.types import AssistantMessage, NestedToolCallRecord, NestedToolCalls, TextContent, ToolCall

if TYPE_CHECKING:
    from .agent_session import AgentSession

MAX_CALLS = 256
MAX_ARGUMENT_BYTES_PER_CALL = 8 * 1024
MAX_ARGUMENT_BYTES_TOTAL = 32 * 1024
MAX_ERROR_CHARS = 500


@dataclass
class CallRecorder:
    """The record of one model-issued call's nested calls (including calls of nested tools)."""

    calls: list[NestedToolCallRecord] = field(default_factory=list)
    complete: bool = True
    argument_bytes: int = 0

    def start(self, call_id: str, name: str, arguments: dict[str, Any]) -> NestedToolCallRecord | None:
        if len(self.calls) >= MAX_CALLS:
            self.complete = False
            return None
        size = len(json.dumps(arguments, ensure_ascii=False, separators=(",", ":"), default=str).encode())
        record = NestedToolCallRecord(id=call_id, name=name, status="unfinished")
        if size > MAX_ARGUMENT_BYTES_PER_CALL or self.argument_bytes + size > MAX_ARGUMENT_BYTES_TOTAL:
            record.arguments_bytes = size
            self.complete = False
        else:
            record.arguments = json.loads(json.dumps(arguments, default=str))
            self.argument_bytes += size
        self.calls.append(record)
        return record

    @staticmethod
    def finish(record: NestedToolCallRecord | None, result: ToolResult, duration_ms: int | None) -> None:
        if record is None:
            return
        record.status = "error" if result.is_error else "ok"
        record.duration_ms = duration_ms
        if result.is_error:
            text = "\n".join(b.text for b in result.content if isinstance(b, TextContent))
            record.error = text[:MAX_ERROR_CHARS] or None

    def snapshot(self) -> NestedToolCalls | None:
        if not self.calls and self.complete:
            return None
        calls = [c.model_copy() for c in self.calls]
        return NestedToolCalls(calls=calls, complete=self.complete and all(c.status != "unfinished" for c in calls))


@dataclass
class _Scope:
    recorder: CallRecorder
    next_id: int = 1
    holds_queue: bool = False


class NestedCalls:
    """One session's nested calls (:class:`pi_core.agent.tools.NestedCaller`)."""

    def __init__(self, session: AgentSession) -> None:
        self._s = session
        self._scopes: dict[str, _Scope] = {}
        self._exclusive = asyncio.Lock()
        """Nested calls of ``sequential`` tools run one at a time; the others concurrently, as in pi."""

    def callable_tools(self) -> list[Tool]:
        active = set(self._s.active_tool_names())
        return [t for t in self._s.host.tools
                if t.exposure == "deferred" or (t.exposure == "direct" and t.name in active)]

    async def execute(self, caller_id: str, name: str, arguments: dict[str, Any], signal: AbortSignal,
                      on_update: UpdateCallback | None) -> ToolCallOutcome:
        scope = self._scopes.setdefault(caller_id, _Scope(CallRecorder()))
        call = ToolCall(id=f"{caller_id}/{scope.next_id}", name=name, arguments=arguments)
        scope.next_id += 1
        record = scope.recorder.start(call.id, name, arguments)
        tools = self.callable_tools()
        tool = next((t for t in tools if t.name == name), None)
        exclusive = not scope.holds_queue and tool is not None and tool.capabilities.sequential
        # a nested call's own nested calls share the record and, when it runs alone, its turn
        self._scopes[call.id] = _Scope(scope.recorder, holds_queue=scope.holds_queue or exclusive)
        started = time.monotonic()
        try:
            if exclusive:
                async with self._exclusive:
                    result, duration = await self._run(call, tools, signal, caller_id, on_update)
            else:
                result, duration = await self._run(call, tools, signal, caller_id, on_update)
        finally:
            del self._scopes[call.id]
        duration = duration if duration is not None else int((time.monotonic() - started) * 1000)
        scope.recorder.finish(record, result, duration)
        return ToolCallOutcome(call.id, name, arguments, result, duration)

    async def _run(self, call: ToolCall, tools: list[Tool], signal: AbortSignal, parent_id: str,
                   on_update: Callable[[ToolResult], object] | None) -> tuple[ToolResult, int | None]:
        agent = self._s.agent
        assistant = next((m for m in reversed(agent.messages) if isinstance(m, AssistantMessage)), None)
        return await run_nested_call(call, tools, assistant, agent.config, agent.emit, signal, parent_id, on_update)

    def take_record(self, tool_call_id: str) -> NestedToolCalls | None:
        """Remove and return the record of the nested calls a model-issued call made."""
        scope = self._scopes.pop(tool_call_id, None)
        return scope.recorder.snapshot() if scope is not None else None

    def clear(self) -> None:
        self._scopes.clear()


__all__ = ["CallRecorder", "NestedCalls"]
