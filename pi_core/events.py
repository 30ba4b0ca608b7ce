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
    from .extensions.mcp_servers import RegisteredMcpServer
    from .ai.abort import AbortSignal
    from .runtime.system_prompt import SystemPromptOptions
    from .session.messages import AgentMessage, CustomMessage


class _Event:
    """Base of every hook event."""

    def _apply(self, result: Any) -> bool:
        """Take a handler's non-``None`` return value; return True to stop the dispatch."""
        raise TypeError(f"{type(self).__name__} handlers return None, got {type(result).__name__}")

    def _after_handler(self) -> None:
        """Called after each handler (chain and first modes): lets an event settle what a handler changed
        in place before the next handler sees it."""


def _pi_dict(result: Any, keys: set[str], event: str) -> dict[str, Any] | None:
    """A pi-style answer (``{"block": True, "reason": ...}``) as snake_case keys, or ``None`` when
    ``result`` is not a dict. A dict with other keys is rejected loudly: a gate must never fail open
    because a handler answered in a shape it did not understand."""
    if not isinstance(result, dict):
        return None
    out = {_snake(k): v for k, v in result.items()}
    unknown = sorted(set(out) - keys)
    if unknown:
        raise TypeError(f"{event} handlers may return a dict with {', '.join(sorted(keys))}; got {', '.join(unknown)}")
    return out


def _snake(key: Any) -> str:
    text = str(key)
    return "".join("_" + c.lower() if c.isupper() else c for c in text)


def _custom_message(value: Any) -> Any:
    """A pi message dict (``{customType, content, display, details}``) as a ``CustomMessage``."""
    if not isinstance(value, dict):
        return value
    from .session.messages import CustomMessage

    data = {_snake(k): v for k, v in value.items()}
    return CustomMessage(custom_type=data.get("custom_type", "plugin"), content=data.get("content", ""),
                         display=bool(data.get("display", True)), details=data.get("details"))


# ---------------------------------------------------------------------------------------------
# decisions handlers return


@dataclass(frozen=True)
class Block:
    """Returned from ``before_tool_call``: do not run the tool; the model gets ``reason`` as an error."""

    reason: str = "Tool call was blocked"
    terminate: bool = False
    """End the run after this batch of tool calls (only when every result of the batch terminates)."""


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
    terminate: bool | None = None


@dataclass(frozen=True)
class TrustDecision:
    """Returned from ``project_trust``: ``yes`` / ``no`` decide (``remember`` stores it), ``undecided``
    lets later handlers and pi's own trust rules decide."""

    trusted: Literal["yes", "no", "undecided"]
    remember: bool = False


@dataclass(frozen=True)
class BoundaryPatch:
    """Returned from ``turn_end`` / ``agent_before_settle``: the entries to append (the whole proposal:
    start from ``event.entries``) and whether to make one more model request. ``None`` keeps the field.

    Entries are dicts as pi writes them: ``{"type": "custom", "customType": ..., "data": ...}``,
    ``{"type": "custom_message", "customType": ..., "content": ..., "display": ...}``,
    ``{"type": "context_edit", "targetId": ..., "replacement": ...}``,
    ``{"type": "compaction", "summary": ..., "firstKeptEntryId": ..., "tokensBefore": ...}``.
    """

    entries: list[dict[str, Any]] | None = None
    continue_: bool | None = None


@dataclass(frozen=True)
class UserBashResult:
    """Returned from ``user_bash``: run the command through ``operations`` (a
    :class:`pi_core.BashOperations`, e.g. over ssh), or record ``result`` (a :class:`pi_core.ShellResult`,
    or a dict ``{output, exitCode, cancelled, truncated}``) without running anything."""

    operations: Any = None
    result: Any = None


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
    """Returned from ``before_agent_start``: a new system prompt and/or a message to add (a plugin's
    :class:`pi_core.CustomMessage`, as pi's ``message: {customType, content, display}``, or a model message)."""

    system_prompt: str | None = None
    message: Message | CustomMessage | None = None


