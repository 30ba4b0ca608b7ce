"""Chat Completions messages straight from raw views (:mod:`pi_core.ai.raw_views`).

The first request on a long session converts every stored message; this converter builds the wire items
of a turn in one pass, with no intermediate copies of its messages. It follows the handoff rules (:func:`pi_core.ai.transform_messages`)
and the converter of :mod:`plugins.providers.openai_completions` for what it takes, and declines (returns
``None``, so the turn is converted the usual way) whatever it leaves to them: images, a tool call id the
protocol renames, and the dialects that add or reshape messages (thinking as text, an assistant message
after tool results).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pi_core.ai import (
    NO_RESULT,
    Model,
    RawAssistant,
    RawText,
    RawThinking,
    RawToolCall,
    RawToolResult,
    RawUser,
    raw_json_text,
)

_DROPPED = ("error", "aborted")


def raw_converter(model: Model, compat: dict[str, Any], normalize: Callable[[str], str],
                  reasoning_fields: tuple[str, ...]) -> Callable[[list[Any], int], Any] | None:
    """``raw_turn`` for :meth:`pi_core.ai.TurnCache.convert`, or ``None`` for a dialect it leaves to the
    usual converter. ``normalize``: the protocol's tool call id for an id of another model."""
    if compat["requiresThinkingAsText"] or compat["requiresAssistantAfterToolResult"]:
        return None
    empty = "" if compat["requiresNonNullAssistantContent"] else None
    names = bool(compat["requiresToolResultName"])
    pad = bool(compat["requiresReasoningContentOnAssistantMessages"] and model.reasoning)

    def result(call_id: str, name: str, body: Any) -> dict[str, Any]:
        item = {"role": "tool", "content": body, "tool_call_id": call_id}
        if names and name:
            item["name"] = name
        return item

    def assistant(message: Any) -> tuple[dict[str, Any] | None, list[Any]] | None:
        same = message.provider == model.provider and message.api == model.api and message.model == model.id
        texts: list[str] = []
        thinking: list[Any] = []
        calls: list[dict[str, Any]] = []
        for block in message.content:
            kind = type(block)
            if kind is RawText:
                if block.text.strip():
                    texts.append(block.text)
            elif kind is RawToolCall:
                arguments = raw_json_text(block.arguments)
                if arguments is None or not same and normalize(block.id) != block.id:
                    return None
                calls.append({"id": block.id, "type": "function", "function": {"name": block.name, "arguments": arguments}})
            elif kind is RawThinking and same and block.thinking.strip():
                thinking.append(block)  # another model's thinking is dropped
        if not texts and not calls:
            return None, calls
        item: dict[str, Any] = {"role": "assistant", "content": "".join(texts) if texts else empty}
        if thinking and thinking[0].thinking_signature in reasoning_fields:
            item[thinking[0].thinking_signature] = "\n".join(b.thinking for b in thinking)
        if calls:
            item["tool_calls"] = calls
        if pad and "reasoning_content" not in item:
            item["reasoning_content"] = ""
        return item, calls

    def unanswered(pending: list[dict[str, Any]], answered: set[str]) -> list[dict[str, Any]]:
        return [result(c["id"], c["function"]["name"], NO_RESULT) for c in pending if c["id"] not in answered]

    def convert(turn: list[Any], offset: int) -> tuple[list[dict[str, Any]], int] | None:
        out: list[dict[str, Any]] = []
        pending: list[dict[str, Any]] = []  # the last assistant message's calls
        answered: set[str] = set()
        for message in turn:
            kind = type(message)
            if kind is RawToolResult:
                content = message.content
                if len(content) == 1 and type(content[0]) is RawText:
                    text = content[0].text
                elif all(type(block) is RawText for block in content):
                    text = "\n".join([block.text for block in content])
                else:
                    return None
                out.append(result(message.tool_call_id, message.tool_name, text if text.strip() else "(no tool output)"))
                if pending:
                    answered.add(message.tool_call_id)
                continue
            if pending:
                out += unanswered(pending, answered)
                pending, answered = [], set()
            if kind is RawAssistant:
                converted = assistant(message)  # a failed answer's renamed ids still rename its results
                if converted is None:
                    return None
                if message.stop_reason in _DROPPED:
                    continue
                item, pending = converted
            else:
                item = _user(message)
                if item is False:
                    return None
            if item is not None:
                out.append(item)
        if pending:
            out += unanswered(pending, answered)
        return out, 0

    return convert


def _user(message: Any) -> Any:
    """The item of a user message, ``None`` for none, ``False`` to decline it (an image)."""
    content = message.content
    if isinstance(content, str):
        return {"role": "user", "content": content}
    parts = []
    for block in content:
        if type(block) is not RawText:
            return False
        if block.text:
            parts.append({"type": "text", "text": block.text})
    return {"role": "user", "content": parts} if parts else None
