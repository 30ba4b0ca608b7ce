"""Session-level messages that are not model messages, and their conversion to model input.

A session's context holds, besides pi-ai's ``user``/``assistant``/``toolResult``/``system`` messages,
``bashExecution`` (a shell command the user ran), ``custom`` (a plugin's message) and the synthesized
``branchSummary``/``compactionSummary``. :func:`convert_to_llm` turns all of them into
:mod:`pi_core.ai.types` messages the way pi does: the extra roles become user messages, summaries are
wrapped in ``<summary>`` tags after a one-sentence preamble.
"""

from __future__ import annotations

import weakref

from collections.abc import Iterable
from typing import Annotated, Any, Literal, Union

from pydantic import Discriminator, Field, Tag

from pi_core.ai.types import (
    AssistantMessage,
    Message,
    PiModel,
    SystemMessage,
    TextContent,
    ToolResultMessage,
    UserContent,
    UserMessage,
    now_ms,
)

# The wrapper structure is pi's (a sentence, a colon, a blank line, <summary> ... </summary>; the
# branch suffix has no newline before the closing tag); the sentences are our own.
COMPACTION_SUMMARY_PREFIX = (
    "Earlier turns of this conversation were condensed into the summary below:\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"
BRANCH_SUMMARY_PREFIX = (
    "What follows summarizes a branch of this conversation that was left before coming back here:"
    "\n\n<summary>\n"
)
BRANCH_SUMMARY_SUFFIX = "</summary>"


class BashExecutionMessage(PiModel):
    """A shell command the user ran (``!cmd``; ``!!cmd`` sets ``exclude_from_context``)."""

    role: Literal["bashExecution"] = "bashExecution"
    command: str
    output: str = ""
    exit_code: int | None = None
    cancelled: bool = False
    truncated: bool = False
    full_output_path: str | None = None
    timestamp: int = Field(default_factory=now_ms)
    exclude_from_context: bool | None = None


class CustomMessage(PiModel):
    """A plugin's message in the conversation; the model sees it as a user message."""

    role: Literal["custom"] = "custom"
    custom_type: str
    content: Union[str, list[UserContent]]
    display: bool = True
    details: Any = None
    timestamp: int | None = Field(default_factory=now_ms)


class BranchSummaryMessage(PiModel):
    """Synthesized from a ``branch_summary`` entry; never stored as a message entry."""

    role: Literal["branchSummary"] = "branchSummary"
    summary: str
    from_id: str | None = None
    timestamp: int | None = None


class CompactionSummaryMessage(PiModel):
    """Synthesized from a ``compaction`` entry; never stored as a message entry."""

    role: Literal["compactionSummary"] = "compactionSummary"
    summary: str
    tokens_before: int = 0
    timestamp: int | None = None


class UnknownMessage(PiModel):
    """A message whose role this version does not know; kept as written, never sent to a model."""

    role: str


KNOWN_ROLES = frozenset(
    {"user", "assistant", "toolResult", "system", "bashExecution", "custom", "branchSummary",
     "compactionSummary"}
)


def _role_tag(value: Any) -> str:
    role = value.get("role") if isinstance(value, dict) else getattr(value, "role", None)
    return role if role.__class__ is str and role in KNOWN_ROLES else "unknown"


AgentMessage = Annotated[
    Union[
        Annotated[UserMessage, Tag("user")],
        Annotated[AssistantMessage, Tag("assistant")],
        Annotated[ToolResultMessage, Tag("toolResult")],
        Annotated[SystemMessage, Tag("system")],
        Annotated[BashExecutionMessage, Tag("bashExecution")],
        Annotated[CustomMessage, Tag("custom")],
        Annotated[BranchSummaryMessage, Tag("branchSummary")],
        Annotated[CompactionSummaryMessage, Tag("compactionSummary")],
        Annotated[UnknownMessage, Tag("unknown")],
    ],
    Discriminator(_role_tag),
]
"""Any message a session context can hold (pi's ``AgentMessage``), discriminated on ``role``."""

_ROLE_MODELS: dict[str, type[PiModel]] = {
    "user": UserMessage, "assistant": AssistantMessage, "toolResult": ToolResultMessage, "system": SystemMessage,
    "bashExecution": BashExecutionMessage, "custom": CustomMessage, "branchSummary": BranchSummaryMessage,
    "compactionSummary": CompactionSummaryMessage, "unknown": UnknownMessage,
}


def agent_message(value: Any) -> Any:
    """Validate a message dict (pi's JSON) into its model; models pass through unchanged.

    The model is picked by role, as :data:`AgentMessage` discriminates: each model's validator is built
    the first time a message of its role is read, so a resumed session that only reads its system
    messages at start-up does not build the validators of all nine (~8 ms)."""
    if isinstance(value, PiModel):
        return value
    return _ROLE_MODELS[_role_tag(value)].model_validate(value)


def bash_execution_to_text(message: BashExecutionMessage) -> str:
    """The user-message text a model sees for a shell command: command, fenced output, outcome."""
    text = f"The user ran `{message.command}`\n"
    text += f"```\n{message.output}\n```" if message.output else "(the command printed nothing)"
    if message.cancelled:
        text += "\n\n(the command was cancelled before it finished)"
    elif message.exit_code is not None and message.exit_code != 0:
        text += f"\n\nThe command exited with status {message.exit_code}"
    if message.truncated and message.full_output_path:
        text += f"\n\n[Output truncated; the complete output is in {message.full_output_path}]"
    return text


def _user(text: str, timestamp: int | None) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)], timestamp=timestamp or 0)


