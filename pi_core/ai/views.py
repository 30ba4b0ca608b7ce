"""Read-only views of stored messages, for building requests without typing every message.

A long session sends tens of thousands of stored messages; validating each into its pydantic model
costs more than everything else a request needs. The built-in providers therefore also accept these
views: msgspec structs with the same attribute names and the same constraints as the models of
:mod:`pi_core.ai.types`, decoded straight from a session line (msgspec validates while it decodes, at
C speed). A line that does not decode as a view is typed the usual way instead, so a view exists only
for a message its model would accept, and it says what the model would.

Converters tell the two apart by ``role`` and ``type`` (both are class attributes of a view), never
by ``isinstance`` against the pydantic classes; a view offers ``text()``, ``tool_calls()`` and
``model_copy(update=...)`` as the models do. Views never leave request building.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, Union

import msgspec

from .types import now_ms

_STRUCT = {"rename": "camel", "frozen": False, "array_like": False}

StopReasonView = Literal["stop", "length", "toolUse", "error", "aborted", "pending"]


class _View(msgspec.Struct, **_STRUCT):  # type: ignore[misc, call-arg]
    def model_copy(self, *, update: dict[str, Any] | None = None) -> Any:
        return msgspec.structs.replace(self, **(update or {}))


class TextView(_View, tag_field="type", tag="text"):  # type: ignore[call-arg]
    type: ClassVar[str] = "text"
    text: str
    text_signature: Union[str, None] = None


class ThinkingView(_View, tag_field="type", tag="thinking"):  # type: ignore[call-arg]
    type: ClassVar[str] = "thinking"
    thinking: str
    thinking_signature: Union[str, None] = None
    redacted: Union[bool, None] = None


class ImageView(_View, tag_field="type", tag="image"):  # type: ignore[call-arg]
    type: ClassVar[str] = "image"
    data: str
    mime_type: str


class ToolCallView(_View, tag_field="type", tag="toolCall"):  # type: ignore[call-arg]
    type: ClassVar[str] = "toolCall"
    id: str
    name: str
    arguments: dict[str, Any] = {}
    thought_signature: Union[str, None] = None


class CostView(_View):
    input: Union[int, float] = 0
    output: Union[int, float] = 0
    cache_read: Union[int, float] = 0
    cache_write: Union[int, float] = 0
    total: Union[int, float] = 0
    total_from_provider: Union[bool, None] = None


class UsageView(_View):
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    reasoning: Union[int, None] = None
    total_tokens: int = 0
    cost: CostView = msgspec.field(default_factory=CostView)


class ToolDeclarationView(_View):
    name: str
    description: str = ""
    parameters: dict[str, Any] = msgspec.field(default_factory=lambda: {"type": "object", "properties": {}})


class NestedCallView(_View):
    id: str
    name: str
    arguments: Union[dict[str, Any], None] = None
    arguments_bytes: Union[int, None] = None
    status: Literal["ok", "error", "unfinished"] = "unfinished"
    duration_ms: Union[int, None] = None
    error: Union[str, None] = None


class NestedCallsView(_View):
    calls: list[NestedCallView] = []
    complete: bool = True


UserContentView = Union[TextView, ImageView]


class UserMessageView(_View, tag_field="role", tag="user"):  # type: ignore[call-arg]
    role: ClassVar[str] = "user"
    content: Union[str, list[UserContentView]]
    timestamp: int = 0


class AssistantMessageView(_View, tag_field="role", tag="assistant"):  # type: ignore[call-arg]
    role: ClassVar[str] = "assistant"
    content: list[Union[TextView, ThinkingView, ToolCallView]] = []
    api: str = ""
    provider: str = ""
    model: str = ""
    usage: UsageView = msgspec.field(default_factory=UsageView)
    stop_reason: StopReasonView = "pending"
    timestamp: int = 0
    response_id: Union[str, None] = None
    raw_stop_reason: Union[str, None] = None
    error_message: Union[str, None] = None
    duration_ms: Union[int, None] = None
    thinking_level: Union[str, None] = None

    def text(self) -> str:
        return "".join(b.text for b in self.content if b.type == "text")

    def tool_calls(self) -> list[Any]:
        return [b for b in self.content if b.type == "toolCall"]


class ToolResultMessageView(_View, tag_field="role", tag="toolResult"):  # type: ignore[call-arg]
    role: ClassVar[str] = "toolResult"
    tool_call_id: str
    tool_name: str
    content: list[UserContentView] = []
    details: msgspec.Raw = msgspec.Raw(b"null")  # any JSON, as the model's ``Any``; never sent
    nested_calls: Union[NestedCallsView, None] = None
    is_error: bool = False
    duration_ms: Union[int, None] = None
    timestamp: int = 0


class SystemMessageView(_View, tag_field="role", tag="system"):  # type: ignore[call-arg]
    role: ClassVar[str] = "system"
    content: Union[str, list[TextView]] = ""
    sections: Union[dict[str, Union[str, None]], None] = None
    timestamp: int = 0
    tools_added: Union[list[ToolDeclarationView], None] = None
    tools_removed: Union[list[dict[str, Any]], None] = None

    def text(self) -> str:
        if isinstance(self.content, str) and self.content:
            return self.content
        if isinstance(self.content, list) and self.content:
            return "\n\n".join(b.text for b in self.content)
        return "\n\n".join(v for v in (self.sections or {}).values() if v)


MessageView = Union[UserMessageView, AssistantMessageView, ToolResultMessageView, SystemMessageView]
VIEW_ROLES = frozenset({"user", "assistant", "toolResult", "system"})


class _EntryView(msgspec.Struct):
    id: Any = None
    message: MessageView | None = None


_decode_entry = msgspec.json.Decoder(_EntryView).decode
_decode_message = msgspec.json.Decoder(MessageView).decode


def entry_message_view(line: Any) -> tuple[Any, Any]:
    """``(id, view)`` of a session line holding a message entry; ``view`` is ``None`` when the message
    does not decode as a view (another role, or something its model may judge differently)."""
    try:
        entry = _decode_entry(line)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return _entry_id(line), None
    return entry.id, entry.message


def _entry_id(line: Any) -> Any:
    try:
        return msgspec.json.decode(line, type=_IdOnly).id
    except (msgspec.ValidationError, msgspec.DecodeError):
        return None


class _IdOnly(msgspec.Struct):
    id: Any = None


def message_view(message: dict[str, Any]) -> Any:
    """The view of a message given as pi's JSON dict, or ``None`` when it does not decode as one."""
    if "details" in message:  # any value is valid there (the model's ``Any``), and it is never sent
        message = {k: v for k, v in message.items() if k != "details"}
    try:
        return msgspec.convert(message, MessageView)
    except msgspec.ValidationError:
        return None


def text_block(text: str) -> TextView:
    return TextView(text=text)


def tool_call_block(call_id: str, name: str, arguments: dict[str, Any]) -> ToolCallView:
    return ToolCallView(id=call_id, name=name, arguments=arguments)


def tool_result_view(call_id: str, name: str, text: str) -> ToolResultMessageView:
    """A failed tool result of one text block (what stands in for a missing result)."""
    return ToolResultMessageView(tool_call_id=call_id, tool_name=name, content=[TextView(text=text)], is_error=True,
                                 timestamp=now_ms())


def is_view(value: Any) -> bool:
    """Whether ``value`` is a view (not a pydantic model)."""
    return isinstance(value, _View)


__all__ = [
    "AssistantMessageView",
    "ImageView",
    "MessageView",
    "SystemMessageView",
    "TextView",
    "ThinkingView",
    "ToolCallView",
    "ToolResultMessageView",
    "UsageView",
    "UserMessageView",
    "VIEW_ROLES",
    "entry_message_view",
    "is_view",
    "message_view",
    "text_block",
    "tool_call_block",
    "tool_result_view",
]
