"""The typed objects that hooks receive and return.

Every event hook takes ``(event, ctx)``. Events are small dataclasses so that the contract grows by
adding fields, never hook arguments (pluggy cannot give new arguments defaults). Hooks that can change
something (chain and first modes) accept either in-place mutation of the event or a returned value;
each event's ``_apply`` says what a returned value means, and whether dispatch stops there.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .ai.types import (
    AssistantMessage,
    ImageContent,
    Message,
    Model,
    ToolDeclaration,
    ToolResultMessage,
)

if TYPE_CHECKING:
    from .agent.tools import Tool, ToolContent, ToolResult
    from .ai.abort import AbortSignal


class _Event:
    """Base of every hook event."""

    def _apply(self, result: Any) -> bool:
        """Take a handler's non-``None`` return value; return True to stop the dispatch."""
        raise TypeError(f"{type(self).__name__} handlers return None, got {type(result).__name__}")


# ---------------------------------------------------------------------------------------------
# decisions handlers return


@dataclass(frozen=True)
class Block:
    """Returned from ``before_tool_call``: do not run the tool; the model gets ``reason`` as an error."""

    reason: str = "Tool call was blocked"


@dataclass(frozen=True)
class Cancel:
    """Returned from a ``session_before_*`` hook: the operation does not happen."""

    reason: str | None = None


@dataclass(frozen=True)
class Handled:
    """Returned from ``input``: the plugin consumed the input; no run starts."""


@dataclass(frozen=True)
class Transform:
    """Returned from ``input``: replace the text (and images) later handlers and the model see."""

    text: str
    images: list[ImageContent] | None = None


@dataclass(frozen=True)
class ToolResultPatch:
    """Returned from ``after_tool_call``: replace the given fields of the result (``None`` = keep)."""

    content: list[ToolContent] | None = None
    details: Any = None
    is_error: bool | None = None


@dataclass(frozen=True)
class CompactionOverride:
    """Returned from ``session_before_compact``: use this summary instead of asking the model."""

    summary: str
    first_kept_entry_id: str | None = None
    details: dict[str, Any] | None = None
    tokens_before: int | None = None
    """Stored as ``tokensBefore`` (default: the preparation's estimate)."""
    usage: Any = None
    """The usage of the plugin's own summary request, if it made one."""


@dataclass(frozen=True)
class TreeOverride:
    """Returned from ``session_before_tree``: supply the branch summary and/or change how it is made."""

    summary: str | None = None
    details: dict[str, Any] | None = None
    custom_instructions: str | None = None
    replace_instructions: bool | None = None
    label: str | None = None


@dataclass(frozen=True)
class ResourcePaths:
    """Returned from ``resources_discover``: extra skill, prompt-template and theme locations (files
    or directories; relative paths resolve against the session's ``cwd``)."""

    skill_paths: list[Path | str] = field(default_factory=list)
    prompt_paths: list[Path | str] = field(default_factory=list)
    theme_paths: list[Path | str] = field(default_factory=list)


@dataclass(frozen=True)
class AgentStartPatch:
    """Returned from ``before_agent_start``: a new system prompt and/or a message to add."""

    system_prompt: str | None = None
    message: Message | None = None


# ---------------------------------------------------------------------------------------------
# model input (chain)


@dataclass
class ContextEvent(_Event):
    """The conversation about to be sent, without the system prompt (a copy; history is untouched)."""

    messages: list[Message]
    model: Model | None = None

    def _apply(self, result: Any) -> bool:
        self.messages = list(result)
        return False


@dataclass
class ContextWithSystemEvent(_Event):
    """The complete request: system prompt, messages and tool declarations, exactly as sent."""

    system_prompt: str
    messages: list[Message]
    tools: list[ToolDeclaration]
    model: Model | None = None

    def _apply(self, result: Any) -> bool:
        for name in ("system_prompt", "messages", "tools"):
            if hasattr(result, name):
                setattr(self, name, getattr(result, name))
        if isinstance(result, list):
            self.messages = result
        return False


@dataclass
class ProviderRequestEvent(_Event):
    """The raw provider payload (a JSON dict) about to be posted."""

    payload: dict[str, Any]
    model: Model

    def _apply(self, result: Any) -> bool:
        self.payload = result
        return False


