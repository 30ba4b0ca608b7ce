"""Anthropic Messages items straight from raw views (:mod:`pi_core.ai.raw_views`).

The first request on a long session converts every stored message; this converter builds the wire items
of a turn in one pass, with no intermediate copies of its messages. It follows the handoff rules
(:func:`pi_core.ai.raw_handoff`) and the converter of :mod:`plugins.providers.anthropic` for what it
takes (consecutive tool results, the synthetic ones included, share one user message), and declines (so
the turn is converted the usual way) images and a tool call id the protocol renames.
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
    raw_object,
    sanitize_id,
)


def raw_converter(model: Model, allow_empty: bool, tool_name: Callable[[str], str]) -> Callable[[list[Any], int], Any]:
    """``raw_turn`` for :meth:`pi_core.ai.TurnCache.convert`. ``allow_empty``: unsigned thinking is sent as
    thinking with an empty signature (else as text); ``tool_name``: the name a tool call is sent under."""

    def assistant(message: Any) -> tuple[dict[str, Any] | None, list[Any]]:
        same = message.provider == model.provider and message.api == model.api and message.model == model.id
        blocks: list[dict[str, Any]] = []
        calls: list[Any] = []
        for block in message.content:
            kind = type(block)
            if kind is RawText:
                if block.text.strip():
                    blocks.append({"type": "text", "text": block.text})
            elif kind is RawToolCall:
                arguments = raw_object(block.arguments)
                if arguments is None or not same and sanitize_id(block.id, 64) != block.id:
                    raise DeclineTurn
                blocks.append({"type": "tool_use", "id": block.id, "name": tool_name(block.name), "input": arguments})
                calls.append(block)
            elif kind is RawThinking and same:  # another model's thinking is dropped
                _thinking(block, blocks, allow_empty)
        return ({"role": "assistant", "content": blocks} if blocks else None), calls

    def convert(turn: list[Any], offset: int) -> tuple[list[dict[str, Any]], int] | None:
        walked = raw_handoff(turn, assistant, _user, _result, _missing)
        if walked is None:
            return None
        out: list[dict[str, Any]] = []
        results: list[dict[str, Any]] | None = None  # consecutive tool results share one user message
        for is_result, item in walked:
            if not is_result:
                results = None
                if item is not None:
                    out.append(item)
            elif results is None:
                results = [item]
                out.append({"role": "user", "content": results})
            else:
                results.append(item)
        return out, 0

    return convert


def _thinking(block: Any, blocks: list[dict[str, Any]], allow_empty: bool) -> None:
    signature = block.thinking_signature
    if block.redacted:
        blocks.append({"type": "redacted_thinking", "data": signature})
    elif signature and signature.strip():
        blocks.append({"type": "thinking", "thinking": block.thinking, "signature": signature})
    elif not block.thinking.strip():
        return
    elif allow_empty:
        blocks.append({"type": "thinking", "thinking": block.thinking, "signature": ""})
    else:  # unsigned thinking (an aborted stream) cannot be replayed as thinking
        blocks.append({"type": "text", "text": block.thinking})


def _result(message: Any) -> dict[str, Any]:
    if not all(type(block) is RawText for block in message.content):
        raise DeclineTurn  # an image
    return {"type": "tool_result", "tool_use_id": message.tool_call_id,
            "content": "\n".join([block.text for block in message.content]), "is_error": message.is_error}


def _missing(call: Any) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call.id, "content": NO_RESULT, "is_error": True}


def _user(message: Any) -> dict[str, Any] | None:
    content = message.content
    if isinstance(content, str):
        return {"role": "user", "content": content} if content.strip() else None
    blocks = []
    for block in content:
        if type(block) is not RawText:
            raise DeclineTurn  # an image
        if block.text.strip():
            blocks.append({"type": "text", "text": block.text})
    return {"role": "user", "content": blocks} if blocks else None
