"""Typed views of session file records (pi's version-3 JSONL).

The store keeps every record as the dict ``json.loads`` gave it (exact round trips, unknown fields kept,
no validation cost at open); these pydantic models are what :meth:`SessionManager.get_entry` and friends
return. Field order is pi's key order per record type, so ``to_json()`` of a model is the line pi would
write: ``type, id, parentId, timestamp, <payload>`` for most entries, but ``custom`` and
``custom_message`` put their payload first. ``parentId`` (and ``context_edit.replacement``) are explicit
``null`` where pi writes null; other unset optionals are left out.
"""

from __future__ import annotations

import functools

from typing import Annotated, Any, ClassVar, Literal, Union

from pydantic import Discriminator, Tag, TypeAdapter, ValidationError

from pi_core.ai.types import (
    ImageContent,
    PiModel,
    SystemMessage,
    TextContent,
    ToolDeclaration,
    Usage,
)

from .messages import AgentMessage

CURRENT_SESSION_VERSION = 3


class SessionHeader(PiModel):
    """The first line of a session file; not a tree node."""

    type: Literal["session"] = "session"
    version: int | None = CURRENT_SESSION_VERSION
    id: str
    timestamp: str
    cwd: str = ""
    parent_session: str | None = None


class SystemSnapshot(PiModel):
    """A compaction's record of the system prompt and tools in force (pi's key order for it)."""

    role: Literal["system"] = "system"
    content: Union[str, list[TextContent]] = ""
    sections: dict[str, str | None] | None = None
    tools_added: list[ToolDeclaration] | None = None
    timestamp: int = 0

    def to_system_message(self) -> SystemMessage:
        """The snapshot as the system message a request starts with."""
        return SystemMessage.model_validate(self.to_json())


class _Entry(PiModel):
    _keep_null: ClassVar[frozenset[str]] = frozenset({"parentId"})

    type: str
    id: str
    parent_id: str | None = None
    timestamp: str


class MessageEntry(_Entry):
    type: Literal["message"] = "message"
    message: AgentMessage


class ThinkingLevelChangeEntry(_Entry):
    type: Literal["thinking_level_change"] = "thinking_level_change"
    thinking_level: str


class ModelChangeEntry(_Entry):
    type: Literal["model_change"] = "model_change"
    provider: str
    model_id: str


class CompactionEntry(_Entry):
    """Everything before ``first_kept_entry_id`` on the path is replaced by ``summary``."""

    type: Literal["compaction"] = "compaction"
    summary: str
    first_kept_entry_id: str | None = None
    tokens_before: int = 0
    details: Any = None
    usage: Usage | None = None
    from_hook: bool | None = None
    system_message: SystemSnapshot | None = None


class BranchSummaryEntry(_Entry):
    """Summary of the branch the leaf came back from; ``from_id`` is that branch's old leaf."""

    type: Literal["branch_summary"] = "branch_summary"
    from_id: str
    summary: str
    details: Any = None
    usage: Usage | None = None
    from_hook: bool | None = None


class CustomEntry(PiModel):
    """A plugin's state; never part of the model's context."""

    _keep_null: ClassVar[frozenset[str]] = frozenset({"parentId"})
    type: Literal["custom"] = "custom"
    custom_type: str
    data: Any = None
    id: str
    parent_id: str | None = None
    timestamp: str


class CustomMessageEntry(PiModel):
    """A plugin's message that is part of the model's context (as a user message)."""

    _keep_null: ClassVar[frozenset[str]] = frozenset({"parentId"})
    type: Literal["custom_message"] = "custom_message"
    custom_type: str
    content: Union[str, list[Annotated[Union[TextContent, ImageContent], Discriminator("type")]]]
    display: bool = True
    details: Any = None
    id: str
    parent_id: str | None = None
    timestamp: str


class LabelEntry(_Entry):
    """Sets (or, with no label, clears) the label of ``target_id``."""

    type: Literal["label"] = "label"
    target_id: str
    label: str | None = None


