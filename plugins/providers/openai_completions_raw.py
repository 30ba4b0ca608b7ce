"""Chat Completions messages straight from raw views (:mod:`pi_core.ai.raw_views`).

The first request on a long session converts every stored message; this converter builds the wire items
of a turn in one pass, with no intermediate copies of its messages. It follows the handoff rules
(:func:`pi_core.ai.raw_handoff`) and the converter of :mod:`plugins.providers.openai_completions` for what
it takes, and declines (so the turn is converted the usual way) images, a tool call id the protocol
renames, and the dialects that add or reshape messages (thinking as text, an assistant message after tool
results).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pi_core.ai import (
    NO_RESULT,
    DeclineTurn,
    Model,
    RawText,
    RawThinking,
    RawToolCall,
    raw_handoff,
    raw_json_text,
)


def raw_converter(model: Model, compat: dict[str, Any], normalize: Callable[[str], str],
                  reasoning_fields: tuple[str, ...]) -> Callable[[list[Any], int], Any] | None:
    """``raw_turn`` for :meth:`pi_core.ai.TurnCache.convert`, or ``None`` for a dialect it leaves to the
    usual converter. ``normalize``: the protocol's tool call id for an id of another model."""
    if compat["requiresThinkingAsText"] or compat["requiresAssistantAfterToolResult"]:
        return None
    empty = "" if compat["requiresNonNullAssistantContent"] else None
    names = bool(compat["requiresToolResultName"])
    pad = bool(compat["requiresReasoningContentOnAssistantMessages"] and model.reasoning)

    def tool(call_id: str, name: str, body: Any) -> dict[str, Any]:
        item = {"role": "tool", "content": body, "tool_call_id": call_id}
        if names and name:
            item["name"] = name
        return item

    def assistant(message: Any) -> tuple[dict[str, Any] | None, list[Any]]:
        same = message.provider == model.provider and message.api == model.api and message.model == model.id
        texts: list[str] = []
        thinking: list[Any] = []
        calls: list[Any] = []
        items: list[dict[str, Any]] = []
        for block in message.content:
            kind = type(block)
            if kind is RawText:
                if block.text.strip():
                    texts.append(block.text)
            elif kind is RawToolCall:
                arguments = raw_json_text(block.arguments)
                if arguments is None or not same and normalize(block.id) != block.id:
                    raise DeclineTurn
                calls.append(block)
                items.append({"id": block.id, "type": "function", "function": {"name": block.name, "arguments": arguments}})
            elif kind is RawThinking and same and block.thinking.strip():
                thinking.append(block)  # another model's thinking is dropped
        if not texts and not calls:
            return None, calls
        item: dict[str, Any] = {"role": "assistant", "content": "".join(texts) if texts else empty}
        if thinking and thinking[0].thinking_signature in reasoning_fields:
            item[thinking[0].thinking_signature] = "\n".join(b.thinking for b in thinking)
        if calls:
            item["tool_calls"] = items
        if pad and "reasoning_content" not in item:
            item["reasoning_content"] = ""
        return item, calls

    def result(message: Any) -> dict[str, Any]:
        content = message.content
        if len(content) == 1 and type(content[0]) is RawText:
            text = content[0].text
        elif all(type(block) is RawText for block in content):
            text = "\n".join([block.text for block in content])
        else:
            raise DeclineTurn  # an image
        return tool(message.tool_call_id, message.tool_name, text if text.strip() else "(no tool output)")

    def convert(turn: list[Any], offset: int) -> tuple[list[dict[str, Any]], int] | None:
        walked = raw_handoff(turn, assistant, _user, result, lambda call: tool(call.id, call.name, NO_RESULT))
        return None if walked is None else ([item for _, item in walked if item is not None], 0)

    return convert


def _user(message: Any) -> dict[str, Any] | None:
    content = message.content
    if isinstance(content, str):
        return {"role": "user", "content": content}
    parts = []
    for block in content:
        if type(block) is not RawText:
            raise DeclineTurn  # an image
        if block.text:
            parts.append({"type": "text", "text": block.text})
    return {"role": "user", "content": parts} if parts else None