# ---------------------------------------------------------------------------------------------
# model input (chain)


@dataclass
class ContextEvent(_Event):
    """The conversation about to be sent, without the system prompt (a copy; history is untouched). As in pi,
    these are the session's messages before they become model input: plugins' :class:`pi_core.CustomMessage`
    (``custom_type``), bash executions and summaries are still themselves."""

    messages: list[AgentMessage]
    model: Model | None = None

    def _apply(self, result: Any) -> bool:
        data = _pi_dict(result, {"messages"}, "context")
        self.messages = _message_list(data["messages"] if data is not None else result, "context")
        return False


def _message_list(value: Any, hook: str) -> list[Any]:
    """A handler's new message list, refused (``TypeError``) unless it is a list of messages: a string
    or a list of anything else would be sent as garbage."""
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{hook} handlers return a list of messages (or {{'messages': [...]}}), "
                        f"got {type(value).__name__}")
    for item in value:
        role = item.get("role") if isinstance(item, dict) else getattr(item, "role", None)
        if not isinstance(role, str):
            raise TypeError(f"{hook} handlers return a list of messages; one item is a {type(item).__name__}")
    return list(value)


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
        if isinstance(result, dict) and "block" in result and set(result) <= {"block", "reason", "terminate"}:
            if not result["block"]:  # pi's {"block": False}: no decision
                return False
            result = Block(str(result.get("reason") or Block.reason), bool(result.get("terminate", False)))
        if isinstance(result, Block):
            self.blocked = result
            return True
        if isinstance(result, dict):  # new arguments: they must suit the tool, or the answer was not understood
            if self.tool is not None:
                from .agent.validation import ToolArgumentsError, validate_arguments

                try:
                    validate_arguments(self.tool.name, self.tool.parameters, result)
                except ToolArgumentsError as exc:
                    raise TypeError(f"before_tool_call returned a dict that is neither a decision "
                                    f"({{'block': True, 'reason': ...}}) nor arguments {self.tool.name} accepts: "
                                    f"{exc}") from None
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
    terminate: bool = False
    """The result ends the run after this batch (when every result of the batch does)."""

    def _apply(self, result: Any) -> bool:
        data = _pi_dict(result, {"content", "details", "is_error", "terminate"}, "after_tool_call")
        if data is not None:
            result = ToolResultPatch(**data)
        if not isinstance(result, ToolResultPatch):
            return super()._apply(result)
        if result.content is not None:
            self.content = list(result.content)
        if result.details is not None:
            self.details = result.details
        if result.is_error is not None:
            self.is_error = result.is_error
        if result.terminate is not None:
            self.terminate = result.terminate
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
        data = _pi_dict(result, {"cancel", "compaction"}, "session_before_compact")
        if data is not None:
            if data.get("cancel"):
                result = Cancel()
            elif isinstance(data.get("compaction"), dict):
                c = {_snake(k): v for k, v in data["compaction"].items()}
                result = CompactionOverride(c["summary"], c.get("first_kept_entry_id"), c.get("details"),
                                            c.get("tokens_before"), c.get("usage"))
            else:
                return False
        if isinstance(result, (Cancel, CompactionOverride)):
            self.decision = result
            return True
        return super()._apply(result)


@dataclass
class SessionCompactEvent(_Event):
    """A compaction entry was appended (``session_compact``): ``compaction_entry`` is that entry,
    ``from_plugin`` whether a ``session_before_compact`` handler wrote the summary, ``reason`` ``manual``,
    ``threshold`` or ``overflow``, and ``will_retry`` whether the failed request is sent again now."""

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
        data = _pi_dict(result, {"cancel", "summary", "custom_instructions", "replace_instructions", "label"},
                        "session_before_tree")
        if data is not None:
            if data.pop("cancel", False):
                result = Cancel()
            else:
                summary = data.pop("summary", None)
                if isinstance(summary, dict):
                    data["summary"], data["details"] = summary.get("summary"), summary.get("details")
                elif summary is not None:
                    data["summary"] = summary
                result = TreeOverride(**data)
        if isinstance(result, (Cancel, TreeOverride)):
            self.decision = result
            return True
        return super()._apply(result)


