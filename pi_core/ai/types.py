"""Message, content, usage and model types whose JSON is pi's JSON.

Python attributes are snake_case; the JSON (``to_json()`` / ``model_dump(by_alias=True)``) uses pi's
camelCase names and pi's key order, omits optional fields that are unset (pi writes ``undefined`` by
leaving the key out) and keeps integers integral (pi writes ``0``, not ``0.0``). Unknown fields are kept,
so a message written by a newer pi survives a round trip through this code.
"""

from __future__ import annotations

import time
from typing import Annotated, Any, ClassVar, Literal, Union

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    model_serializer,
)
from pydantic.alias_generators import to_camel

#: A JSON number as pi writes it: integers stay integers, fractions stay floats.
Number = Union[int, float]

StopReason = Literal["stop", "length", "toolUse", "error", "aborted", "pending"]
ThinkingLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]
THINKING_LEVELS: tuple[str, ...] = ("off", "minimal", "low", "medium", "high", "xhigh")


def now_ms() -> int:
    """Milliseconds since the epoch, the unit of every message ``timestamp``."""
    return int(time.time() * 1000)


class PiModel(BaseModel):
    """Base for every serialized pi object.

    Optional fields whose value is ``None`` are left out of the JSON, as pi leaves out ``undefined``.
    Fields that pi writes as an explicit ``null`` declare it in ``_keep_null``.
    """

    model_config = ConfigDict(
        extra="allow",
        defer_build=True,
        alias_generator=to_camel,
        populate_by_name=True,
        serialize_by_alias=True,
        validate_by_name=True,
        validate_by_alias=True,
    )
    _keep_null: ClassVar[frozenset[str]] = frozenset()

    @model_serializer(mode="wrap")
    def _omit_none(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            keep = self._keep_null
            return {k: v for k, v in data.items() if v is not None or k in keep}
        return data

    def to_json(self) -> dict[str, Any]:
        """The JSON-ready dict, exactly as pi would write this object."""
        return self.model_dump(mode="json", by_alias=True)


# ---------------------------------------------------------------------------------------------
# content blocks


class TextContent(PiModel):
    type: Literal["text"] = "text"
    text: str
    text_signature: str | None = None


class ThinkingContent(PiModel):
    type: Literal["thinking"] = "thinking"
    thinking: str
    thinking_signature: str | None = None
    redacted: bool | None = None


class ImageContent(PiModel):
    type: Literal["image"] = "image"
    data: str
    """Base64-encoded image bytes."""
    mime_type: str


class ToolCall(PiModel):
    type: Literal["toolCall"] = "toolCall"
    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    thought_signature: str | None = None


UserContent = Annotated[Union[TextContent, ImageContent], Field(discriminator="type")]
AssistantContent = Annotated[
    Union[TextContent, ThinkingContent, ToolCall], Field(discriminator="type")
]


# ---------------------------------------------------------------------------------------------
# usage


class Cost(PiModel):
    """Cost in USD of one response, per usage bucket."""

    input: Number = 0
    output: Number = 0
    cache_read: Number = 0
    cache_write: Number = 0
    total: Number = 0
    total_from_provider: bool | None = None


class Usage(PiModel):
    """Token counts of one response. ``input`` counts non-cached prompt tokens only."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int | None = None
    total_tokens: int = 0
    cost: Cost = Field(default_factory=Cost)


# ---------------------------------------------------------------------------------------------
# messages


class ToolDeclaration(PiModel):
    """A tool as the model is told about it: name, description and JSON Schema of the arguments."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})


class UserMessage(PiModel):
    role: Literal["user"] = "user"
    content: Union[str, list[UserContent]]
    timestamp: int = Field(default_factory=now_ms)


class AssistantMessage(PiModel):
    role: Literal["assistant"] = "assistant"
    content: list[AssistantContent] = Field(default_factory=list)
    api: str = ""
    provider: str = ""
    model: str = ""
    usage: Usage = Field(default_factory=Usage)
    stop_reason: StopReason = "pending"
    timestamp: int = Field(default_factory=now_ms)
    response_id: str | None = None
    raw_stop_reason: str | None = None
    error_message: str | None = None
    duration_ms: int | None = None
    thinking_level: str | None = None

    def text(self) -> str:
        """All text blocks joined, the way print mode shows an answer."""
        return "".join(b.text for b in self.content if isinstance(b, TextContent))

    def tool_calls(self) -> list[ToolCall]:
        return [b for b in self.content if isinstance(b, ToolCall)]


class NestedToolCallRecord(PiModel):
    """A call a tool made to another tool while it ran (a codemode script's ``tools.x()``)."""

    id: str
    name: str
    arguments: dict[str, Any] | None = None
    """Left out when over the size limits; ``arguments_bytes`` then gives their size."""
    arguments_bytes: int | None = None
    status: Literal["ok", "error", "unfinished"] = "unfinished"
    duration_ms: int | None = None
    error: str | None = None


class NestedToolCalls(PiModel):
    """The bounded record of a tool's nested calls (pi's ``nestedCalls``); results are not kept."""

    calls: list[NestedToolCallRecord] = Field(default_factory=list)
    complete: bool = True
    """False when calls were dropped, arguments left out, or calls had not finished."""


class ToolResultMessage(PiModel):
    role: Literal["toolResult"] = "toolResult"
    tool_call_id: str
    tool_name: str
    content: list[UserContent] = Field(default_factory=list)
    details: Any = None
    nested_calls: NestedToolCalls | None = None
    """Calls this tool made to other tools: kept in the session, never sent to the model."""
    is_error: bool = False
    duration_ms: int | None = None
    timestamp: int = Field(default_factory=now_ms)


class SystemMessage(PiModel):
    """The system prompt as pi 1.6 keeps it in the transcript: named sections and tool changes."""

    role: Literal["system"] = "system"
    content: Union[str, list[TextContent]] = ""
    sections: dict[str, str | None] | None = None
    timestamp: int = Field(default_factory=now_ms)
    tools_added: list[ToolDeclaration] | None = None
    tools_removed: list[dict[str, Any]] | None = None

    def text(self) -> str:
        if isinstance(self.content, str) and self.content:
            return self.content
        if isinstance(self.content, list) and self.content:
            return "\n\n".join(b.text for b in self.content)
        return "\n\n".join(v for v in (self.sections or {}).values() if v)


Message = Annotated[
    Union[UserMessage, AssistantMessage, ToolResultMessage, SystemMessage],
    Field(discriminator="role"),
]


# ---------------------------------------------------------------------------------------------
# models


class ModelCost(PiModel):
    """Prices in USD per million tokens."""

    input: Number = 0
    output: Number = 0
    cache_read: Number = 0
    cache_write: Number = 0


class Model(PiModel):
    id: str
    name: str = ""
    api: str
    provider: str
    base_url: str = ""
    reasoning: bool = False
    input: list[Literal["text", "image"]] = Field(default_factory=lambda: ["text"])
    cost: ModelCost = Field(default_factory=ModelCost)
    context_window: int = 128_000
    max_tokens: int = 16_384
    headers: dict[str, str] | None = None
    compat: dict[str, Any] | None = None
    thinking_level_map: dict[str, str | None] | None = None
    """pi 1.6: thinking level -> provider value (``None`` = level not offered)."""
    sampling_params: dict[str, Any] | None = None
    """pi 1.6: fields merged into every request body (OpenAI-compatible APIs), e.g. ``temperature``."""
    sampling_params_by_thinking_level: dict[str, dict[str, Any]] | None = None
    """pi 1.6: ``sampling_params`` per (clamped) thinking level, merged over ``sampling_params``."""
    input_limits: dict[str, Any] | None = None
    """pi 1.6 ``inputLimits``: ``images.resize`` (``maxWidth``, ``maxHeight``, ``maxBytes``, ``jpegQuality``)
    bounds the images that enter the conversation; the hard request limits are kept, not enforced (as in pi)."""


class Context(PiModel):
    """What one request to a model carries."""

    system_prompt: str | None = None
    messages: list[Message] = Field(default_factory=list)
    tools: list[ToolDeclaration] | None = None


__all__ = [
    "THINKING_LEVELS",
    "AssistantContent",
    "AssistantMessage",
    "Context",
    "Cost",
    "ImageContent",
    "Message",
    "Model",
    "ModelCost",
    "NestedToolCallRecord",
    "NestedToolCalls",
    "Number",
    "PiModel",
    "StopReason",
    "SystemMessage",
    "TextContent",
    "ThinkingContent",
    "ThinkingLevel",
    "ToolCall",
    "ToolDeclaration",
    "ToolResultMessage",
    "Usage",
    "UserContent",
    "UserMessage",
    "now_ms",
]
