"""Cross-provider handoff: make a transcript written by any model acceptable to the target model.

:func:`transform_messages` runs in every provider's message converter (pi's ``transformMessages``):

* a message is "same model" when its ``provider``, ``api`` and ``model`` all equal the target's;
* thinking of another model is dropped, as pi does (its signature is only valid for the model that wrote
  it, and replayed as text the new model would take it for part of the visible reply); same-model
  thinking with a signature is kept even when its text is empty (encrypted reasoning);
* text of another model loses its signature; tool calls of another model lose ``thought_signature`` and
  get their id passed through the provider's normaliser (results follow the renamed id);
* assistant turns that ended in ``error`` or ``aborted`` are skipped (their half-built content would be
  rejected on replay);
* a tool call left without a result gets a synthetic error result (``No result provided``) before the
  next assistant or user message, and at the end of the transcript;
* images sent to a text-only model become a placeholder text.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from typing import Any

from .types import AssistantMessage, Model, TextContent, ToolCall, ToolResultMessage, now_ms
from .views import is_view, text_block, tool_call_block, tool_result_view

NO_RESULT = "No result provided"
IMAGE_PLACEHOLDER = "(image omitted: model does not support images)"
TOOL_IMAGE_PLACEHOLDER = "(tool image omitted: model does not support images)"

#: ``normalize(tool_call_id, target_model, source_message) -> new id``
IdNormalizer = Callable[[str, Model, AssistantMessage], str]
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def short_hash(text: str, length: int = 8) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:length]


def sanitize_id(value: str, max_length: int) -> str:
    """``value`` with characters outside ``[A-Za-z0-9_-]`` replaced by ``_``, at most ``max_length`` long;
    a longer id keeps a prefix plus a hash of the whole, so distinct ids stay distinct."""
    clean = _UNSAFE.sub("_", value)
    if len(clean) <= max_length:
        return clean
    return f"{clean[:max_length - 9]}_{short_hash(value)}"


def is_same_model(message: AssistantMessage, model: Model) -> bool:
    return message.provider == model.provider and message.api == model.api and message.model == model.id


def _text_like(like: Any, text: str) -> Any:
    """A text block of the same kind as ``like`` (a model, or a view of :mod:`pi_core.ai.views`)."""
    if is_view(like):
        return text_block(text)
    return TextContent(text=text)


def _downgrade_images(content: Any, placeholder: str, like: Any) -> Any:
    if isinstance(content, str) or not any(b.type == "image" for b in content):
        return content
    out: list[Any] = []
    for block in content:
        if block.type == "image":
            if not (out and out[-1].type == "text" and out[-1].text == placeholder):
                out.append(_text_like(like, placeholder))
        else:
            out.append(block)
    return out


def _convert_assistant(message: Any, model: Model, normalize: IdNormalizer | None,
                       renamed: dict[str, str]) -> Any:
    if is_same_model(message, model):
        blocks = [b for b in message.content if not (
            b.type == "thinking" and not b.redacted and not b.thinking_signature and not b.thinking.strip())]
        return message if len(blocks) == len(message.content) else message.model_copy(update={"content": blocks})
    view = is_view(message)
    blocks: list[Any] = []
    for block in message.content:
        kind = block.type
        if kind == "thinking":
            continue
        if kind == "text":
            blocks.append(text_block(block.text) if view else TextContent(text=block.text))
        elif kind == "toolCall":
            new_id = normalize(block.id, model, message) if normalize else block.id
            if new_id != block.id:
                renamed[block.id] = new_id
            blocks.append(tool_call_block(new_id, block.name, block.arguments) if view
                          else ToolCall(id=new_id, name=block.name, arguments=block.arguments))
        else:
            blocks.append(block)
    return message.model_copy(update={"content": blocks})


def _first_pass(messages: Sequence[Any], model: Model, normalize: IdNormalizer | None) -> list[Any]:
    text_only = "image" not in model.input
    renamed: dict[str, str] = {}
    out: list[Any] = []
    for message in messages:
        role = getattr(message, "role", None)
        if role == "assistant":
            out.append(_convert_assistant(message, model, normalize, renamed))
        elif role == "toolResult":
            update: dict[str, Any] = {}
            if renamed and message.tool_call_id in renamed:
                update["tool_call_id"] = renamed[message.tool_call_id]
            if text_only:
                content = _downgrade_images(message.content, TOOL_IMAGE_PLACEHOLDER, message)
                if content is not message.content:
                    update["content"] = content
            out.append(message.model_copy(update=update) if update else message)
        elif role == "user" and text_only:
            content = _downgrade_images(message.content, IMAGE_PLACEHOLDER, message)
            out.append(message if content is message.content else message.model_copy(update={"content": content}))
        else:
            out.append(message)
    return out


def _synthetic_result(call: Any) -> Any:
    if is_view(call):  # what is made for a view is a view
        return tool_result_view(call.id, call.name, NO_RESULT)
    return ToolResultMessage(tool_call_id=call.id, tool_name=call.name, content=[TextContent(text=NO_RESULT)],
                             is_error=True, timestamp=now_ms())


def transform_messages(messages: Sequence[Any], model: Model,
                       normalize: IdNormalizer | None = None) -> list[Any]:
    """The transcript ``messages`` made valid for ``model`` (see the module docstring). Inputs are not
    modified. Messages of roles the model layer does not know pass through unchanged.

    Messages are told apart by ``role`` (blocks by ``type``), so the read-only views of
    :mod:`pi_core.ai.views` are accepted beside the models; what is made for a view is a view."""
    result: list[Any] = []
    pending: list[Any] = []
    answered: set[str] = set()
    held: list[Any] = []

    def close_pending() -> None:
        nonlocal pending, answered
        if pending:
            result.extend(_synthetic_result(c) for c in pending if c.id not in answered)
            pending, answered = [], set()
        elif answered:
            answered = set()
        if held:
            result.extend(held)
            held.clear()

    for message in _first_pass(messages, model, normalize):
        role = getattr(message, "role", None)
        if role == "assistant":
            close_pending()
            if message.stop_reason in ("error", "aborted"):
                continue
            pending = message.tool_calls()
            result.append(message)
        elif role == "toolResult":
            answered.add(message.tool_call_id)
            result.append(message)
        elif role == "system" and pending:
            held.append(message)
        elif role == "system":
            result.append(message)
        else:
            close_pending()
            result.append(message)
    close_pending()
    return result


__all__ = [
    "IMAGE_PLACEHOLDER",
    "NO_RESULT",
    "TOOL_IMAGE_PLACEHOLDER",
    "IdNormalizer",
    "is_same_model",
    "sanitize_id",
    "short_hash",
    "transform_messages",
]