# ---------------------------------------------------------------------------------------------
# tools


@dataclass
class BeforeToolCallEvent(_Event):
    """A validated tool call about to run. ``arguments`` may be changed in place."""

    tool_name: str
    tool_call_id: str
    arguments: dict[str, Any]
    tool: Tool | None = None
    assistant_message: AssistantMessage | None = None
    blocked: Block | None = None
    parent_tool_call_id: str | None = None
    """Set for a call another tool made (``ToolContext.execute_tool``, e.g. from a codemode script)."""

    def _apply(self, result: Any) -> bool:
        if isinstance(result, Block):
            self.blocked = result
            return True
        if isinstance(result, dict):
            self.arguments = result
            return False
        return super()._apply(result)


@dataclass
class AfterToolCallEvent(_Event):
    """A finished tool call; ``content``, ``details`` and ``is_error`` may be patched."""

    tool_name: str
    tool_call_id: str
    arguments: dict[str, Any]
    content: list[ToolContent]
    details: Any = None
    is_error: bool = False
    parent_tool_call_id: str | None = None
    """Set for a call another tool made (``ToolContext.execute_tool``)."""

    def _apply(self, result: Any) -> bool:
        if not isinstance(result, ToolResultPatch):
            return super()._apply(result)
        if result.content is not None:
            self.content = list(result.content)
        if result.details is not None:
            self.details = result.details
        if result.is_error is not None:
            self.is_error = result.is_error
        return False


# ---------------------------------------------------------------------------------------------
# compaction and branch summary


@dataclass
class SessionBeforeCompactEvent(_Event):
    """A compaction about to ask the model for a summary."""

    preparation: Any
    branch_entries: list[Any]
    custom_instructions: str | None = None
    reason: Literal["manual", "threshold", "overflow"] = "manual"
    will_retry: bool = False
    signal: AbortSignal | None = None
    decision: Cancel | CompactionOverride | None = None

    def _apply(self, result: Any) -> bool:
        if isinstance(result, (Cancel, CompactionOverride)):
            self.decision = result
            return True
        return super()._apply(result)


@dataclass
class SessionCompactEvent(_Event):
    compaction_entry: Any
    from_plugin: bool = False
    reason: str = "manual"
    will_retry: bool = False


@dataclass
class SessionBeforeTreeEvent(_Event):
    """A tree navigation about to happen (and maybe summarise the branch being left)."""

    preparation: Any
    signal: AbortSignal | None = None
    decision: Cancel | TreeOverride | None = None

    def _apply(self, result: Any) -> bool:
        if isinstance(result, (Cancel, TreeOverride)):
            self.decision = result
            return True
        return super()._apply(result)


@dataclass
class SessionTreeEvent(_Event):
    new_leaf_id: str | None
    old_leaf_id: str | None
    summary_entry: Any = None
    from_plugin: bool = False


# ---------------------------------------------------------------------------------------------
# run events


@dataclass
class InputEvent(_Event):
    """User input before it becomes a prompt; ``text``/``images`` may be changed in place."""

    text: str
    images: list[ImageContent] = field(default_factory=list)
    source: Literal["interactive", "rpc", "extension", "print", "sdk"] = "interactive"
    streaming_behavior: Literal["steer", "followUp"] | None = None
    handled: bool = False

    def _apply(self, result: Any) -> bool:
        if isinstance(result, Handled):
            self.handled = True
            return True
        if isinstance(result, Transform):
            self.text = result.text
            if result.images is not None:
                self.images = list(result.images)
            return False
        return super()._apply(result)


@dataclass
class BeforeAgentStartEvent(_Event):
    """Once per prompt, before the run: the system prompt may change, messages may be added.

    ``message_type`` says what starts the run: ``user`` (a prompt, or ``send_user_message``: ``prompt``
    and ``images``) or ``custom`` (``send_message(..., trigger_turn=True)``: the starting ``message``).
    """

    prompt: str
    images: list[ImageContent] = field(default_factory=list)
    system_prompt: str = ""
    messages: list[Message] = field(default_factory=list)
    message_type: Literal["user", "custom"] = "user"
    message: Any = None

    def _apply(self, result: Any) -> bool:
        if not isinstance(result, AgentStartPatch):
            return super()._apply(result)
        if result.system_prompt is not None:
            self.system_prompt = result.system_prompt
        if result.message is not None:
            self.messages.append(result.message)
        return False