class SessionInfoEntry(_Entry):
    """Session metadata; ``name`` is the display name (empty clears it)."""

    type: Literal["session_info"] = "session_info"
    name: str | None = None


class UsageEntry(_Entry):
    """Model usage outside the conversation (e.g. cache warming); counted in cost totals only."""

    type: Literal["usage"] = "usage"
    kind: str
    provider: str
    model: str
    usage: Usage
    note: str | None = None


class ContextEditReplacement(PiModel):
    content: Union[str, list[dict[str, Any]]]


class ContextEditEntry(_Entry):
    """Replaces (or with ``replacement=None`` omits) ``target_id``'s contribution to the context."""

    _keep_null: ClassVar[frozenset[str]] = frozenset({"parentId", "replacement"})
    type: Literal["context_edit"] = "context_edit"
    target_id: str
    replacement: ContextEditReplacement | None = None


class UnknownEntry(PiModel):
    """A record of a type this version does not know (or could not validate); kept as written."""

    _keep_null: ClassVar[frozenset[str]] = frozenset({"parentId"})
    type: Any = None
    id: Any = None
    parent_id: Any = None
    timestamp: Any = None


_ENTRY_TYPES: dict[str, type[PiModel]] = {
    "message": MessageEntry,
    "thinking_level_change": ThinkingLevelChangeEntry,
    "model_change": ModelChangeEntry,
    "compaction": CompactionEntry,
    "branch_summary": BranchSummaryEntry,
    "custom": CustomEntry,
    "custom_message": CustomMessageEntry,
    "label": LabelEntry,
    "session_info": SessionInfoEntry,
    "usage": UsageEntry,
    "context_edit": ContextEditEntry,
}


def _entry_tag(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return kind if kind.__class__ is str and kind in _ENTRY_TYPES else "unknown"


SessionEntry = Annotated[
    Union[
        Annotated[MessageEntry, Tag("message")],
        Annotated[ThinkingLevelChangeEntry, Tag("thinking_level_change")],
        Annotated[ModelChangeEntry, Tag("model_change")],
        Annotated[CompactionEntry, Tag("compaction")],
        Annotated[BranchSummaryEntry, Tag("branch_summary")],
        Annotated[CustomEntry, Tag("custom")],
        Annotated[CustomMessageEntry, Tag("custom_message")],
        Annotated[LabelEntry, Tag("label")],
        Annotated[SessionInfoEntry, Tag("session_info")],
        Annotated[UsageEntry, Tag("usage")],
        Annotated[ContextEditEntry, Tag("context_edit")],
        Annotated[UnknownEntry, Tag("unknown")],
    ],
    Discriminator(_entry_tag),
]
"""Any session entry (not the header), discriminated on ``type``."""

@functools.cache
def _session_entry() -> TypeAdapter[Any]:
    """Built on first use: building the validator costs tens of milliseconds at start-up."""
    return TypeAdapter(SessionEntry)


def entry_from_json(raw: dict[str, Any]) -> Any:
    """The typed view of one record; a record that does not validate is an :class:`UnknownEntry`."""
    try:
        return _session_entry().validate_python(raw)
    except ValidationError:
        pass
    try:
        return UnknownEntry.model_validate(raw)
    except ValidationError:  # not even the common fields fit: keep the record as it is
        return UnknownEntry.model_construct(**raw)


def header_from_json(raw: dict[str, Any]) -> SessionHeader:
    return SessionHeader.model_validate(raw)


__all__ = [
    "CURRENT_SESSION_VERSION",
    "BranchSummaryEntry",
    "CompactionEntry",
    "ContextEditEntry",
    "ContextEditReplacement",
    "CustomEntry",
    "CustomMessageEntry",
    "LabelEntry",
    "MessageEntry",
    "ModelChangeEntry",
    "SessionEntry",
    "SessionHeader",
    "SessionInfoEntry",
    "SystemSnapshot",
    "ThinkingLevelChangeEntry",
    "UnknownEntry",
    "UsageEntry",
    "entry_from_json",
    "header_from_json",
]