_converted: dict[int, tuple[Any, Any]] = {}  # id(message) -> (weak reference to it, model message)


def _to_llm(message: Any) -> Any:
    if isinstance(message, (UserMessage, AssistantMessage, ToolResultMessage, SystemMessage)):
        return message
    # The same session message gives the same model message every turn, so a provider can tell that
    # the start of the conversation has not changed (and reuse what it made of it last time).
    key = id(message)
    known = _converted.get(key)
    if known is not None and known[0]() is message:
        return known[1]
    converted = _convert(message)
    try:
        ref = weakref.ref(message, lambda _, key=key: _converted.pop(key, None))
    except TypeError:
        return converted
    _converted[key] = (ref, converted)
    return converted


def _convert(message: Any) -> Any:
    if isinstance(message, BashExecutionMessage):
        if message.exclude_from_context:
            return None
        return _user(bash_execution_to_text(message), message.timestamp)
    if isinstance(message, CustomMessage):
        content = message.content
        blocks = [TextContent(text=content)] if isinstance(content, str) else list(content)
        return UserMessage(content=blocks, timestamp=message.timestamp or 0)
    if isinstance(message, BranchSummaryMessage):
        text = BRANCH_SUMMARY_PREFIX + message.summary + BRANCH_SUMMARY_SUFFIX
        return _user(text, message.timestamp)
    if isinstance(message, CompactionSummaryMessage):
        text = COMPACTION_SUMMARY_PREFIX + message.summary + COMPACTION_SUMMARY_SUFFIX
        return _user(text, message.timestamp)
    return None


def convert_to_llm(messages: Iterable[Any]) -> list[Message]:
    """Session messages (models or pi-JSON dicts) → model messages, as pi's ``convertToLlm``.

    ``user``/``assistant``/``toolResult``/``system`` pass through; ``bashExecution`` becomes a user
    message (dropped when ``exclude_from_context``); ``custom`` becomes a user message with its content;
    summaries become user messages wrapped in ``<summary>`` tags; unknown roles are dropped.
    """
    from pi_core.ai.message_list import DeferredMessage, MessageList

    if isinstance(messages, MessageList):
        # Stored user/assistant/toolResult/system messages pass through unread: a provider reads them
        # as views (or types them when it iterates); the same item every request, so its turn cache
        # knows them again.
        items: list[Any] = []
        for item in messages.items():
            if isinstance(item, DeferredMessage) and item.role in _LLM_ROLES:
                items.append(item)
                continue
            converted = _to_llm(agent_message(item.typed() if isinstance(item, DeferredMessage) else item))
            if converted is not None:
                items.append(converted)
        return MessageList(items, _LLM_ROLES)  # type: ignore[return-value]
    out: list[Message] = []
    for message in messages:
        converted = _to_llm(agent_message(message))
        if converted is not None:
            out.append(converted)
    return out


_LLM_ROLES = frozenset({"user", "assistant", "toolResult", "system"})


__all__ = [
    "BRANCH_SUMMARY_PREFIX",
    "BRANCH_SUMMARY_SUFFIX",
    "COMPACTION_SUMMARY_PREFIX",
    "COMPACTION_SUMMARY_SUFFIX",
    "AgentMessage",
    "BashExecutionMessage",
    "BranchSummaryMessage",
    "CompactionSummaryMessage",
    "CustomMessage",
    "UnknownMessage",
    "agent_message",
    "bash_execution_to_text",
    "convert_to_llm",
]
