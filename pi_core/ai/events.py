"""The streaming event protocol: what a model stream yields, in pi's shapes.

A stream yields ``start``, then for each content block ``*_start`` → ``*_delta``… → ``*_end``
(text, thinking, toolcall), and ends with exactly one terminal event: ``done`` (stop reason ``stop``,
``length`` or ``toolUse``) or ``error`` (``error`` or ``aborted``). Every event carries ``partial``:
the *live* assistant message being built (the same object in every event, as in pi — copy it if you
keep it). ``to_json()`` gives the event as pi 1.6 prints it in JSON mode (``assistantMessageEvent``
of ``message_update``): no ``partial``, and ``toolcall_start`` names the call's ``id`` and
``toolName``.

Events are small slotted objects rather than pydantic models: a long answer produces one per token.
"""

from __future__ import annotations

from typing import Any, ClassVar

from .types import AssistantMessage, ToolCall


class AssistantMessageEvent:
    """Base of every stream event. ``type`` names the event, ``partial`` is the live message."""

    __slots__ = ("partial",)
    type: ClassVar[str] = ""
    terminal: ClassVar[bool] = False

    def __init__(self, partial: AssistantMessage) -> None:
        self.partial = partial

    def to_json(self) -> dict[str, Any]:
        """The event as pi 1.6's JSON mode shows it."""
        return {"type": self.type}

    def __repr__(self) -> str:
        fields = {k: v for k, v in self.to_json().items() if k not in ("type", "message", "error")}
        return f"{type(self).__name__}({fields})"


class StartEvent(AssistantMessageEvent):
    __slots__ = ()
    type = "start"


class _BlockEvent(AssistantMessageEvent):
    __slots__ = ("content_index",)

    def __init__(self, content_index: int, partial: AssistantMessage) -> None:
        self.content_index = content_index
        self.partial = partial

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "contentIndex": self.content_index}


class _DeltaEvent(AssistantMessageEvent):
    __slots__ = ("content_index", "delta")

    def __init__(self, content_index: int, delta: str, partial: AssistantMessage) -> None:
        self.content_index = content_index
        self.delta = delta
        self.partial = partial

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "contentIndex": self.content_index, "delta": self.delta}


class _EndEvent(AssistantMessageEvent):
    __slots__ = ("content_index", "content")

    def __init__(self, content_index: int, content: str, partial: AssistantMessage) -> None:
        self.content_index = content_index
        self.content = content
        self.partial = partial

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "contentIndex": self.content_index, "content": self.content}


class TextStartEvent(_BlockEvent):
    __slots__ = ()
    type = "text_start"


class TextDeltaEvent(_DeltaEvent):
    __slots__ = ()
    type = "text_delta"


class TextEndEvent(_EndEvent):
    """``content`` is the block's complete text (authoritative; it may differ from the joined deltas)."""

    __slots__ = ()
    type = "text_end"


class ThinkingStartEvent(_BlockEvent):
    __slots__ = ()
    type = "thinking_start"


class ThinkingDeltaEvent(_DeltaEvent):
    __slots__ = ()
    type = "thinking_delta"


class ThinkingEndEvent(_EndEvent):
    __slots__ = ()
    type = "thinking_end"


class ToolCallStartEvent(_BlockEvent):
    __slots__ = ()
    type = "toolcall_start"

    def to_json(self) -> dict[str, Any]:
        call = self.partial.content[self.content_index]
        return {"type": self.type, "contentIndex": self.content_index,
                "id": getattr(call, "id", ""), "toolName": getattr(call, "name", "")}


class ToolCallDeltaEvent(_DeltaEvent):
    """``delta`` is the raw JSON fragment (may be ``""``); the partial call's ``arguments`` is a best-effort
    parse of everything so far (always a dict)."""

    __slots__ = ()
    type = "toolcall_delta"


class ToolCallEndEvent(AssistantMessageEvent):
    __slots__ = ("content_index", "tool_call")
    type = "toolcall_end"

    def __init__(self, content_index: int, tool_call: ToolCall, partial: AssistantMessage) -> None:
        self.content_index = content_index
        self.tool_call = tool_call
        self.partial = partial

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "contentIndex": self.content_index, "toolCall": self.tool_call.to_json()}


class DoneEvent(AssistantMessageEvent):
    """Terminal success. ``message`` is the final message; ``reason`` its stop reason."""

    __slots__ = ("reason",)
    type = "done"
    terminal = True

    def __init__(self, reason: str, message: AssistantMessage) -> None:
        self.reason = reason
        self.partial = message

    @property
    def message(self) -> AssistantMessage:
        return self.partial

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "reason": self.reason, "message": self.partial.to_json()}


class ErrorEvent(AssistantMessageEvent):
    """Terminal failure (``reason`` ``error`` or ``aborted``). pi calls the message ``error``; ``message``
    is the same object. ``status`` and ``retry_after_ms`` are set when an HTTP error caused it."""

    __slots__ = ("reason", "status", "retry_after_ms")
    type = "error"
    terminal = True

    def __init__(self, reason: str, error: AssistantMessage, *, status: int | None = None,
                 retry_after_ms: int | None = None) -> None:
        self.reason = reason
        self.partial = error
        self.status = status
        self.retry_after_ms = retry_after_ms

    @property
    def error(self) -> AssistantMessage:
        return self.partial

    @property
    def message(self) -> AssistantMessage:
        return self.partial

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "reason": self.reason, "error": self.partial.to_json()}


class RetryEvent(AssistantMessageEvent):
    """Not a pi event: emitted by the opt-in retry wrapper between attempts. The failed attempt's
    ``error`` message is attached; the next attempt starts with a fresh ``start`` event."""

    __slots__ = ("attempt", "max_attempts", "delay_ms", "error_message")
    type = "retry"

    def __init__(self, attempt: int, max_attempts: int, delay_ms: int, error: AssistantMessage) -> None:
        self.attempt = attempt
        self.max_attempts = max_attempts
        self.delay_ms = delay_ms
        self.error_message = error.error_message or ""
        self.partial = error

    @property
    def error(self) -> AssistantMessage:
        return self.partial

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "attempt": self.attempt, "maxAttempts": self.max_attempts,
                "delayMs": self.delay_ms, "errorMessage": self.error_message}


__all__ = [
    "AssistantMessageEvent",
    "DoneEvent",
    "ErrorEvent",
    "RetryEvent",
    "StartEvent",
    "TextDeltaEvent",
    "TextEndEvent",
    "TextStartEvent",
    "ThinkingDeltaEvent",
    "ThinkingEndEvent",
    "ThinkingStartEvent",
    "ToolCallDeltaEvent",
    "ToolCallEndEvent",
    "ToolCallStartEvent",
]