@dataclass
class SessionTreeEvent(_Event):
    """The session moved to another point of its tree (``session_tree``): the ``new_leaf_id`` and
    ``old_leaf_id``, the branch summary entry written on the way (``summary_entry``, or ``None``) and whether a
    plugin supplied it (``from_plugin``)."""

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
        data = _pi_dict(result, {"action", "text", "images"}, "input")
        if data is not None:
            action = data.get("action")
            if action == "continue":
                return False
            if action == "handled":
                result = Handled()
            elif action == "transform":
                result = Transform(str(data.get("text", self.text)), data.get("images"))
            else:
                raise TypeError(f"input: unknown action {action!r} (continue, transform or handled)")
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
    ``system_prompt_options`` is what the prompt is built from (pi's ``systemPromptOptions``): a handler
    may add, change or delete named ``sections``; unless a handler set ``system_prompt`` itself, the
    prompt is then built again from the options before the next handler runs, so each handler sees in
    ``system_prompt`` (and ``ctx.get_system_prompt()``) the prompt as the handlers before it left it.
    """

    prompt: str
    images: list[ImageContent] = field(default_factory=list)
    system_prompt: str = ""
    messages: list[Message | CustomMessage] = field(default_factory=list)
    message_type: Literal["user", "custom"] = "user"
    message: Any = None
    system_prompt_options: SystemPromptOptions | None = None
    # set by the session: builds the prompt from (edited) options; the state below tracks handler edits
    _rebuild: Any = field(default=None, init=False, repr=False, compare=False)
    _seen_prompt: str | None = field(default=None, init=False, repr=False, compare=False)
    _seen_sections: dict[str, Any] | None = field(default=None, init=False, repr=False, compare=False)
    _forced: bool = field(default=False, init=False, repr=False, compare=False)

    def _after_handler(self) -> None:
        options = self.system_prompt_options
        if self._rebuild is None or options is None:
            return
        if self._seen_prompt is not None and self.system_prompt != self._seen_prompt:
            self._forced = True  # a handler wrote the prompt: the options no longer decide it
        sections = dict(options.sections)
        if not self._forced and self._seen_sections is not None and sections != self._seen_sections:
            self.system_prompt = self._rebuild(options)
        self._seen_prompt, self._seen_sections = self.system_prompt, sections

    def _apply(self, result: Any) -> bool:
        data = _pi_dict(result, {"system_prompt", "message"}, "before_agent_start")
        if data is not None:
            result = AgentStartPatch(data.get("system_prompt"), _custom_message(data.get("message")))
        if not isinstance(result, AgentStartPatch):
            return super()._apply(result)
        if result.system_prompt is not None:
            self.system_prompt = result.system_prompt
        if result.message is not None:
            self.messages.append(result.message)
        return False


@dataclass
class AgentStartEvent(_Event):
    """A run started: a prompt, a retry or a continuation (``agent_start``)."""

    type: str = "agent_start"


@dataclass
class AgentEndEvent(_Event):
    """A run ended (``agent_end``): ``messages`` are the messages it added; ``will_retry`` is true when an
    automatic retry follows, so the prompt is not over yet (``agent_settled`` says when it is)."""

    messages: list[Message] = field(default_factory=list)
    will_retry: bool = False
    type: str = "agent_end"


@dataclass
class TurnStartEvent(_Event):
    """A turn started (``turn_start``): one model request and the tool calls it asks for. ``turn_index``
    counts from 0 in each run; ``timestamp`` is in milliseconds since the epoch."""

    turn_index: int = 0
    timestamp: int = field(default_factory=lambda: int(time.time() * 1000))
    type: str = "turn_start"


@dataclass
class TurnEndEvent(_Event):
    """A turn ended; the assistant message and tool results are already stored.

    An actionable boundary (pi 0.87+): handlers may propose entries to append (``entries``, the whole
    proposal so far) and ask for one more model request (``continue_``), returning a
    :class:`BoundaryPatch` or pi's ``{"entries": [...], "continue": True}``. ``outcome`` is ``completed``,
    ``error`` or ``aborted`` (the last two never continue).
    """

    turn_index: int
    message: Message
    tool_results: list[ToolResultMessage] = field(default_factory=list)
    type: str = "turn_end"
    message_entry_id: str | None = None
    tool_result_entry_ids: list[str] = field(default_factory=list)
    outcome: Literal["completed", "error", "aborted"] = "completed"
    entries: list[dict[str, Any]] = field(default_factory=list)
    continue_: bool = False

    def _apply(self, result: Any) -> bool:
        return _apply_boundary(self, result, "turn_end")


def _apply_boundary(event: Any, result: Any, hook: str) -> bool:
    data = _pi_dict(result, {"entries", "continue", "continue_"}, hook)
    if data is not None:
        result = BoundaryPatch(data.get("entries"), data.get("continue", data.get("continue_")))
    if not isinstance(result, BoundaryPatch):
        raise TypeError(f"{hook} handlers return None or a BoundaryPatch, got {type(result).__name__}")
    if result.entries is not None:
        event.entries = list(result.entries)
    if result.continue_ is not None:
        event.continue_ = bool(result.continue_)
    return False


@dataclass
class MessageStartEvent(_Event):
    """A message started (``message_start``): a user, assistant, tool-result or custom message; a streamed
    assistant message starts empty and fills in through ``message_update``."""

    message: Message
    type: str = "message_start"


@dataclass
class MessageUpdateEvent(_Event):
    """The assistant message being streamed changed (``message_update``): ``message`` is the partial message
    so far and ``assistant_message_event`` the provider event that changed it (a text, thinking or tool-call
    delta)."""

    message: Message
    assistant_message_event: Any = None
    type: str = "message_update"


@dataclass
class MessageEndEvent(_Event):
    """A message is final. A handler may return a replacement with the same ``role`` (or pi's
    ``{"message": ...}``): later handlers, the session file and the model see the replacement."""

    message: Message
    type: str = "message_end"

    def _apply(self, result: Any) -> bool:
        data = _pi_dict(result, {"message"}, "message_end")
        replacement = data["message"] if data is not None else result
        role = getattr(self.message, "role", None)
        if getattr(replacement, "role", None) != role:
            raise TypeError(f"message_end: the replacement must be a {role} message, got "
                            f"{getattr(replacement, 'role', type(replacement).__name__)}")
        self.message = replacement
        return False


@dataclass
class ToolExecutionStartEvent(_Event):
    """A tool call starts (``tool_execution_start``), before its arguments are validated: ``args`` are the
    model's raw arguments; ``parent_tool_call_id`` is set for a call another tool made."""

    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    parent_tool_call_id: str | None = None
    type: str = "tool_execution_start"


@dataclass
class ToolExecutionUpdateEvent(_Event):
    """A running tool reported partial output (``tool_execution_update``): ``partial_result`` is the result so
    far (the bash tool's output while it runs, say)."""

    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    partial_result: ToolResult
    parent_tool_call_id: str | None = None
    type: str = "tool_execution_update"


@dataclass
class ToolExecutionEndEvent(_Event):
    """A tool call finished (``tool_execution_end``): its ``result``, whether it ``is_error`` and how long it
    took (``duration_ms``). With tools running in parallel the events come in completion order."""

    tool_call_id: str
    tool_name: str
    result: ToolResult
    is_error: bool = False
    duration_ms: int | None = None
    parent_tool_call_id: str | None = None
    type: str = "tool_execution_end"


@dataclass
class McpServersChangeEvent(_Event):
    """The MCP servers plugins registered, after one was registered or unregistered."""

    servers: list[RegisteredMcpServer] = field(default_factory=list)
    type: str = "mcp_servers_change"


@dataclass
class ModelSelectEvent(_Event):
    """The session's model changed (``model_select``). ``source`` is ``set`` (a command, a picker,
    ``ctx.set_model``), ``cycle`` (Ctrl+P through the scoped models) or ``restore`` (a resumed session's model)."""

    model: Model
    previous_model: Model | None = None
    source: Literal["set", "cycle", "restore"] = "set"


# ---------------------------------------------------------------------------------------------
# session lifecycle


@dataclass
class SessionStartEvent(_Event):
    """A session became current (``session_start``): ``reason`` says how (``startup``, ``reload``, ``new``,
    ``resume``, ``fork``); ``previous_session_file`` is the session it replaced, if any."""

    reason: Literal["startup", "reload", "new", "resume", "fork"] = "startup"
    previous_session_file: Path | None = None


@dataclass
class SessionBeforeSwitchEvent(_Event):
    """The user is about to leave this session for a new one or another one (``session_before_switch``):
    ``reason`` is ``new`` or ``resume``, ``target_session_file`` the session to open. Return ``Cancel`` to stay."""

    reason: Literal["new", "resume"]
    target_session_file: Path | None = None
    decision: Cancel | None = None

    def _apply(self, result: Any) -> bool:
        return _apply_cancel(self, result, "session_before_switch")


@dataclass
class SessionBeforeForkEvent(_Event):
    """A fork is about to make a new session from a point of this one (``session_before_fork``): the
    ``entry_id`` of that point and whether the fork is ``before`` or ``at`` it. Return ``Cancel`` to prevent it."""

    entry_id: str | None
    position: Literal["before", "at"] = "before"
    decision: Cancel | None = None

    def _apply(self, result: Any) -> bool:
        return _apply_cancel(self, result, "session_before_fork")


@dataclass
class SessionShutdownEvent(_Event):
    """The session is closing (``session_shutdown``): ``reason`` is ``quit``, ``reload`` or the move that
    replaces it (``new``, ``resume``, ``fork``, with ``target_session_file`` when known). Release resources."""

    reason: Literal["quit", "reload", "new", "resume", "fork"] = "quit"
    target_session_file: Path | None = None


def _apply_cancel(event: Any, result: Any, hook: str) -> bool:
    data = _pi_dict(result, {"cancel", "skip_conversation_restore"}, hook)
    if data is not None:
        if not data.get("cancel"):
            return False
        result = Cancel()
    if isinstance(result, Cancel):
        event.decision = result
        return True
    raise TypeError(f"{hook} handlers return None or Cancel, got {type(result).__name__}")


@dataclass
class ResourcesDiscoverEvent(_Event):
    """pi is collecting skills, prompt templates and themes (``resources_discover``) for the session in
    ``cwd``, at ``startup`` or on ``reload``. Answer with :class:`ResourcePaths`."""

    cwd: Path
    reason: Literal["startup", "reload"] = "startup"


# ---------------------------------------------------------------------------------------------
# hooks pi 0.8x added: trust, settling, the user's shell, provider traffic, thinking, failed compaction


@dataclass
class ProjectTrustEvent(_Event):
    """Before project code and settings load, when the project's trust is not decided yet."""

    cwd: Path
    decision: TrustDecision | None = None

    def _apply(self, result: Any) -> bool:
        data = _pi_dict(result, {"trusted", "remember"}, "project_trust")
        if data is not None:
            result = TrustDecision(data.get("trusted", "undecided"), bool(data.get("remember", False)))
        if not isinstance(result, TrustDecision):
            raise TypeError(f"project_trust handlers return a TrustDecision, got {type(result).__name__}")
        if result.trusted not in ("yes", "no", "undecided"):
            raise TypeError(f"project_trust: trusted must be yes, no or undecided, not {result.trusted!r}")
        if result.trusted == "undecided":
            return False
        self.decision = result
        return True


@dataclass
class AgentBeforeSettleEvent(_Event):
    """The last actionable boundary of a prompt: retries, compaction and queued messages are done.
    Handlers may append entries and ask for one more model request (see :class:`BoundaryPatch`)."""

    messages: list[Any] = field(default_factory=list)
    entries: list[dict[str, Any]] = field(default_factory=list)
    continue_: bool = False

    def _apply(self, result: Any) -> bool:
        return _apply_boundary(self, result, "agent_before_settle")


@dataclass
class UserBashEvent(_Event):
    """The user ran ``!command`` (``!!command``: ``exclude_from_context``)."""

    command: str
    exclude_from_context: bool
    cwd: Path
    decision: UserBashResult | None = None

    def _apply(self, result: Any) -> bool:
        data = _pi_dict(result, {"operations", "result"}, "user_bash")
        if data is not None:
            result = UserBashResult(data.get("operations"), data.get("result"))
        if not isinstance(result, UserBashResult):
            raise TypeError(f"user_bash handlers return a UserBashResult, got {type(result).__name__}")
        if result.operations is None and result.result is None:
            return False
        self.decision = result
        return True


@dataclass
class ProviderHeadersEvent(_Event):
    """The HTTP headers of a provider request; change them in place (a ``None`` value removes one)."""

    headers: dict[str, str | None]
    model: Model | None = None

    def _apply(self, result: Any) -> bool:
        if not isinstance(result, dict):
            return super()._apply(result)
        self.headers = dict(result)
        return False


@dataclass
class ProviderResponseEvent(_Event):
    """A provider answered: the HTTP status and headers, before the body is read."""

    status: int
    headers: dict[str, str]
    model: Model | None = None


@dataclass
class ProviderStreamEvent(_Event):
    """One parsed event of a provider's stream, before pi turns it into message events (read-only)."""

    provider: str
    api: str
    model: str
    data: Any


@dataclass
class ThinkingLevelSelectEvent(_Event):
    """The thinking level changed (``thinking_level_select``): the new ``level`` and the
    ``previous_level``."""

    level: str
    previous_level: str | None = None


@dataclass
class SessionCompactFailedEvent(_Event):
    """A compaction failed or was aborted; the session is as it was."""

    reason: Literal["manual", "threshold", "overflow"] = "manual"
    error_message: str | None = None
    aborted: bool = False
    will_retry: bool = False
    from_plugin: bool = False


__all__ = [
    "AfterToolCallEvent",
    "AgentBeforeSettleEvent",
    "AgentEndEvent",
    "AgentStartEvent",
    "AgentStartPatch",
    "BeforeAgentStartEvent",
    "BeforeToolCallEvent",
    "Block",
    "BoundaryPatch",
    "Cancel",
    "CompactionOverride",
    "ContextEvent",
    "ContextWithSystemEvent",
    "Handled",
    "InputEvent",
    "McpServersChangeEvent",
    "MessageEndEvent",
    "MessageStartEvent",
    "MessageUpdateEvent",
    "ModelSelectEvent",
    "ProjectTrustEvent",
    "ProviderHeadersEvent",
    "ProviderRequestEvent",
    "ProviderResponseEvent",
    "ProviderStreamEvent",
    "ResourcePaths",
    "ResourcesDiscoverEvent",
    "SessionBeforeCompactEvent",
    "SessionBeforeForkEvent",
    "SessionBeforeSwitchEvent",
    "SessionBeforeTreeEvent",
    "SessionCompactEvent",
    "SessionCompactFailedEvent",
    "SessionShutdownEvent",
    "SessionStartEvent",
    "SessionTreeEvent",
    "ThinkingLevelSelectEvent",
    "ToolExecutionEndEvent",
    "ToolExecutionStartEvent",
    "ToolExecutionUpdateEvent",
    "ToolResultPatch",
    "Transform",
    "TreeOverride",
    "TrustDecision",
    "TurnEndEvent",
    "TurnStartEvent",
    "UserBashEvent",
    "UserBashResult",
]