@dataclass
class AgentStartEvent(_Event):
    type: str = "agent_start"


@dataclass
class AgentEndEvent(_Event):
    messages: list[Message] = field(default_factory=list)
    will_retry: bool = False
    type: str = "agent_end"


@dataclass
class TurnStartEvent(_Event):
    turn_index: int = 0
    timestamp: int = field(default_factory=lambda: int(time.time() * 1000))
    type: str = "turn_start"


@dataclass
class TurnEndEvent(_Event):
    turn_index: int
    message: Message
    tool_results: list[ToolResultMessage] = field(default_factory=list)
    type: str = "turn_end"


@dataclass
class MessageStartEvent(_Event):
    message: Message
    type: str = "message_start"


@dataclass
class MessageUpdateEvent(_Event):
    message: Message
    assistant_message_event: Any = None
    type: str = "message_update"


@dataclass
class MessageEndEvent(_Event):
    message: Message
    type: str = "message_end"


@dataclass
class ToolExecutionStartEvent(_Event):
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    parent_tool_call_id: str | None = None
    type: str = "tool_execution_start"


@dataclass
class ToolExecutionUpdateEvent(_Event):
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    partial_result: ToolResult
    parent_tool_call_id: str | None = None
    type: str = "tool_execution_update"


@dataclass
class ToolExecutionEndEvent(_Event):
    tool_call_id: str
    tool_name: str
    result: ToolResult
    is_error: bool = False
    duration_ms: int | None = None
    parent_tool_call_id: str | None = None
    type: str = "tool_execution_end"


@dataclass
class ModelSelectEvent(_Event):
    model: Model
    previous_model: Model | None = None
    source: Literal["set", "cycle", "restore"] = "set"


# ---------------------------------------------------------------------------------------------
# session lifecycle


@dataclass
class SessionStartEvent(_Event):
    reason: Literal["startup", "reload", "new", "resume", "fork"] = "startup"
    previous_session_file: Path | None = None


@dataclass
class SessionBeforeSwitchEvent(_Event):
    reason: Literal["new", "resume"]
    target_session_file: Path | None = None
    decision: Cancel | None = None

    def _apply(self, result: Any) -> bool:
        if isinstance(result, Cancel):
            self.decision = result
            return True
        return super()._apply(result)


@dataclass
class SessionBeforeForkEvent(_Event):
    entry_id: str | None
    position: Literal["before", "at"] = "before"
    decision: Cancel | None = None

    def _apply(self, result: Any) -> bool:
        if isinstance(result, Cancel):
            self.decision = result
            return True
        return super()._apply(result)


@dataclass
class SessionShutdownEvent(_Event):
    reason: Literal["quit", "reload", "new", "resume", "fork"] = "quit"
    target_session_file: Path | None = None


@dataclass
class ResourcesDiscoverEvent(_Event):
    cwd: Path
    reason: Literal["startup", "reload"] = "startup"


__all__ = [
    "AfterToolCallEvent",
    "AgentEndEvent",
    "AgentStartEvent",
    "BeforeAgentStartEvent",
    "BeforeToolCallEvent",
    "ContextEvent",
    "ContextWithSystemEvent",
    "InputEvent",
    "MessageEndEvent",
    "MessageStartEvent",
    "MessageUpdateEvent",
    "ModelSelectEvent",
    "ProviderRequestEvent",
    "ResourcesDiscoverEvent",
    "SessionBeforeCompactEvent",
    "SessionBeforeForkEvent",
    "SessionBeforeSwitchEvent",
    "SessionBeforeTreeEvent",
    "SessionCompactEvent",
    "SessionShutdownEvent",
    "SessionStartEvent",
    "SessionTreeEvent",
    "ToolExecutionEndEvent",
    "ToolExecutionStartEvent",
    "ToolExecutionUpdateEvent",
    "TurnEndEvent",
    "TurnStartEvent",
]
